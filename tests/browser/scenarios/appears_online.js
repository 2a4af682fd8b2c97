// The chargers page open while a charger boots: its row turns online without a reload.
// Usage: node appears_online.js BASE EMAIL PASSWORD IDENTITY (prints {"ready"} once the row is shown)
"use strict";

const { run, checkPage, report } = require("./session.js");

const [base, email, password, identity] = process.argv.slice(2);

run({ base, email, password }, async (browser) => {
  const { page } = browser;
  await page.goto(`${base}/console/#/chargers`);
  const row = page.locator("tr", { has: page.locator(`a:text-is("${identity}")`) });
  const state = row.locator('[data-testid="connection"]');
  await row.waitFor();
  report({ ready: (await state.textContent()).trim() });
  const loads = [];
  page.on("load", () => loads.push(page.url()));
  await state.filter({ hasText: /^online$/ }).waitFor({ timeout: 25000 });
  report({ online: identity, reloads: loads.length });
  await checkPage(browser, "console-chargers-online");
});
