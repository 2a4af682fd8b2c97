// Id tags: a team's tags, a page at a time, added, blocked or unblocked, and removed; and each
// charger's local list (at the user's sites that keep lists), as cms last knew it to be held.

import { h, replace, table, toast } from "../dom.js";
import { ApiError } from "../api.js";
import { teamPicker } from "./team_picker.js";

/** At most this many chargers' list states are read (one request each). */
const MAX_CHARGERS = 100;

const SYNC = {
  in_sync: "In sync",
  updating: "Updating",
  out_of_date: "Out of date",
  unsupported: "No local list on the charger",
  not_kept: "Not kept",
};

export function syncText(s) {
  const entries = `${s.entries} ${s.entries === 1 ? "entry" : "entries"}`;
  return `${SYNC[s.state] || s.state} (version ${s.version}, ${entries})`;
}

export async function render(view, { api }) {
  const picker = await teamPicker(api, (team) => { state.team = team; state.page = 1; loadTags(); });
  const state = { team: picker.team, page: 1 };
  const tags = h("section", { "aria-labelledby": "tags-heading" });
  const lists = h("section", { "aria-labelledby": "lists-heading" });
  const tag = h("input", { id: "new-tag", name: "id_tag", required: true, maxlength: 20, autocomplete: "off" });
  const name = h("input", { id: "new-name", name: "name", maxlength: 255, autocomplete: "off" });
  const status = h("select", { id: "new-status", name: "status" },
    ["Accepted", "Blocked", "Expired", "Invalid"].map((s) => h("option", { value: s }, s)));
  const add = h("form", { class: "inline", "aria-label": "Add an id tag" },
    h("label", { for: "new-tag" }, "Id tag", tag),
    h("label", { for: "new-name" }, "Name", name),
    h("label", { for: "new-status" }, "Status", status),
    h("button", { type: "submit" }, "Add"));
  add.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await api.post(base(), { id_tag: tag.value, name: name.value || null, status: status.value });
      toast(`Added ${tag.value}.`);
      add.reset();
      await loadTags();
    } catch (error) {
      toast(error instanceof ApiError ? Object.values(error.errors).flat()[0] || error.message : error.message);
    }
  });
  replace(view, h("h1", {}, "Id tags"), h("div", { class: "toolbar" }, picker.element), add, tags, lists);

  function base() { return `/api/v3/teams/${encodeURIComponent(state.team.uuid)}/id-tags`; }

  async function change(t, method, body, done) {
    try {
      await api[method](`${base()}/${encodeURIComponent(t.id_tag)}`, body);
      toast(done);
      await loadTags();
    } catch (error) {
      toast(error.message);
    }
  }

  async function loadTags() {
    const answer = await api.get(`${base()}?page=${state.page}`);
    const rows = answer.data || [];
    const blocked = (t) => t.status === "Blocked";
    const columns = [
      ["Id tag", (t) => h("code", {}, t.id_tag)],
      ["Name", (t) => t.name || "–"],
      ["Status", (t) => h("span", { class: `status-${t.status}` }, t.status)],
      ["Expires", (t) => t.expiry_date || "never"],
      ["Parent", (t) => t.parent_id_tag || "–"],
      ["Actions", (t) => [
        h("button", { type: "button", onclick: () => change(t, "put",
          { status: blocked(t) ? "Accepted" : "Blocked", expiry_date: t.expiry_date, parent_id_tag: t.parent_id_tag, name: t.name },
          `${t.id_tag} ${blocked(t) ? "unblocked" : "blocked"}.`) }, blocked(t) ? `Unblock ${t.id_tag}` : `Block ${t.id_tag}`),
        " ",
        h("button", { type: "button", onclick: () => change(t, "delete", undefined, `${t.id_tag} removed.`) }, `Remove ${t.id_tag}`),
      ]],
    ];
    const list = table(columns, rows, `Id tags of ${state.team.name} (page ${state.page})`);
    list.querySelectorAll("tbody tr").forEach((tr, i) => { tr.dataset.tag = rows[i].id_tag; });
    replace(tags, h("h2", { id: "tags-heading" }, "Tags"),
      rows.length ? list : h("p", {}, "The team has no id tags."),
      h("div", { class: "toolbar" },
        h("button", { type: "button", disabled: !answer.links?.prev, onclick: () => { state.page -= 1; loadTags(); } }, "Previous page"),
        h("button", { type: "button", disabled: !answer.links?.next, onclick: () => { state.page += 1; loadTags(); } }, "Next page")));
  }

  async function loadLists() {
    replace(lists, h("h2", { id: "lists-heading" }, "Chargers' local lists"), h("p", { class: "muted" }, "Loading…"));
    const sites = (await api.all("/api/v3/sites", 500)).filter((s) => s.authorization === "id_tags" && s.local_authorization_list);
    const chargers = [];
    for (const site of sites) {
      if (chargers.length >= MAX_CHARGERS) break;
      for (const c of await api.all(`/api/v3/sites/${site.uuid}/chargers`, MAX_CHARGERS - chargers.length)) chargers.push({ site, charger: c });
    }
    const states = await Promise.all(chargers.map(({ charger }) =>
      api.get(`/api/v3/chargers/${charger.uuid}/local-list`).then((a) => a.data, () => null)));
    const rows = chargers.map((c, i) => ({ ...c, list: states[i] })).filter((r) => r.list);
    const columns = [
      ["Charger", (r) => h("a", { href: `#/chargers/${r.charger.uuid}` }, r.charger.identity)],
      ["Site", (r) => r.site.name],
      ["Online", (r) => (r.list.online ? "online" : "offline")],
      ["List", (r) => h("span", { "data-col": "sync", class: r.list.state === "in_sync" ? "status-Accepted" : "status-Charging" }, syncText(r.list))],
      ["Tags that apply", (r) => String(r.list.desired_entries)],
    ];
    const list = table(columns, rows, "Local authorization lists of the chargers at the sites that keep them");
    list.querySelectorAll("tbody tr").forEach((tr, i) => { tr.dataset.charger = rows[i].charger.identity; });
    replace(lists, h("h2", { id: "lists-heading" }, "Chargers' local lists"),
      rows.length ? list : h("p", {}, "None of your sites keeps its chargers' local lists (a site's local_authorization_list)."));
  }

  await Promise.all([loadTags(), loadLists()]);
}
