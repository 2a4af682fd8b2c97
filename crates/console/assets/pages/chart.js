// A time chart drawn with the vendored uPlot, for the session and smart-charging pages. The
// canvas is hidden from assistive technology: each page puts the same figures in a table.

import uPlot from "../vendor/uplot/uPlot.esm.js";
import { h } from "../dom.js";

function loadCss() {
  if (document.querySelector('link[data-uplot]')) return;
  document.head.append(h("link", { rel: "stylesheet", href: "/console/vendor/uplot/uPlot.min.css", "data-uplot": true }));
}

/** Colours with at least 3:1 contrast on white (WCAG's for graphics). */
export const COLOURS = ["#0b57d0", "#a40e26", "#116329", "#7d4e00", "#6f42c1", "#1b1f24"];

/** A chart of `series` (`[{label, scale, unit}]`) over time, in `container`, labelled
 * `title`. `data` is uPlot's: `[times in seconds, values of series 1, ...]`. Returns the
 * chart (`setData` to update it) with `destroy`. */
export function timeChart(container, title, series, data) {
  loadCss();
  const box = h("div", { class: "chart", role: "img", "aria-label": title });
  container.append(box);
  const scales = [...new Set(series.map((s) => s.scale))];
  const options = {
    width: Math.max(320, container.clientWidth || 800),
    height: 280,
    legend: { show: false },
    // One point alone would stretch the time axis over years: show the minutes around it.
    scales: { x: { time: true, range: (u, min, max) => (min === max ? [min - 300, max + 60] : [min, max]) } },
    series: [{}, ...series.map((s, i) => ({
      label: s.label, scale: s.scale, stroke: s.colour || COLOURS[i % COLOURS.length], width: 2,
      paths: s.steps ? uPlot.paths.stepped({ align: 1 }) : undefined,
    }))],
    axes: [{}, ...scales.map((scale, i) => ({
      scale, side: i === 0 ? 3 : 1, label: scale, grid: { show: i === 0 },
    }))],
  };
  const chart = new uPlot(options, data, box);
  const resize = () => chart.setSize({ width: Math.max(320, container.clientWidth || 800), height: 280 });
  window.addEventListener("resize", resize);
  const destroy = chart.destroy.bind(chart);
  chart.destroy = () => { window.removeEventListener("resize", resize); destroy(); };
  return chart;
}

/** A legend the reader can see and a screen reader can read: each series' colour and name. */
export function legend(series) {
  return h("ul", { class: "legend" }, series.map((s, i) => {
    const swatch = h("span", { class: "swatch", "aria-hidden": "true" });
    swatch.style.background = s.colour || COLOURS[i % COLOURS.length];
    return h("li", {}, swatch, s.label);
  }));
}
