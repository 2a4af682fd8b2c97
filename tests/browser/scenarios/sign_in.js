// Signing in through cms's OAuth pages (client `cms-console`, PKCE) opens the overview.
// Usage: node sign_in.js BASE EMAIL PASSWORD
"use strict";

const { launch, signIn, screenshot, report } = require("../lib.js");

const [base, email, password] = process.argv.slice(2);

(async () => {
  const { browser, page, problems } = await launch();
  try {
    await signIn(page, base, email, password);
    await page.waitForSelector('h1:text-is("Overview")');
    await page.waitForSelector('[data-testid="chargers-total"]');
    const stored = await page.evaluate(() => sessionStorage.getItem("cms-console.session"));
    report({ signed_in: true, url: page.url(), token_in_url: /token|code=/.test(page.url()), has_session: Boolean(stored), problems });
    await screenshot(page, "console-sign-in");
  } catch (error) {
    await screenshot(page, "failure-sign-in").catch(() => {});
    report({ failed: String(error.stack || error), problems });
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
})();
