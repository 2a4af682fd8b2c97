// A reset sent from the charger's page, and the charger's answer shown on it.
// Usage: node charger_reset.js BASE EMAIL PASSWORD UUID
"use strict";

const { run, checkPage, report } = require("./session.js");

const [base, email, password, uuid] = process.argv.slice(2);

run({ base, email, password }, async (browser) => {
  const { page } = browser;
  await page.goto(`${base}/console/#/chargers/${uuid}`);
  await page.waitForSelector('input[name="HeartbeatInterval"]');
  await page.waitForSelector('#actions-log ~ div table, #actions-log ~ div p');
  await checkPage(browser, "console-charger");
  const reset = page.locator('form[aria-label="Reset"]');
  await reset.locator('select[name="type"]').selectOption("Soft");
  await reset.locator('button[type="submit"]').click();
  const outcome = page.locator('li[data-action="reset"] [data-testid="outcome"]');
  await outcome.filter({ hasText: "answered" }).waitFor({ timeout: 30000 });
  report({ reset: (await outcome.textContent()).trim() });
  await checkPage(browser, "console-charger-reset");
});
