// The overview counts the chargers (online, offline, faulted, charging); the chargers page lists it (searched by identity)
// with a link to its page. Usage: node overview_and_chargers.js BASE EMAIL PASSWORD IDENTITY
"use strict";

const { run, checkPage, report } = require("./session.js");

const [base, email, password, identity] = process.argv.slice(2);

run({ base, email, password }, async (browser) => {
  const { page } = browser;
  await page.goto(`${base}/console/#/`);
  await page.waitForSelector('[data-testid="chargers-online"]');
  const text = async (id) => (await page.textContent(`[data-testid="${id}"]`)).trim();
  await page.waitForSelector('[data-testid="power-now"]');
  report({
    overview: {
      total: await text("chargers-total"),
      online: await text("chargers-online"),
      offline: await text("chargers-offline"),
      faulted: await text("chargers-faulted"),
      sessions: await text("sessions-active"),
      power: await text("power-now"),
    },
  });
  // This screenshot is the README's docs/img/console-overview.png.
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
