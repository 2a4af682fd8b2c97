// What the console's scenarios share: a browser whose tab already holds a session (the token
// put in sessionStorage as the console keeps it), the checks every page gets (axe-core, console
// errors), and a bounded wait for text. Scenarios print JSON lines read by tests/e2e/console.rs.
"use strict";

const { launch, screenshot, accessibilityViolations, report } = require("../lib.js");

/** Endpoints other branches of issue 43 build: until they are merged, their 404s are reported
 * as `awaiting_merge` instead of failing the scenario. */
const AWAITING_MERGE = [
  /\/api\/v3\/overview(\?|$)/,
  /\/api\/v3\/chargers\/stream$/,
  /\/api\/v3\/chargers\/[^/]+\/(messages|connection-attempts)$/,
];

/** Chromium with the console's session for `token` in the tab, before any page script runs. */
async function withToken(token) {
  const browser = await launch();
  await browser.context.addInitScript((access) => {
    sessionStorage.setItem("cms-console.session", JSON.stringify({ access }));
  }, token);
  browser.notFound = [];
  browser.expectedNotFound = []; // paths a scenario means to be 404 (another team's charger)
  browser.page.on("response", (r) => r.status() === 404 && browser.notFound.push(new URL(r.url()).pathname));
  return browser;
}

/** The console errors, less the 404s of endpoints awaiting their merge (reported apart) and
 * those the scenario expects. */
function problemsOf(browser) {
  const expected = (p) => browser.expectedNotFound.some((r) => r.test(p));
  const awaiting = browser.notFound.filter((p) => AWAITING_MERGE.some((r) => r.test(p)));
  const others = browser.notFound.filter((p) => !AWAITING_MERGE.some((r) => r.test(p)) && !expected(p));
  const problems = browser.problems.filter((p) => others.length || !/status of 404/.test(p));
  return { problems, awaiting_merge: [...new Set(awaiting)], not_found: others };
}

/** Checks the page as it stands (axe-core, console errors) and saves its screenshot. */
async function checkPage(browser, name) {
  const violations = await accessibilityViolations(browser.page);
  const file = await screenshot(browser.page, name);
  report({ page: name, violations, screenshot: file, ...problemsOf(browser) });
}

/** Runs `body(browser)`, reporting a failure as `{"failed": message}` and always closing. */
async function run(token, body) {
  const browser = await withToken(token);
  try {
    await body(browser);
    report({ done: true, ...problemsOf(browser) });
  } catch (error) {
    await screenshot(browser.page, "failure").catch(() => {});
    report({ failed: String(error.stack || error), ...problemsOf(browser) });
    process.exitCode = 1;
  } finally {
    await browser.browser.close();
  }
}

module.exports = { withToken, checkPage, run, report };
