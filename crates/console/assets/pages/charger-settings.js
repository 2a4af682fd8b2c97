// A charger's settings (its configuration as cms last read it), edited in place: the keys
// changed are sent in one `PUT .../settings`, and each key's answer from the charger is shown.

import { h, replace, when } from "../dom.js";

/** The server waits this long for the charger's answers (under its 30 s request timeout). */
const WAIT_S = 25;

export function renderSettings(api, path) {
  const into = h("div", {});
  // Outside the form, so that the answers stay while the form is read again after them.
  const outcome = h("div", { role: "status", "aria-live": "polite", "data-testid": "settings-outcome" });
  const load = async () => {
    try {
      const settings = (await api.get(`${path}/settings`)).data;
      replace(into, settings.length ? [form(api, path, settings, load, outcome), outcome]
        : h("p", { class: "muted" }, "cms has not read this charger's configuration yet."));
    } catch (error) {
      replace(into, h("p", { class: "error" }, error.message));
    }
  };
  load();
  return into;
}

function form(api, path, settings, reload, outcome) {
  const inputs = new Map();
  const rows = settings.map((s, i) => {
    const id = `setting-${i}`;
    const secret = s.value === "***";
    const input = h("input", {
      id, name: s.key, value: secret ? "" : (s.value ?? ""), disabled: s.readonly,
      placeholder: secret ? "write-only" : null, autocomplete: "off",
    });
    if (!s.readonly) inputs.set(s.key, { input, before: secret ? "" : (s.value ?? "") });
    return h("tr", {},
      h("th", { scope: "row" }, h("label", { for: id }, s.key)),
      h("td", {}, input),
      h("td", {}, s.readonly ? "read-only" : s.unit || ""),
      h("td", {}, when(s.updated_at)));
  });
  const submit = async (event) => {
    event.preventDefault();
    const changed = {};
    for (const [key, { input, before }] of inputs) if (input.value !== before) changed[key] = input.value;
    if (!Object.keys(changed).length) return replace(outcome, h("p", { class: "muted" }, "Nothing changed."));
    replace(outcome, h("p", {}, `Sending ${Object.keys(changed).join(", ")} to the charger…`));
    try {
      const answer = await api.put(`${path}/settings?wait=${WAIT_S}`, { settings: changed });
      replace(outcome, h("ul", {}, answer.data.map((item) =>
        h("li", { "data-key": item.key }, `${item.key}: `, h("span", { class: `status-${item.status}` }, item.status)))));
      if (answer.data.every((item) => item.status === "Accepted" || item.status === "RebootRequired")) reload();
    } catch (error) {
      const fields = Object.entries(error.errors || {}).map(([field, messages]) => h("li", {}, `${field}: ${messages.join(" ")}`));
      replace(outcome, h("p", { class: "error", role: "alert" }, error.message), fields.length ? h("ul", {}, fields) : null);
    }
  };
  return h("form", { onsubmit: submit },
    h("table", {}, h("caption", {}, "Configuration keys as the charger last reported them"),
      h("thead", {}, h("tr", {}, ["Key", "Value", "", "Updated"].map((t) => h("th", { scope: "col" }, t || h("span", { class: "visually-hidden" }, "Notes"))))),
      h("tbody", {}, rows)),
    h("button", { type: "submit" }, "Save settings"));
}
