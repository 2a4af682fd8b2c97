// The sites list's link to a site's smart charging, and that page: the site's limit, a
// connector's allocation and the live chart. Run by tests/e2e/console_sessions.rs.
"use strict";

const { report } = require("../lib.js");
const { run } = require("./session_token.js");

run(async ({ page, base, args, check }) => {
  await page.goto(`${base}/console/#/sites`);
  const link = page.locator(`a[href="#/sites/${args.site}/smart-charging"]`);
  await link.waitFor();
  report({ page: "sites", link: await link.getAttribute("href") });
  await check("sites");
  await link.click();
  const allocation = page.locator(`tr[data-connector="${args.connector}"] [data-col="allocation"]`);
  await allocation.waitFor();
  await page.waitForSelector(".chart canvas");
  report({
    page: "smart-charging",
    limit: await page.textContent('[data-testid="grid-limit"]'),
    allocation: await allocation.textContent(),
    canvases: await page.locator(".chart canvas").count(),
  });
  await check("smart-charging");
});
