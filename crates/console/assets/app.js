// The console's shell: signs the user in, draws the navigation, and shows the page the address's
// hash names (`#/chargers/…`), closing the previous page's live streams on the way.

import { completeSignIn, accessToken, signIn, signOut } from "./auth.js";
import { api, ApiError } from "./api.js";
import { h, replace } from "./dom.js";
import { pages } from "./pages/index.js";

const view = document.getElementById("view");
let leave = null;

async function show() {
  const path = location.hash.replace(/^#/, "") || "/";
  if (leave) {
    try { leave(); } catch { /* a page's cleanup never stops the next page */ }
    leave = null;
  }
  for (const a of document.querySelectorAll("#nav a")) {
    a.toggleAttribute("aria-current", a.getAttribute("href") === `#${path}`);
    if (a.hasAttribute("aria-current")) a.setAttribute("aria-current", "page");
  }
  const page = pages.find((p) => p.pattern.test(path));
  if (!page) {
    replace(view, h("h1", {}, "Not found"), h("p", {}, "The console has no page at this address."));
    return;
  }
  const params = path.match(page.pattern).slice(1).map(decodeURIComponent);
  replace(view, h("p", { class: "muted" }, "Loading…"));
  document.title = `${page.title} · cms console`;
  try {
    leave = (await page.load()).render(view, { api }, params) || null;
    if (leave instanceof Promise) leave = (await leave) || null;
  } catch (error) {
    replace(view, h("h1", {}, page.title), h("p", { class: "error", role: "alert" },
      error instanceof ApiError ? error.message : `The page failed: ${error.message}`));
  }
  view.focus({ preventScroll: true });
}

async function start() {
  const failed = await completeSignIn();
  if (failed) {
    replace(view, h("h1", {}, "Sign-in failed"), h("p", { class: "error", role: "alert" }, failed),
      h("button", { type: "button", onclick: () => signIn() }, "Sign in again"));
    return;
  }
  if (!accessToken()) return signIn();
  replace(document.getElementById("nav"),
    pages.filter((p) => p.nav).map((p) => h("a", { href: `#${p.nav}` }, p.title)));
  const button = document.getElementById("sign-out");
  button.hidden = false;
  button.addEventListener("click", async () => {
    await signOut();
    replace(view, h("h1", {}, "Signed out"),
      h("button", { type: "button", onclick: () => signIn() }, "Sign in"));
    button.hidden = true;
    replace(document.getElementById("nav"));
  });
  window.addEventListener("hashchange", show);
  await show();
}

start();
