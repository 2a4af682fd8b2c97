// The id tags page: a team's tag and its status, a charger's local-list sync state, and a tag
// added from the page. Run by tests/e2e/console_sessions.rs.
"use strict";

const { report } = require("../lib.js");
const { run } = require("./session_token.js");

run(async ({ page, base, args, check }) => {
  await page.goto(`${base}/console/#/id-tags`);
  await page.selectOption("#team", args.team);
  const tag = page.locator(`tr[data-tag="${args.tag}"]`);
  await tag.waitFor();
  const charger = page.locator(`tr[data-charger="${args.charger}"] [data-col="sync"]`);
  await charger.waitFor();
  const found = {
    page: "id-tags",
    tag: await tag.locator("code").textContent(),
    tag_status: await tag.locator("td:nth-child(3)").textContent(),
    sync: await charger.textContent(),
  };
  await check("id-tags");
  await page.fill("#new-tag", "TAG-IT-NEW");
  await page.fill("#new-name", "Added in the console");
  await page.click('form[aria-label="Add an id tag"] button[type="submit"]');
  await page.locator('tr[data-tag="TAG-IT-NEW"]').waitFor();
  found.added = await page.locator('tr[data-tag="TAG-IT-NEW"] code').textContent();
  report(found);
});
