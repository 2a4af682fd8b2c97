// What the console's scenarios share: a browser signed in through cms's OAuth pages (once per
// scenario, as the `cms-console` client), the checks every page gets (axe-core, console errors,
// 404s), and that no request's URL ever carried the token. Scenarios print JSON lines read by
// tests/e2e/console.rs.
"use strict";

const { launch, signIn, accessToken, urlsWithToken, screenshot, accessibilityViolations, report } = require("../lib.js");

/** Chromium signed in to the console at `base` as `email`. */
async function signedIn({ base, email, password }) {
  const browser = await launch();
  browser.notFound = [];
  browser.expectedNotFound = []; // paths a scenario means to be 404 (another team's charger)
  browser.page.on("response", (r) => r.status() === 404 && browser.notFound.push(new URL(r.url()).pathname));
  await signIn(browser.page, base, email, password);
  browser.token = await accessToken(browser.page);
  return browser;
}

/** The console errors, 404s the scenario did not expect, and URLs that carried the token. Each
 * expected 404 excuses one console line about a 404, no more: a 404 the page's own responses do
 * not show (a /favicon.ico the browser asks for by itself) still fails the scenario. */
function problemsOf(browser) {
  const expected = (p) => browser.expectedNotFound.some((r) => r.test(p));
  const notFound = browser.notFound.filter((p) => !expected(p));
  let excused = browser.notFound.length - notFound.length;
  const problems = browser.problems.filter((p) => !(/status of 404/.test(p) && excused-- > 0));
  return { problems, not_found: notFound, token_in_url: urlsWithToken(browser.requests, browser.token) };
}

/** Checks the page as it stands (axe-core, console errors) and saves its screenshot. */
async function checkPage(browser, name) {
  const violations = await accessibilityViolations(browser.page);
  const file = await screenshot(browser.page, name);
  report({ page: name, violations, screenshot: file, ...problemsOf(browser) });
}

/** Signs in, runs `body(browser)`, reports a failure as `{"failed": message}`, always closes. */
async function run(user, body) {
  let browser = null;
  try {
    browser = await signedIn(user);
    await body(browser);
    report({ done: true, ...problemsOf(browser) });
  } catch (error) {
    if (browser) await screenshot(browser.page, "failure").catch(() => {});
    report({ failed: String(error.stack || error), ...(browser ? problemsOf(browser) : {}) });
    process.exitCode = 1;
  } finally {
    if (browser) await browser.browser.close();
  }
}

module.exports = { signedIn, checkPage, run, report };
