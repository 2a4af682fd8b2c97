// The sessions list (its kWh and cost, and the CSV the browser downloads) and a session's page
// (its kWh, cost, chart and the chart's figures as text). Run by tests/e2e/console_sessions.rs.
"use strict";

const fs = require("node:fs");
const { report } = require("../lib.js");
const { run } = require("./session_token.js");

run(async ({ page, base, args, check }) => {
  if (args.session) {
    await page.goto(`${base}/console/#/sessions/${args.session}`);
    await page.waitForSelector('[data-testid="session-kwh"]');
    await page.waitForSelector(".chart canvas");
    report({
      page: "session",
      kwh: await page.textContent('[data-testid="session-kwh"]'),
      cost: await page.textContent('[data-testid="session-cost"]'),
      canvases: await page.locator(".chart canvas").count(),
      summary: await page.textContent("table.chart-summary"),
    });
    await check("session");
  }
  if (args.team) {
    await page.goto(`${base}/console/#/sessions`);
    const row = page.locator(`tr[data-transaction="${args.row}"]`);
    await row.waitFor();
    const download = page.waitForEvent("download");
    await page.click('button:has-text("Export CSV")');
    const file = await (await download).path();
    report({
      page: "sessions",
      kwh: await row.locator('[data-col="kwh"]').textContent(),
      cost: await row.locator('[data-col="cost"]').textContent(),
      csv: fs.readFileSync(file, "utf8"),
    });
    await check("sessions");
  }
});
