// Chargers: the list, searched and filtered with the API's `filter[...]` parameters, paginated
// as the API pages it (its `links`), each row's state kept live from the chargers stream.

import { h, replace, when } from "../dom.js";
import { watchChargers, connection, unavailableNote } from "./live.js";

const STATUSES = [["", "Any status"], ["online", "Online"], ["offline", "Offline"], ["faulted", "Faulted"]];
const PROTOCOLS = [["", "Any protocol"], ["1.6", "OCPP 1.6"], ["2.0.1", "OCPP 2.0.1"]];

export async function render(view, { api }) {
  const sites = await api.all("/api/v3/sites", 200).catch(() => []);
  const search = h("input", { type: "search", name: "search", autocomplete: "off" });
  const site = select("site", [["", "Any site"], ...sites.map((s) => [s.uuid, s.name])]);
  const status = select("status", STATUSES);
  const protocol = select("protocol", PROTOCOLS);
  const form = h("form", { class: "inline", role: "search", "aria-label": "Find chargers" },
    h("label", {}, "Identity or name", search),
    h("label", {}, "Site", site),
    h("label", {}, "Status", status),
    h("label", {}, "Protocol", protocol),
    h("button", { type: "submit" }, "Search"));
  const list = h("div", { "aria-live": "polite" });
  const liveNote = h("div", {});
  replace(view, h("h1", {}, "Chargers"), form, liveNote, list);

  let rows = new Map(); // uuid -> the row's cells to refresh
  const show = async (path) => {
    const page = await api.get(path);
    rows = new Map();
    replace(list, page.data.length
      ? chargersTable(page.data, rows)
      : h("p", { class: "muted", "data-testid": "no-chargers" }, "No charger matches."),
    pager(page, show));
  };
  const first = () => {
    const query = new URLSearchParams();
    if (search.value.trim()) query.set("filter[search]", search.value.trim());
    if (site.value) query.set("filter[site_uuid]", site.value);
    if (status.value) query.set("filter[status]", status.value);
    if (protocol.value) query.set("filter[ocpp_version]", protocol.value);
    const text = query.toString();
    return show(`/api/v3/chargers${text ? `?${text}` : ""}`);
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    first().catch((error) => replace(list, h("p", { class: "error", role: "alert" }, error.message)));
  });
  await first();

  return watchChargers(api, (changed) => {
    for (const c of changed) {
      const row = rows.get(c.uuid);
      if (row) row.update(c);
    }
  }, () => replace(liveNote, unavailableNote(h, "Live status (the chargers stream)")));
}

function select(name, options) {
  return h("select", { name }, options.map(([value, label]) => h("option", { value }, label)));
}

function chargersTable(chargers, rows) {
  return h("table", {},
    h("caption", {}, "Chargers you see"),
    h("thead", {}, h("tr", {}, ["Identity", "Connection", "Status", "Protocol", "Firmware", "Last connected"]
      .map((heading) => h("th", { scope: "col" }, heading)))),
    h("tbody", {}, chargers.map((c) => {
      const state = h("td", {});
      const status = h("td", {});
      const update = (live) => {
        const now = connection({ ...live, connection_status: live.connection_status ?? (live.online ? "online" : "offline") });
        replace(state, h("span", { class: `status-${now.replace(" ", "-")}`, "data-testid": "connection" }, now));
        replace(status, h("span", { class: `status-${live.status}` }, live.status || "–"));
      };
      update(c);
      rows.set(c.uuid, { update });
      return h("tr", { "data-uuid": c.uuid },
        h("th", { scope: "row" }, h("a", { href: `#/chargers/${encodeURIComponent(c.uuid)}` }, c.identity)),
        state, status,
        h("td", {}, c.ocpp_version ? `OCPP ${c.ocpp_version}` : "–"),
        h("td", {}, c.firmware_version || "–"),
        h("td", {}, when(c.last_connection_at)));
    })));
}

/** Previous and next as the API's `links` give them, and where this page is. */
function pager(page, show) {
  const go = (link) => () => show(new URL(link, location.origin).pathname + new URL(link, location.origin).search);
  const meta = page.meta || {};
  return h("nav", { class: "toolbar", "aria-label": "Pages" },
    h("button", { type: "button", disabled: !page.links?.prev, onclick: page.links?.prev ? go(page.links.prev) : null }, "Previous page"),
    h("span", {}, meta.from ? `Chargers ${meta.from}–${meta.to}, page ${meta.current_page}` : ""),
    h("button", { type: "button", disabled: !page.links?.next, onclick: page.links?.next ? go(page.links.next) : null }, "Next page"));
}
