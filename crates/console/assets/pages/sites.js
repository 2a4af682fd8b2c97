// Sites: the user's sites, each with its smart-charging mode and a link to its page.

import { h, replace, table } from "../dom.js";

export async function render(view, { api }) {
  const sites = await api.all("/api/v3/sites", 1000);
  const columns = [
    ["Site", (s) => s.name],
    ["Address", (s) => s.address || "–"],
    ["Chargers", (s) => String(s.chargers_count)],
    ["Smart charging", (s) => h("a", { href: `#/sites/${s.uuid}/smart-charging` }, `${s.smart_charging}: ${s.name}`)],
  ];
  replace(view, h("h1", {}, "Sites"),
    sites.length ? table(columns, sites, "Your sites") : h("p", {}, "You reach no site."));
}
