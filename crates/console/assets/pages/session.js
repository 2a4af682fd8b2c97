// A session: its energy, cost (with each priced component), id tag, and its energy and power
// over time as a chart, with the same figures in a table for those who cannot see the chart.

import { h, replace, table, when } from "../dom.js";
import { costText } from "./sessions.js";
import { timeChart, legend } from "./chart.js";

const kw = (w) => (w === null || w === undefined ? "–" : (w / 1000).toFixed(2));
const kwh = (wh) => (wh / 1000).toFixed(2);

/** Each reading's power is the mean since the one before: drawn as a step after each reading,
 * the value at reading i is the next one's (the last repeats, so the last step is drawn). */
function stepsAfter(readings) {
  const kws = readings.map((r) => (r.power_w ?? null) === null ? null : r.power_w / 1000);
  return kws.map((_, i) => (i + 1 < kws.length ? kws[i + 1] : kws[i]));
}

export async function render(view, { api }, [chargerUuid, transactionId]) {
  const path = `/api/v3/chargers/${encodeURIComponent(chargerUuid)}/transactions/${encodeURIComponent(transactionId)}`;
  const [{ data: t }, { data: readings }] = await Promise.all([api.get(path), api.get(`${path}/meter-values`)]);
  const cost = t.cost;
  const facts = h("dl", { class: "facts" },
    h("dt", {}, "Charger"), h("dd", {}, `${t.charger.identity}, connector ${t.connector.connector_id}`),
    h("dt", {}, "Started"), h("dd", {}, when(t.started_at)),
    h("dt", {}, "Stopped"), h("dd", {}, t.stopped_at ? `${when(t.stopped_at)} (${t.stop_reason || "Local"})` : "running"),
    h("dt", {}, "Energy"), h("dd", { "data-testid": "session-kwh" },
      t.total_kwh !== null ? `${t.total_kwh} kWh` : `${kwh((readings.at(-1)?.energy_charged_wh) || 0)} kWh so far`),
    h("dt", {}, "Cost"), h("dd", { "data-testid": "session-cost" }, costText(cost)),
    t.id_tag ? [h("dt", {}, "Id tag"), h("dd", {}, t.id_tag, t.id_tag_status ? ` (${t.id_tag_status})` : "")] : null);
  const components = cost?.components?.length
    ? table([["Component", (c) => c.type], ["Billed", (c) => c.volume], [`Excl. VAT (${cost.currency})`, (c) => c.excl_vat]],
      cost.components, `Cost components: ${cost.excl_vat} ${cost.currency} excl. VAT, ${cost.incl_vat} incl. VAT`)
    : null;
  const series = [
    { label: "Energy charged (kWh)", scale: "kWh" },
    { label: "Mean power (kW)", scale: "kW", steps: true },
  ];
  const figures = table([
    ["Time", (r) => when(r.at)],
    ["Energy charged (kWh)", (r) => kwh(r.energy_charged_wh)],
    ["Mean power since the reading before (kW)", (r) => kw(r.power_w)],
  ], readings, "Readings of the session, oldest first");
  figures.classList.add("chart-summary");
  replace(view, h("h1", {}, `Session ${t.id} at ${t.charger.identity}`), facts, components,
    h("h2", {}, "Energy and power over time"), legend(series));
  const times = readings.map((r) => Date.parse(r.at) / 1000);
  const chart = readings.length > 1
    ? timeChart(view, `Energy and power of session ${t.id} over time: the table below gives the figures`, series,
      [times, readings.map((r) => r.energy_charged_wh / 1000), stepsAfter(readings)])
    : null;
  if (!chart) view.append(h("p", { class: "muted" }, "No readings over time: cms keeps them for priced sessions only."));
  view.append(h("details", { class: "figures", open: readings.length <= 50 }, h("summary", {}, "The chart's figures"), figures));
  return () => chart?.destroy();
}
