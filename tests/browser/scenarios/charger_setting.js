// A setting changed on the charger's page, and the charger's answer to it.
// Usage: node charger_setting.js BASE EMAIL PASSWORD UUID KEY VALUE
"use strict";

const { run, checkPage, report } = require("./session.js");

const [base, email, password, uuid, key, value] = process.argv.slice(2);

run({ base, email, password }, async (browser) => {
  const { page } = browser;
  await page.goto(`${base}/console/#/chargers/${uuid}`);
  const input = page.locator(`input[name="${key}"]`);
  await input.fill(value);
  await page.click('button:text-is("Save settings")');
  const answer = page.locator(`[data-testid="settings-outcome"] li[data-key="${key}"]`);
  await answer.waitFor({ timeout: 30000 });
  report({ setting: key, answer: (await answer.textContent()).trim() });
  await checkPage(browser, "console-charger-setting");
});
