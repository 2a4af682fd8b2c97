// A site's smart charging, live: its grid limit, the CT meter's reading and each connector's
// allocation, as a chart and as tables. The site's meter-value stream says when something
// changed; the balancer's status (which has no stream) is read again then, at most once every
// 5 s: the balancer writes it when it changes or every 5 s (docs/smart-charging.md), so reading
// it more often would show nothing new.

import { h, replace, table, when } from "../dom.js";
import { timeChart, legend } from "./chart.js";

/** How often at most the status is read again, and how many points the chart keeps. */
const STATUS_EVERY_MS = 5000;
const POINTS = 360;

const amps = (a) => (a === null || a === undefined ? "–" : `${Number(a).toFixed(Number.isInteger(Number(a)) ? 0 : 1)} A`);

export async function render(view, { api }, [siteUuid]) {
  const base = `/api/v3/sites/${encodeURIComponent(siteUuid)}`;
  const [site, settings] = await Promise.all([api.get(base), api.get(`${base}/smart-charging`)]);
  const s = settings.data;
  const now = h("div", { "aria-live": "polite" });
  const connectors = h("div");
  const series = [
    { label: "Site limit (A)", scale: "A" },
    { label: "CT meter (A)", scale: "A" },
    { label: "Allocated to connectors (A)", scale: "A", steps: true },
  ];
  replace(view, h("h1", {}, `Smart charging: ${site.data.name}`),
    h("dl", { class: "facts" },
      h("dt", {}, "Mode"), h("dd", {}, s.mode),
      h("dt", {}, "Grid limit"), h("dd", { "data-testid": "grid-limit" }, amps(s.grid_limit_amps)),
      h("dt", {}, "Strategy"), h("dd", {}, s.strategy),
      h("dt", {}, "Safety margin"), h("dd", {}, amps(s.safety_margin_amps)),
      h("dt", {}, "Fail-safe"), h("dd", {}, amps(s.fail_safe_amps))),
    h("h2", {}, "Now"), now,
    h("h2", {}, "Over time"), legend(series));
  const data = [[], [], [], []];
  const chart = timeChart(view, "The site's limit, CT meter reading and allocated current over time: the tables give the figures", series, data);
  view.append(h("h2", {}, "Connectors"), connectors);

  function draw(status) {
    const st = status.data;
    replace(now, h("dl", { class: "facts" },
      h("dt", {}, "State"), h("dd", {}, st.state),
      h("dt", {}, "CT meter"), h("dd", { "data-testid": "meter" }, st.meter ? `${amps(st.meter.amps)} at ${when(st.meter.measured_at)}` : "no reading yet"),
      h("dt", {}, "Allocated"), h("dd", {}, amps(st.allocated_amps)),
      h("dt", {}, "Available"), h("dd", {}, amps(st.available_amps)),
      h("dt", {}, "Headroom"), h("dd", {}, amps(st.headroom_amps)),
      h("dt", {}, "Computed"), h("dd", {}, when(st.computed_at))));
    const rows = st.connectors || [];
    const list = table([
      ["Charger", (c) => c.identity],
      ["Connector", (c) => (c.connector_id === 0 ? "0 (charger default)" : String(c.connector_id))],
      ["Allocation", (c) => h("span", { "data-col": "allocation" }, amps(c.limit_amps))],
      ["Measured", (c) => amps(c.measured_amps)],
      ["Answer", (c) => c.status || "–"],
      ["Paused", (c) => (c.paused ? `since ${when(c.paused_since)}` : "no")],
    ], rows, "Each connector's allocation, as last sent");
    list.querySelectorAll("tbody tr").forEach((tr, i) => { tr.dataset.connector = `${rows[i].identity}/${rows[i].connector_id}`; });
    replace(connectors, rows.length ? list : h("p", {}, "No connector has an allocation."));
    data[0].push(Date.now() / 1000);
    data[1].push(st.grid_limit_amps ?? null);
    data[2].push(st.meter?.amps ?? null);
    data[3].push(st.allocated_amps ?? null);
    if (data[0].length > POINTS) data.forEach((d) => d.shift());
    chart.setData(data);
  }

  let last = 0;
  let timer = null;
  async function refresh() {
    timer = null;
    last = Date.now();
    try { draw(await api.get(`${base}/smart-charging/status`)); } catch { /* the next event tries again */ }
  }
  await refresh();
  const stop = api.stream(`${base}/latest-metervalues/stream`, () => {
    if (timer) return;
    timer = setTimeout(refresh, Math.max(0, last + STATUS_EVERY_MS - Date.now()));
  });
  return () => { stop(); clearTimeout(timer); chart.destroy(); };
}
