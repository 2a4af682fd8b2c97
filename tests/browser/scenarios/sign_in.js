// Signing in through cms's OAuth pages (client `cms-console`, PKCE) opens the overview; signing
// out revokes the token: the API refuses it afterwards. Usage: node sign_in.js BASE EMAIL PASSWORD
"use strict";

const { run, checkPage, report } = require("./session.js");

const [base, email, password] = process.argv.slice(2);

/** The API's answer to the token, as any other client holding it would get it. */
async function statusWith(token) {
  const response = await fetch(`${base}/api/v2/teams`, { headers: { Authorization: `Bearer ${token}` } });
  return response.status;
}

run({ base, email, password }, async (browser) => {
  const { page, token } = browser;
  await page.waitForSelector('h1:text-is("Overview")');
  await page.waitForSelector('[data-testid="chargers-total"]');
  report({ signed_in: true, url: page.url(), has_token: Boolean(token), api_status: await statusWith(token) });
  await checkPage(browser, "console-sign-in");

  await page.click("#sign-out");
  await page.waitForSelector('h1:text-is("Signed out")');
  const kept = await page.evaluate(() => sessionStorage.getItem("cms-console.session"));
  report({ signed_out: true, kept_in_tab: kept, api_status: await statusWith(token) });
  await checkPage(browser, "console-signed-out");
});
