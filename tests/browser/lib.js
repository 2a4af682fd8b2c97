// What every browser scenario of the console's tests shares: Debian's Chromium started headless
// through playwright-core (which downloads no browser), sign-in through cms's OAuth pages, a
// screenshot saved as an artefact, and the axe-core accessibility check.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { chromium } = require("playwright-core");

/** Chromium with the flags this closed, shared machine needs (no background connections). */
async function launch() {
  const browser = await chromium.launch({
    executablePath: process.env.CMS_TEST_CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  // Every console error and refused resource (a CSP violation among them) fails the scenario.
  const problems = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  // Every address the page asked for, to show that no token ever travels in a URL.
  const requests = [];
  page.on("request", (r) => requests.push(r.url()));
  return { browser, context, page, problems, requests };
}

/** Opens the console and signs in through the OAuth login and approval pages. */
async function signIn(page, base, email, password) {
  await page.goto(`${base}/console/`);
  await page.waitForURL(/\/oauth\/authorize/);
  await page.fill('input[name="email"]', email);
  await page.fill('input[name="password"]', password);
  await page.click('button[type="submit"]');
  const approve = page.locator('button[name="decision"][value="approve"], button:has-text("Approve")');
  if (await approve.count()) await approve.first().click();
  await page.waitForURL((url) => url.pathname === "/console/" && !url.search.includes("code="));
  // Back at the console, which trades the code for its tokens before it draws a page.
  await page.waitForFunction(() => sessionStorage.getItem("cms-console.session"));
  await page.waitForSelector("#sign-out:not([hidden])");
}

/** The access token the signed-in console holds (to check the API's answer to it). */
async function accessToken(page) {
  return page.evaluate(() => JSON.parse(sessionStorage.getItem("cms-console.session") || "null")?.access || null);
}

/** The requested URLs that carry `token` or any `access_token=` parameter: none, ever. */
function urlsWithToken(requests, token) {
  const forms = token ? [token, encodeURIComponent(token)] : [];
  return requests.filter((url) => url.includes("access_token=") || forms.some((t) => url.includes(t)));
}

/** Saves a screenshot of the page as `<name>.png` in the artefacts folder. */
async function screenshot(page, name) {
  const dir = process.env.CMS_TEST_ARTEFACTS || path.join(__dirname, "..", "..", "target", "browser-artefacts");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** The serious and critical accessibility violations axe-core finds on the page. */
async function accessibilityViolations(page) {
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not
  // govern: a <script> tag of axe's would be refused by the console's policy, as it should be.
  await page.evaluate(fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8"));
  const result = await page.evaluate(async () => await window.axe.run(document));
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/** One line of the scenario's result on stdout, read by the Rust test that ran it. */
function report(fields) {
  process.stdout.write(`${JSON.stringify(fields)}\n`);
}

module.exports = { launch, signIn, accessToken, urlsWithToken, screenshot, accessibilityViolations, report };
