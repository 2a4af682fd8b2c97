// Building the page from data without innerHTML: every text from the API goes in as text, so a
// charger's name or an OCPP frame can never become markup.

/** An element: `h("a", {href: "#/x", class: "y"}, "text", child, [more])`. `on*` attributes
 * with a function become listeners; `null`/`false` attributes and children are left out. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2), value);
    } else if (value === true) {
      el.setAttribute(name, "");
    } else {
      el.setAttribute(name, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** Empties `el` and puts `children` in it. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A table of `rows`, one column per `[heading, cell(row)]`. */
export function table(columns, rows, caption) {
  return h(
    "table",
    {},
    caption ? h("caption", {}, caption) : null,
    h("thead", {}, h("tr", {}, columns.map(([heading]) => h("th", { scope: "col" }, heading)))),
    h("tbody", {}, rows.map((row) => h("tr", {}, columns.map(([, cell]) => h("td", {}, cell(row)))))),
  );
}

/** A record timestamp as the reader's local date and time. */
export function when(timestamp) {
  if (!timestamp) return "–";
  const date = new Date(timestamp);
  return Number.isNaN(date.getTime()) ? String(timestamp) : date.toLocaleString();
}

/** A short notice at the bottom of the page (and for screen readers). */
export function toast(message) {
  const el = document.getElementById("toast");
  el.textContent = message;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (el.textContent = ""), 6000);
}
