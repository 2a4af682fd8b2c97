// What the console scenarios of tests/e2e/console_sessions.rs share: their arguments (one JSON
// argument: base URL, token, the scenario's own), a browser whose tab holds the token as a
// signed-in console keeps it (until the console's OAuth client is merged, when `signIn` takes
// over), each page's accessibility check, and the closing line with every problem seen.
"use strict";

const { launch, screenshot, accessibilityViolations, report } = require("../lib.js");

/** Runs `scenario({page, base, args, check})` and prints `{"done": true, "problems": [...]}`. */
async function run(scenario) {
  const { base, token, args } = JSON.parse(process.argv[2]);
  const { browser, page, problems } = await launch();
  const limit = setTimeout(() => { problems.push("the scenario ran out of time"); finish(); }, 40000);
  let finished = false;
  async function finish() {
    if (finished) return;
    finished = true;
    clearTimeout(limit);
    for (const text of favicon) {
      const i = problems.indexOf(`console: ${text}`);
      if (i >= 0) problems.splice(i, 1);
    }
    report({ done: true, problems });
    await browser.close().catch(() => {});
  }
  // A browser asks for /favicon.ico by itself, which cms does not serve: that 404 is no
  // problem of the page's (its console line names the resource only in its location).
  const favicon = [];
  page.on("console", (m) => m.type() === "error" && /\/favicon\.ico$/.test(m.location().url || "") && favicon.push(m.text()));
  await page.addInitScript((access) => {
    sessionStorage.setItem("cms-console.session", JSON.stringify({ access }));
  }, token);
  /** Screenshot and axe-core for the page as it is now. */
  async function check(name) {
    await screenshot(page, `console-${name}`);
    for (const v of await accessibilityViolations(page)) problems.push(`${name}: ${v}`);
  }
  try {
    await scenario({ page, base: base.replace(/\/$/, ""), args, check });
  } catch (error) {
    problems.push(`failed: ${error.stack || error}`);
    await screenshot(page, "console-failure").catch(() => {});
  }
  await finish();
}

module.exports = { run };
