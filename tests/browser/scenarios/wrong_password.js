// A charger refused for its password: its page says "wrong password".
// Usage: node wrong_password.js BASE EMAIL PASSWORD UUID
"use strict";

const { run, checkPage, report } = require("./session.js");

const [base, email, password, uuid] = process.argv.slice(2);

run({ base, email, password }, async (browser) => {
  const { page } = browser;
  await page.goto(`${base}/console/#/chargers/${uuid}`);
  const reason = page.locator('[data-testid="reason"]').first();
  await reason.waitFor();
  report({ reason: (await reason.textContent()).trim() });
  await checkPage(browser, "console-charger-wrong-password");
});
