// A select of the user's teams (`GET /api/v2/teams`), for the pages that show one team's data
// (sessions, id tags). The choice is kept for the tab, so that moving between pages keeps it.

import { h } from "../dom.js";

const KEY = "cms-console.team";

/** The user's teams and a labelled select of them; `onChange(team)` when another is chosen. */
export async function teamPicker(api, onChange) {
  const teams = (await api.get("/api/v2/teams")).data || [];
  const kept = sessionStorage.getItem(KEY);
  // The team that runs chargers comes first by default: a personal team rarely has any.
  const preferred = teams.find((t) => t.uuid === kept)
    || teams.find((t) => t.type === "operators" || t.type === "business")
    || teams[0];
  const select = h("select", { id: "team", name: "team" },
    teams.map((t) => h("option", { value: t.uuid, selected: t === preferred }, t.name)));
  select.addEventListener("change", () => {
    sessionStorage.setItem(KEY, select.value);
    onChange(teams.find((t) => t.uuid === select.value));
  });
  const label = h("label", { for: "team" }, "Team", select);
  return { teams, team: preferred, element: label };
}
