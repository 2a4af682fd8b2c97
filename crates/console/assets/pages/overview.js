// Overview: chargers online, offline and faulted, connectors by status, active sessions and the
// power drawn now, and the chargers gone quiet past their heartbeat interval. From
// `GET /api/v3/overview`, read again (at most once a second) when the chargers stream says
// something changed. A server without that endpoint gets counts made from the chargers list.

import { h, replace, table, when } from "../dom.js";
import { watchChargers, unavailableNote } from "./live.js";

/** How many chargers the fallback counts at most (40 pages of the list). */
const FALLBACK_LIMIT = 1000;

export async function render(view, { api }) {
  const body = h("div", {});
  const liveNote = h("div", {});
  replace(view, h("h1", {}, "Overview"), liveNote, body);

  let fallback = null; // the chargers by uuid, when the server has no overview
  const load = async () => {
    if (!fallback) {
      try {
        return draw(body, (await api.get("/api/v3/overview")).data, null);
      } catch (error) {
        if (error.status !== 404) throw error;
      }
      fallback = new Map((await api.all("/api/v3/chargers", FALLBACK_LIMIT)).map((c) => [c.uuid, c]));
    }
    draw(body, counted(fallback), "The overview endpoint");
  };
  await load();

  let reading = false;
  return watchChargers(api, async (changed) => {
    if (fallback) {
      for (const c of changed) {
        const held = fallback.get(c.uuid);
        if (held) fallback.set(c.uuid, { ...held, connection_status: c.online ? "online" : "offline", status: c.status });
      }
    }
    if (reading) return;
    reading = true;
    try { await load(); } finally { reading = false; }
  }, () => replace(liveNote, unavailableNote(h, "Live updating (the chargers stream)")));
}

/** The overview's numbers counted from the chargers themselves (no connectors, no sessions). */
function counted(chargers) {
  const all = [...chargers.values()];
  return {
    chargers: {
      total: all.length,
      online: all.filter((c) => c.connection_status === "online").length,
      offline: all.filter((c) => c.connection_status !== "online").length,
      faulted: all.filter((c) => c.status === "Faulted").length,
    },
    connectors: null,
    sessions: null,
    stale: null,
  };
}

function card(label, value, id) {
  return h("div", { class: "card" }, h("h2", { class: "card-label" }, label),
    h("div", { class: "value", "data-testid": id }, value ?? "–"));
}

function draw(body, data, missing) {
  const chargers = data.chargers || {};
  const parts = [
    missing ? unavailableNote(h, `${missing} (connectors, sessions, stale chargers)`) : null,
    h("div", { class: "cards" },
      card("Chargers", chargers.total, "chargers-total"),
      card("Online", chargers.online, "chargers-online"),
      card("Offline", chargers.offline, "chargers-offline"),
      card("Faulted", chargers.faulted, "chargers-faulted"),
      data.sessions ? card("Active sessions", data.sessions.active, "sessions-active") : null,
      data.sessions ? card("Power now", `${((data.sessions.power_w || 0) / 1000).toFixed(1)} kW`, "power-now") : null),
  ];
  if (data.connectors) {
    const statuses = Object.entries(data.connectors).sort(([a], [b]) => a.localeCompare(b));
    parts.push(h("h2", {}, "Connectors by status"),
      statuses.length
        ? h("div", { class: "cards" }, statuses.map(([status, n]) => card(status, n, `connectors-${status}`)))
        : h("p", { class: "muted" }, "No connector has reported a status."));
  }
  if (data.stale) {
    parts.push(h("h2", {}, "Stale chargers"),
      data.stale.length
        ? table([
          ["Charger", (c) => h("a", { href: `#/chargers/${encodeURIComponent(c.uuid)}` }, c.identity)],
          ["Last message", (c) => when(c.last_message_at)],
          ["Heartbeat interval", (c) => (c.heartbeat_interval == null ? "–" : `${c.heartbeat_interval} s`)],
        ], data.stale, `Online chargers silent past their heartbeat interval (${data.stale_total ?? data.stale.length} in all, oldest first)`)
        : h("p", { class: "muted" }, "No online charger is past its heartbeat interval."));
  }
  replace(body, parts);
}
