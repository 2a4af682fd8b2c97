// A charger's page: who it is (identity, site, protocol, security profile, firmware, last boot
// and heartbeat), its connectors live, its settings with editing, its transactions, its actions
// log and the commands to send it, and why it may not connect (diagnostics).

import { h, replace, table, when } from "../dom.js";
import { watchChargers, connection } from "./live.js";
import { renderCommands } from "./charger-commands.js";
import { renderDiagnostics } from "./charger-diagnostics.js";
import { renderSettings } from "./charger-settings.js";

/** Connectors read live at most (each is a stream, and a user holds at most 10 at once). */
const LIVE_CONNECTORS = 6;

export async function render(view, { api }, [uuid]) {
  const path = `/api/v3/chargers/${encodeURIComponent(uuid)}`;
  const charger = (await api.get(path)).data;
  const stops = [];
  const identity = h("dl", { class: "facts" });
  const connectors = h("div", {});
  const transactions = h("div", {});
  const actions = h("div", {});
  const section = (id, title, ...content) =>
    h("section", { "aria-labelledby": id }, h("h2", { id }, title), ...content);
  const sites = h("span", {}, "…");
  replace(view,
    h("h1", {}, `Charger ${charger.identity}`),
    h("nav", { class: "toolbar", "aria-label": "Sections" },
      ["Connectors", "Settings", "Transactions", "Commands", "Actions log", "Diagnostics"]
        .map((name) => h("a", { href: `#/chargers/${encodeURIComponent(uuid)}`, "data-section": name, onclick: jump }, name))),
    identity,
    section("connectors", "Connectors", connectors),
    section("settings", "Settings", renderSettings(api, path)),
    section("transactions", "Transactions", transactions),
    section("commands", "Commands", renderCommands(api, path, charger, () => loadActions(api, path, actions))),
    section("actions-log", "Actions log", actions),
    section("diagnostics", "Diagnostics", renderDiagnostics(api, path)));

  const drawFacts = (c) => replace(identity, facts([
    ["Identity", c.identity],
    ["Reference", c.reference || "–"],
    ["Site", sites],
    ["Connection", h("span", { class: `status-${connection(c).replace(" ", "-")}`, "data-testid": "connection" }, connection(c))],
    ["Status", h("span", { class: `status-${c.status}` }, c.status || "–")],
    ["Protocol", c.ocpp_version ? `OCPP ${c.ocpp_version}` : "not connected yet"],
    ["Security profile", c.security_profile ?? "–"],
    ["Firmware", c.firmware_version || "–"],
    ["Last boot", when(c.last_connection_at)],
    ["Last heartbeat", when(c.last_heartbeat_at)],
  ]));
  drawFacts(charger);
  findSite(api, charger).then((site) => replace(sites, site
    ? h("a", { href: `#/sites/${encodeURIComponent(site.uuid)}/smart-charging` }, site.name) : "–"));

  const live = await connectorsLive(api, path, connectors, stops);
  stops.push(watchChargers(api, (changed) => {
    const mine = changed.find((c) => c.uuid === uuid);
    if (!mine) return;
    Object.assign(charger, { status: mine.status, connection_status: mine.online ? "online" : "offline" });
    drawFacts(charger);
    for (const c of mine.connectors || []) live.status(c.connector_id, c.status);
  }, () => {}));
  loadTransactions(api, path, transactions);
  loadActions(api, path, actions);
  return () => stops.forEach((stop) => stop());
}

function jump(event) {
  event.preventDefault();
  const name = event.currentTarget.dataset.section.toLowerCase().replace(" ", "-");
  document.getElementById(name)?.scrollIntoView();
}

function facts(pairs) {
  return pairs.flatMap(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]);
}

/** The site holding the charger: the charger names it when the API gives it, else it is looked
 * for among the caller's sites (their first page, searched by identity where supported). */
async function findSite(api, charger) {
  if (charger.site) return charger.site;
  const sites = await api.all("/api/v3/sites", 50).catch(() => []);
  const query = new URLSearchParams({ "filter[search]": charger.identity });
  for (const site of sites.filter((s) => s.chargers_count !== 0)) {
    const page = await api.get(`/api/v3/sites/${site.uuid}/chargers?${query}`).catch(() => null);
    if (page?.data.some((c) => c.uuid === charger.uuid)) return site;
  }
  return null;
}

/** Its connectors, each with its status (live from the chargers stream) and the running
 * session's power and energy (live from the connector's latest-metervalue stream). */
