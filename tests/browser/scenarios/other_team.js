// A user of another team: the charger is not in their list, its page is an error, the
// overview counts nothing of it. Usage: node other_team.js BASE EMAIL PASSWORD IDENTITY UUID
"use strict";

const { run, checkPage, report } = require("./session.js");

const [base, email, password, identity, uuid] = process.argv.slice(2);

run({ base, email, password }, async (browser) => {
  const { page } = browser;
  browser.expectedNotFound.push(new RegExp(`^/api/v3/chargers/${uuid}$`));
  await page.goto(`${base}/console/#/`);
  await page.waitForSelector('[data-testid="chargers-total"]');
  report({ overview_total: (await page.textContent('[data-testid="chargers-total"]')).trim() });
  await page.goto(`${base}/console/#/chargers`);
  await page.waitForSelector('[data-testid="no-chargers"], table');
  report({ listed: await page.locator(`a:text-is("${identity}")`).count() });
  await checkPage(browser, "console-other-team-chargers");
  await page.goto(`${base}/console/#/chargers/${uuid}`);
  const alert = page.locator('[role="alert"]');
  await alert.waitFor();
  report({ charger_page: (await alert.textContent()).trim(), shows_identity: await page.locator(`text=${identity}`).count() });
  await checkPage(browser, "console-other-team-charger");
});
