// What the console scenarios of tests/e2e/console_sessions.rs share: their arguments (one JSON
// argument: base URL, the user's e-mail and password, the scenario's own), a browser signed in
// once through cms's OAuth pages as the `cms-console` client, each page's accessibility check,
// and the closing line with every problem seen (console errors, 404s among them, and any URL
// that carried the token).
"use strict";

const { launch, signIn, accessToken, urlsWithToken, screenshot, accessibilityViolations, report } = require("../lib.js");

/** Runs `scenario({page, base, args, check})` and prints `{"done": true, "problems": [...]}`. */
async function run(scenario) {
  const { base: given, email, password, args } = JSON.parse(process.argv[2]);
  const base = given.replace(/\/$/, "");
  const { browser, page, problems, requests } = await launch();
  let token = null;
  const limit = setTimeout(() => { problems.push("the scenario ran out of time"); finish(); }, 40000);
  let finished = false;
  async function finish() {
    if (finished) return;
    finished = true;
    clearTimeout(limit);
    for (const url of urlsWithToken(requests, token)) problems.push(`the token in a URL: ${url}`);
    report({ done: true, problems });
    await browser.close().catch(() => {});
  }
  /** Screenshot and axe-core for the page as it is now. */
  async function check(name) {
    await screenshot(page, `console-${name}`);
    for (const v of await accessibilityViolations(page)) problems.push(`${name}: ${v}`);
  }
  try {
    await signIn(page, base, email, password);
    token = await accessToken(page);
    await scenario({ page, base, args, check });
  } catch (error) {
    problems.push(`failed: ${error.stack || error}`);
    await screenshot(page, "console-failure").catch(() => {});
  }
  await finish();
}

module.exports = { run };
