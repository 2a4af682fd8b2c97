// Overview: how many chargers the user sees (the full page replaces this).

import { h, replace } from "../dom.js";

export async function render(view, { api }) {
  const page = await api.get("/api/v3/chargers");
  replace(view, h("h1", {}, "Overview"),
    h("div", { class: "cards" },
      h("div", { class: "card" }, h("div", {}, "Chargers"), h("div", { class: "value", "data-testid": "chargers-total" }, page.meta?.total ?? page.data.length))));
}
