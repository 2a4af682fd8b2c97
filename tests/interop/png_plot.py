"""A tiny raster plotter with no dependency beyond the standard library: an RGB canvas, lines
(solid or dashed, of a given width), filled rectangles and polygons under a curve, text in a 5x7
bitmap font, and a PNG writer (zlib + struct). It draws what tests/interop/smart_charging_sim.py
plots (docs/smart-charging.png); nothing more general is meant.
"""

import struct
import zlib

# 5x7 glyphs, one string of 5 cells per row, '#' lit. Lower case is drawn as upper case.
FONT = {
    " ": (".....", ".....", ".....", ".....", ".....", ".....", "....."),
    "0": (".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."),
    "1": ("..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "2": (".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"),
    "3": ("#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."),
    "4": ("...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."),
    "5": ("#####", "#....", "####.", "....#", "....#", "#...#", ".###."),
    "6": ("..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."),
    "7": ("#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."),
    "8": (".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."),
    "9": (".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."),
    "A": (".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"),
    "B": ("####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."),
    "C": (".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."),
    "D": ("###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."),
    "E": ("#####", "#....", "#....", "####.", "#....", "#....", "#####"),
    "F": ("#####", "#....", "#....", "####.", "#....", "#....", "#...."),
    "G": (".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"),
    "H": ("#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"),
    "I": (".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "J": ("..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."),
    "K": ("#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"),
    "L": ("#....", "#....", "#....", "#....", "#....", "#....", "#####"),
    "M": ("#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"),
    "N": ("#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"),
    "O": (".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."),
    "P": ("####.", "#...#", "#...#", "####.", "#....", "#....", "#...."),
    "Q": (".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"),
    "R": ("####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"),
    "S": (".####", "#....", "#....", ".###.", "....#", "....#", "####."),
    "T": ("#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."),
    "U": ("#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."),
    "V": ("#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."),
    "W": ("#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."),
    "X": ("#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"),
    "Y": ("#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."),
    "Z": ("#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"),
    ".": (".....", ".....", ".....", ".....", ".....", ".##..", ".##.."),
    ",": (".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."),
    "-": (".....", ".....", ".....", "#####", ".....", ".....", "....."),
    ":": (".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."),
    ";": (".....", ".##..", ".##..", ".....", ".##..", "..#..", ".#..."),
    "(": ("...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."),
    ")": (".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."),
    "/": (".....", "....#", "...#.", "..#..", ".#...", "#....", "....."),
    "%": ("##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##"),
    "+": (".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."),
    "=": (".....", ".....", "#####", ".....", "#####", ".....", "....."),
    ">": (".#...", "..#..", "...#.", "....#", "...#.", "..#..", ".#..."),
    "<": ("...#.", "..#..", ".#...", "#....", ".#...", "..#..", "...#."),
    "_": (".....", ".....", ".....", ".....", ".....", ".....", "#####"),
    "'": ("..#..", "..#..", ".#...", ".....", ".....", ".....", "....."),
    "?": (".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."),
}

WHITE = (255, 255, 255)
BLACK = (0, 0, 0)


def lighten(color, amount):
    """`color` mixed with white: 0 leaves it, 1 makes it white."""
    return tuple(round(c + (255 - c) * amount) for c in color)


class Canvas:
    def __init__(self, width, height, background=WHITE):
        self.width = width
        self.height = height
        self.pixels = bytearray(bytes(background) * (width * height))

    def dot(self, x, y, color):
        if 0 <= x < self.width and 0 <= y < self.height:
            at = (y * self.width + x) * 3
            self.pixels[at : at + 3] = bytes(color)

    def rect(self, x0, y0, x1, y1, color):
        """Fills [x0, x1] x [y0, y1] (inclusive, in any order)."""
        x0, x1 = sorted((round(x0), round(x1)))
        y0, y1 = sorted((round(y0), round(y1)))
        x0, x1 = max(x0, 0), min(x1, self.width - 1)
        if x0 > x1:
            return
        row = bytes(color) * (x1 - x0 + 1)
        for y in range(max(y0, 0), min(y1, self.height - 1) + 1):
            at = (y * self.width + x0) * 3
            self.pixels[at : at + len(row)] = row

    def line(self, x0, y0, x1, y1, color, width=1, dash=None):
        """A line `width` pixels thick; `dash` = (on, off) in pixels along it."""
        x0, y0, x1, y1 = round(x0), round(y0), round(x1), round(y1)
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx = 1 if x0 < x1 else -1
        sy = 1 if y0 < y1 else -1
        error = dx + dy
        step = 0
        low = -((width - 1) // 2)
        high = width // 2
        while True:
            if dash is None or step % (dash[0] + dash[1]) < dash[0]:
                self.rect(x0 + low, y0 + low, x0 + high, y0 + high, color)
            if x0 == x1 and y0 == y1:
                return
            step += 1
            doubled = 2 * error
            if doubled >= dy:
                error += dy
                x0 += sx
            if doubled <= dx:
                error += dx
                y0 += sy

    def polyline(self, points, color, width=1, dash=None):
        for (x0, y0), (x1, y1) in zip(points, points[1:]):
            self.line(x0, y0, x1, y1, color, width, dash)

    def fill_between(self, xs, lows, highs, color):
        """Fills, column by column, between two curves sampled at increasing pixel columns xs."""
        for i in range(len(xs) - 1):
            x_from, x_to = round(xs[i]), round(xs[i + 1])
            for x in range(x_from, max(x_from + 1, x_to)):
                self.rect(x, lows[i], x, highs[i], color)

    def text(self, x, y, text, color=BLACK, scale=2):
        """Draws `text` with its top left corner at (x, y); returns its width in pixels."""
        x, y = round(x), round(y)
        for n, char in enumerate(text.upper()):
            glyph = FONT.get(char, FONT["?"])
            left = x + n * 6 * scale
            for row, cells in enumerate(glyph):
                for column, cell in enumerate(cells):
                    if cell == "#":
                        cx = left + column * scale
                        cy = y + row * scale
                        self.rect(cx, cy, cx + scale - 1, cy + scale - 1, color)
        return text_width(text, scale)

    def png(self):
        """The canvas as PNG bytes: 8-bit RGB, no interlace, filter 0 on every row."""
        stride = self.width * 3
        raw = b"".join(
            b"\x00" + bytes(self.pixels[y * stride : (y + 1) * stride])
            for y in range(self.height)
        )

        def chunk(kind, data):
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b"")
        )

    def save(self, path):
        with open(path, "wb") as out:
            out.write(self.png())


def text_width(text, scale=2):
    return max(0, len(text) * 6 * scale - scale)


def nice_step(span, ticks=6):
    """A round step (1, 2 or 5 times a power of ten) that cuts `span` into about `ticks`."""
    raw = span / max(ticks, 1)
    power = 1.0
    while power * 10 <= raw:
        power *= 10
    while power > raw:
        power /= 10
    for factor in (1, 2, 5, 10):
        if power * factor >= raw:
            return power * factor
    return power * 10


def format_tick(value):
    return str(int(round(value))) if abs(value - round(value)) < 1e-9 else f"{value:g}"


class Axes:
    """A plot area on a canvas: data coordinates to pixels, a frame, grid lines and ticks."""

    def __init__(self, canvas, left, top, right, bottom, x_range, y_range):
        self.canvas = canvas
        self.left, self.top, self.right, self.bottom = left, top, right, bottom
        self.x_min, self.x_max = x_range
        self.y_min, self.y_max = y_range

    def px(self, x):
        span = self.x_max - self.x_min
        return self.left + (x - self.x_min) / span * (self.right - self.left)

    def py(self, y):
        y = min(max(y, self.y_min), self.y_max)
        span = self.y_max - self.y_min
        return self.bottom - (y - self.y_min) / span * (self.bottom - self.top)

    def frame(self, x_step, y_step=None, x_labels=True):
        """The frame, grid lines every `x_step` and `y_step` (none across when None), ticks."""
        canvas = self.canvas
        grid = (225, 225, 225)
        y = self.y_min
        while y_step is not None and y <= self.y_max + 1e-9:
            py = self.py(y)
            canvas.line(self.left, py, self.right, py, grid)
            label = format_tick(y)
            canvas.text(self.left - 8 - text_width(label), py - 7, label, (60, 60, 60))
            y += y_step
        x = self.x_min
        while x <= self.x_max + 1e-9:
            px = self.px(x)
            canvas.line(px, self.top, px, self.bottom, grid)
            canvas.line(px, self.bottom, px, self.bottom + 5, BLACK)
            if x_labels:
                label = format_tick(x)
                canvas.text(px - text_width(label) / 2, self.bottom + 10, label, (60, 60, 60))
            x += x_step
        canvas.line(self.left, self.top, self.left, self.bottom, BLACK)
        canvas.line(self.left, self.bottom, self.right, self.bottom, BLACK)
        canvas.line(self.right, self.top, self.right, self.bottom, (160, 160, 160))
        canvas.line(self.left, self.top, self.right, self.top, (160, 160, 160))

    def curve(self, xs, ys, color, width=2, dash=None):
        """A step curve: each value holds until the next sample (None leaves a gap)."""
        points = []
        for i, (x, y) in enumerate(zip(xs, ys)):
            if y is None:
                self.canvas.polyline(points, color, width, dash)
                points = []
                continue
            px, py = self.px(x), self.py(y)
            if points and round(points[-1][1]) != round(py):
                points.append((px, points[-1][1]))
            points.append((px, py))
            if i + 1 < len(xs):
                points.append((self.px(xs[i + 1]), py))
        self.canvas.polyline(points, color, width, dash)

    def hline(self, y, color, width=1, dash=None):
        py = self.py(y)
        self.canvas.line(self.left, py, self.right, py, color, width, dash)

    def vline(self, x, color, width=1, dash=None):
        px = self.px(x)
        self.canvas.line(px, self.top, px, self.bottom, color, width, dash)
