// The overview counts the online charger; the chargers page lists it (searched by identity)
// with a link to its page. Usage: node overview_and_chargers.js BASE TOKEN IDENTITY
"use strict";

const { run, checkPage, report } = require("./session.js");

const [base, token, identity] = process.argv.slice(2);

run(token, async (browser) => {
  const { page } = browser;
  await page.goto(`${base}/console/#/`);
  await page.waitForSelector('[data-testid="chargers-online"]');
  const text = async (id) => (await page.textContent(`[data-testid="${id}"]`)).trim();
  report({ overview: { total: await text("chargers-total"), online: await text("chargers-online"), offline: await text("chargers-offline") } });
  await checkPage(browser, "console-overview");

  await page.goto(`${base}/console/#/chargers`);
  const row = page.locator("tr", { has: page.locator(`a:text-is("${identity}")`) });
  await row.waitFor();
  await page.fill('input[name="search"]', identity);
  await page.click('button:text-is("Search")');
  await row.waitFor();
  report({ listed: identity, connection: (await row.locator('[data-testid="connection"]').textContent()).trim() });
  await checkPage(browser, "console-chargers");

  await row.locator("a").click();
  await page.waitForSelector(`h1:text-is("Charger ${identity}")`);
  report({ opened: page.url().replace(/^.*#/, "#") });
});
