"""The plot of a smart-charging run (docs/img/smart-charging.png): the grid current stacked from
the base load and each car's draw under the grid limit, the status endpoint's state, and one lane
per connector with the limit it held; drawn with png_plot.py, the standard library only.
"""

import math

import png_plot
from sim_scenario import END_AT, EPSILON

PALETTE = [
    (31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
    (140, 86, 75), (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207),
]
EVENT_LABELS = {
    "arrivals": "10 CARS ARRIVE",
    "base load step": "BASE 55 A",
    "departures": "4 LEAVE",
    "base load drop": "BASE 20 A",
    "meter stops": "METER QUIET",
    "meter returns": "METER BACK",
}
STATE_COLORS = {"balancing": (120, 190, 120), "fail_safe": (220, 80, 70), "idle": (190, 190, 190)}


def plot(path, sim):
    rows = [r for r in sim.rows if r["t"] <= END_AT]
    settings = sim.settings
    grid_limit = float(settings["grid_limit_amps"])
    margin = float(settings["safety_margin_amps"])
    fail_safe = float(settings["fail_safe_amps"])
    min_amps = float(settings["min_amps"])
    identities = [ev.identity for ev in sim.evs]
    lane_height = 40
    lanes_top = 556
    lanes_bottom = lanes_top + lane_height * len(identities)
    width, height = 1440, lanes_bottom + 76
    canvas = png_plot.Canvas(width, height)
    left, right = 90, 1090
    grey = (60, 60, 60)
    title = (
        f"SMART CHARGING, EQUAL SHARES: {len(identities)} CHARGERS, GRID LIMIT {grid_limit:g} A, "
        f"MARGIN {margin:g} A, MIN {min_amps:g} A, FAIL-SAFE {fail_safe:g} A"
    )
    canvas.text(left - 60, 16, title, png_plot.BLACK, 2)
    xs = [r["t"] for r in rows]
    x_range = (0.0, END_AT)

    # Top: the grid, stacked: base load, then what each car draws; the limit and the margin.
    peak = max([r["grid"] for r in rows] + [grid_limit])
    y_step = png_plot.nice_step(peak * 1.1, 7)
    y_top = y_step * math.ceil(peak * 1.1 / y_step)
    top = png_plot.Axes(canvas, left, 90, right, 470, x_range, (0, y_top))
    top.frame(5, y_step, x_labels=False)
    heading = "GRID CURRENT, A (HIGHEST PHASE): BASE LOAD + EACH CAR'S DRAW, STACKED"
    canvas.text(left, 66, heading, grey)
    lows = [0.0] * len(rows)
    layers = [("BASE LOAD", [r["base"] for r in rows], (170, 170, 170))]
    for n, identity in enumerate(identities):
        draws = [r["draws"][identity] or 0.0 for r in rows]
        layers.append((identity, draws, PALETTE[n % len(PALETTE)]))
    pixel_xs = [top.px(x) for x in xs] + [top.px(END_AT)]
    for _, values, color in layers:
        highs = [lo + v for lo, v in zip(lows, values)]
        canvas.fill_between(
            pixel_xs,
            [top.py(v) for v in lows] + [0],
            [top.py(v) for v in highs] + [0],
            png_plot.lighten(color, 0.45),
        )
        lows = highs
    top.hline(grid_limit, (200, 0, 0), 3)
    top.hline(grid_limit - margin, (230, 140, 0), 2, dash=(8, 6))
    top.curve(xs, [r["grid"] for r in rows], png_plot.BLACK, 3)

    # The status endpoint's state, as polled.
    strip_top, strip_bottom = 482, 500
    canvas.text(left - 80, strip_top + 2, "STATE", grey)
    polls = [(t, s) for t, s, _ in sim.polls if t <= END_AT]
    for i, (t, state) in enumerate(polls):
        t_next = polls[i + 1][0] if i + 1 < len(polls) else END_AT
        color = STATE_COLORS.get(state, (235, 235, 235))
        canvas.rect(top.px(t), strip_top, top.px(t_next), strip_bottom, color)
    canvas.line(left, strip_top, right, strip_top, (160, 160, 160))
    canvas.line(left, strip_bottom, right, strip_bottom, (160, 160, 160))

    # Bottom: one lane per connector, the limit it holds as a bar (its value written in).
    held = [lim for r in rows for lim in r["limits"].values() if lim is not None]
    lane_max = max(held + [fail_safe])
    lanes = png_plot.Axes(canvas, left, lanes_top, right, lanes_bottom, x_range, (0, 1))
    lanes.frame(5, None)
    canvas.text(
        left, lanes_top - 24,
        f"EACH CONNECTOR'S LIMIT, A (BAR HEIGHT 0 TO {lane_max:g} A; RED: PAUSED AT 0 A)", grey,
    )
    for n, identity in enumerate(identities):
        color = PALETTE[n % len(PALETTE)]
        # The value is written in the lane's top 16 pixels, the bar is drawn below.
        floor = lanes_top + (n + 1) * lane_height - 3
        full = lane_height - 20
        canvas.line(left, floor + 3, right, floor + 3, (200, 200, 200))
        for start, end, limit, charging in segments(rows, identity):
            x0, x1 = lanes.px(start), lanes.px(end)
            if not charging:
                continue
            if limit is None:
                canvas.rect(x0, floor - full, x1, floor, (215, 215, 215))
                label = "NO LIMIT"
            elif limit <= EPSILON:
                canvas.rect(x0, floor - 4, x1, floor, (200, 40, 40))
                label = "0"
            else:
                bar = max(2, round(min(limit, lane_max) / lane_max * full))
                canvas.rect(x0, floor - bar, x1, floor, png_plot.lighten(color, 0.5))
                canvas.line(x0, floor - bar, x1, floor - bar, color, 2)
                label = f"{limit:.1f}".rstrip("0").rstrip(".")
            if x1 - x0 >= png_plot.text_width(label) + 8:
                canvas.text(x0 + 4, floor - full - 15, label, png_plot.BLACK)
    for x in range(0, int(END_AT) + 1, 5):
        text = str(x)
        px = lanes.px(x)
        canvas.text(px - png_plot.text_width(text) / 2, lanes_bottom + 10, text, grey)
    label = "TIME (S)"
    canvas.text((left + right) / 2 - png_plot.text_width(label) / 2, lanes_bottom + 40, label)

    # The events, across both panels.
    for n, event in enumerate(sim.events):
        for axes in (top, lanes):
            axes.vline(event["at"], (90, 90, 90), 1, dash=(6, 5))
        text = EVENT_LABELS.get(event["name"], event["name"])
        canvas.text(top.px(event["at"]) + 4, 96 + (n % 2) * 18, text, (40, 40, 40))

    # Legends, right of the panels.
    legend_x = right + 30
    y = 96
    for text, color, dash in (
        ("GRID CURRENT", png_plot.BLACK, None),
        ("GRID LIMIT", (200, 0, 0), None),
        ("LIMIT - MARGIN", (230, 140, 0), (8, 6)),
    ):
        canvas.line(legend_x, y + 6, legend_x + 28, y + 6, color, 3, dash)
        canvas.text(legend_x + 36, y, text)
        y += 24
    y += 8
    for text, _, color in layers:
        canvas.rect(legend_x, y, legend_x + 28, y + 13, png_plot.lighten(color, 0.45))
        canvas.text(legend_x + 36, y, text)
        y += 22
    y += 8
    canvas.text(legend_x, y, "STATE (REST)")
    y += 22
    for state, color in STATE_COLORS.items():
        canvas.rect(legend_x, y, legend_x + 28, y + 13, color)
        canvas.text(legend_x + 36, y, state.replace("_", "-"))
        y += 22
    for n, ev in enumerate(sim.evs):
        y = lanes_top + n * lane_height + (lane_height - 14) // 2
        swatch = png_plot.lighten(PALETTE[n % len(PALETTE)], 0.5)
        canvas.rect(legend_x, y, legend_x + 28, y + 13, swatch)
        # A 2.0.1 station of a mixed site (ocpp201_smart.py) says so.
        rating = f"MAX {ev.connector_max:g} A"
        if getattr(ev, "subprotocol", None) == "ocpp2.0.1":
            rating = f"{ev.connector_max:g} A, 2.0.1"
        canvas.text(legend_x + 36, y, f"{ev.identity} ({rating})")
    canvas.save(path)


def segments(rows, identity):
    """(start, end, limit, charging) spans over which a connector's limit held."""
    spans = []
    for i, row in enumerate(rows):
        end = rows[i + 1]["t"] if i + 1 < len(rows) else END_AT
        limit = row["limits"][identity]
        charging = row["draws"][identity] is not None
        key = (None if limit is None else round(limit, 2), charging)
        if spans and (spans[-1][2], spans[-1][3]) == key:
            spans[-1][1] = end
        else:
            spans.append([row["t"], end, key[0], charging])
    return spans

