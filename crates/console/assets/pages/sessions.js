// Sessions: a team's transactions (start, end, charger, connector, kWh, cost), filtered by
// status, start date and charger, a page at a time, and exported as CSV. The CSV is fetched
// with the bearer token and saved from a Blob: the token never goes in a URL.

import { h, replace, table, when, toast } from "../dom.js";
import { ApiError } from "../api.js";
import { accessToken } from "../auth.js";
import { teamPicker } from "./team_picker.js";

/** A cost as the console shows it: including VAT, with its currency. */
export function costText(cost) {
  return cost && cost.incl_vat ? `${cost.incl_vat} ${cost.currency}` : "–";
}

export async function render(view, { api }) {
  const picker = await teamPicker(api, (team) => { state.team = team; state.page = 1; load(); });
  const state = { team: picker.team, page: 1 };
  const status = h("select", { id: "filter-status", name: "status" },
    h("option", { value: "" }, "Any"), h("option", { value: "active" }, "Active"),
    h("option", { value: "stopped" }, "Stopped"));
  const from = h("input", { id: "filter-from", name: "from", type: "date" });
  const to = h("input", { id: "filter-to", name: "to", type: "date" });
  const charger = h("select", { id: "filter-charger", name: "charger" }, h("option", { value: "" }, "Any"));
  for (const c of await api.all("/api/v3/chargers", 200)) {
    charger.append(h("option", { value: c.uuid }, c.name ? `${c.identity} (${c.name})` : c.identity));
  }
  const results = h("div", { id: "sessions-results", "aria-live": "polite" });
  const form = h("form", { class: "toolbar", role: "search", "aria-label": "Filter sessions" },
    picker.element,
    h("label", { for: "filter-status" }, "Status", status),
    h("label", { for: "filter-from" }, "Started from", from),
    h("label", { for: "filter-to" }, "Started until", to),
    h("label", { for: "filter-charger" }, "Charger", charger),
    h("button", { type: "submit" }, "Filter"),
    h("button", { type: "button", onclick: exportCsv }, "Export CSV"));
  form.addEventListener("submit", (e) => { e.preventDefault(); state.page = 1; load(); });
  replace(view, h("h1", {}, "Sessions"), form, results);

  function query(page) {
    const q = new URLSearchParams();
    if (status.value) q.set("filter[status]", status.value);
    if (charger.value) q.set("filter[charger_uuid]", charger.value);
    if (from.value) q.set("filter[from]", `${from.value}T00:00:00Z`);
    // "Until" a day includes that day: up to the next midnight.
    if (to.value) {
      const next = new Date(`${to.value}T00:00:00Z`);
      next.setUTCDate(next.getUTCDate() + 1);
      q.set("filter[to]", next.toISOString().replace(".000Z", "Z"));
    }
    if (page) q.set("page", String(page));
    return q.toString();
  }

  const base = () => `/api/v3/teams/${encodeURIComponent(state.team.uuid)}/transactions`;

  async function load() {
    replace(results, h("p", { class: "muted" }, "Loading…"));
    let answer;
    try {
      answer = await api.get(`${base()}?${query(state.page)}`);
    } catch (error) {
      replace(results, h("p", { class: "error", role: "alert" }, error instanceof ApiError && error.status === 404
        ? "This server does not list a team's sessions yet (GET /api/v3/teams/{team}/transactions): upgrade cms."
        : error.message));
      return;
    }
    const rows = answer.data || [];
    const columns = [
      ["Started", (t) => when(t.started_at)],
      ["Stopped", (t) => (t.stopped_at ? when(t.stopped_at) : "running")],
      ["Charger", (t) => t.charger_identity || t.charger?.identity],
      ["Connector", (t) => t.connector?.connector_id],
      ["kWh", (t) => h("span", { "data-col": "kwh" }, t.total_kwh ?? "–")],
      ["Cost", (t) => h("span", { "data-col": "cost" }, costText(t.cost))],
      ["Session", (t) => h("a", { href: `#/sessions/${t.charger_uuid || t.charger?.uuid}/${t.id}` }, "Chart")],
    ];
    const list = table(columns, rows, `Sessions of ${state.team.name}, newest first (page ${state.page})`);
    list.querySelectorAll("tbody tr").forEach((tr, i) => {
      const t = rows[i];
      tr.dataset.transaction = `${t.charger_uuid || t.charger?.uuid}/${t.id}`;
    });
    const pager = h("div", { class: "toolbar" },
      h("button", { type: "button", disabled: !answer.links?.prev, onclick: () => { state.page -= 1; load(); } }, "Previous page"),
      h("button", { type: "button", disabled: !answer.links?.next, onclick: () => { state.page += 1; load(); } }, "Next page"));
    replace(results, rows.length ? list : h("p", {}, "No sessions match."), pager);
  }

  async function exportCsv() {
    const response = await fetch(`${base()}.csv?${query(null)}`, {
      headers: { Accept: "text/csv", Authorization: `Bearer ${accessToken()}` },
    });
    if (!response.ok) {
      toast(response.status === 404 ? "This server cannot export a team's sessions yet." : `The export failed (${response.status}).`);
      return;
    }
    const url = URL.createObjectURL(await response.blob());
    const link = h("a", { href: url, download: `sessions-${state.team.name}.csv`, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  await load();
}