async function connectorsLive(api, path, into, stops) {
  const page = await api.get(`${path}/connectors`).catch(() => ({ data: [] }));
  const cells = new Map();
  const active = await api.get(`${path}/transactions?limit=10&filter[status]=active`).catch(() => ({ data: [] }));
  const running = (id) => (active.data || []).find((t) => !t.stopped_at && connectorOf(t) === id);
  const rows = page.data.map((c) => {
    const status = h("td", {}, h("span", { class: `status-${c.status}` }, c.status || "–"));
    const power = h("td", { "data-testid": `power-${c.connector_id}` }, "–");
    const energy = h("td", { "data-testid": `energy-${c.connector_id}` }, "–");
    cells.set(c.connector_id, { status, power, energy });
    return h("tr", {}, h("th", { scope: "row" }, `Connector ${c.connector_id}`), status, power, energy);
  });
  replace(into, rows.length
    ? h("table", {}, h("caption", {}, "Connectors, live"),
      h("thead", {}, h("tr", {}, ["Connector", "Status", "Power", "Energy (session)"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows))
    : h("p", { class: "muted" }, "The charger has reported no connector yet."),
  page.data.length > LIVE_CONNECTORS
    ? h("p", { class: "muted" }, `Power and energy are live for the first ${LIVE_CONNECTORS} connectors.`) : null);
  for (const c of page.data.slice(0, LIVE_CONNECTORS)) {
    stops.push(api.stream(`${path}/connectors/${c.connector_id}/latest-metervalue/stream`, ({ event, data }) => {
      if (event !== "meter-value" || !data?.meterValue) return;
      const reading = readingOf(data.meterValue);
      const cell = cells.get(c.connector_id);
      const session = running(c.connector_id);
      if (reading.power != null) replace(cell.power, `${(reading.power / 1000).toFixed(2)} kW`);
      if (reading.energy != null) {
        replace(cell.energy, session
          ? `${((reading.energy - session.meter_start) / 1000).toFixed(2)} kWh`
          : `${(reading.energy / 1000).toFixed(2)} kWh on the register`);
      }
    }, (error) => error.status !== 404 && error.status !== 403));
  }
  return {
    status(id, status) {
      const cell = cells.get(id);
      if (cell) replace(cell.status, h("span", { class: `status-${status}` }, status));
    },
  };
}

function connectorOf(transaction) {
  const c = transaction.connector;
  return c?.connector_id ?? c?.id ?? transaction.connector_id;
}

/** Power (W) and energy (Wh) of the newest reading, whatever unit it came in. */
function readingOf(meterValues) {
  const result = { power: null, energy: null };
  for (const value of meterValues) {
    for (const sample of value.sampledValue || []) {
      const number = Number(sample.value);
      if (!Number.isFinite(number) || sample.phase) continue;
      const kilo = (sample.unit || "").startsWith("k") ? 1000 : 1;
      const measurand = sample.measurand || "Energy.Active.Import.Register";
      if (measurand === "Power.Active.Import") result.power = number * kilo;
      if (measurand === "Energy.Active.Import.Register") result.energy = number * kilo;
    }
  }
  return result;
}

async function loadTransactions(api, path, into) {
  try {
    const list = (await api.get(`${path}/transactions?limit=25`)).data;
    replace(into, list.length ? table([
      ["Transaction", (t) => t.id],
      ["Connector", (t) => connectorOf(t) ?? "–"],
      ["Id tag", (t) => t.id_tag || "–"],
      ["Started", (t) => when(t.started_at)],
      ["Stopped", (t) => (t.stopped_at ? when(t.stopped_at) : "running")],
      ["Energy", (t) => (t.total_kwh ? `${t.total_kwh} kWh` : "–")],
    ], list, "The 25 newest transactions") : h("p", { class: "muted" }, "No transaction yet."));
  } catch (error) {
    replace(into, h("p", { class: "error" }, error.message));
  }
}

/** The actions log, newest first, a page at a time as the API pages it. */
export async function loadActions(api, path, into, pagePath = `${path}/actions`) {
  try {
    const page = await api.get(pagePath);
    const go = (link) => () => loadActions(api, path, into, new URL(link, location.origin).pathname + new URL(link, location.origin).search);
    replace(into, page.data.length ? table([
      ["Action", (a) => a.action],
      ["Status", (a) => h("span", { class: `status-${a.status}` }, a.status)],
      ["Answer", (a) => h("code", {}, a.error ? `${a.error.code}: ${a.error.description ?? ""}` : JSON.stringify(a.response ?? null))],
      ["By", (a) => a.requested_by?.email || a.requested_by?.type || "–"],
      ["Taken", (a) => when(a.created_at)],
    ], page.data, "Actions sent to the charger, newest first") : h("p", { class: "muted" }, "No action yet."),
    h("nav", { class: "toolbar", "aria-label": "Actions log pages" },
      h("button", { type: "button", disabled: !page.links?.prev, onclick: page.links?.prev ? go(page.links.prev) : null }, "Newer actions"),
      h("button", { type: "button", disabled: !page.links?.next, onclick: page.links?.next ? go(page.links.next) : null }, "Older actions")));
  } catch (error) {
    replace(into, h("p", { class: "error" }, error.message));
  }
}
