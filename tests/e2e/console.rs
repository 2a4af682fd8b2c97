//! The operator console (issue 43) in a real browser: Debian's Chromium driven by the node
//! scenarios of tests/browser/scenarios (playwright-core, axe-core), against `cms up` and the
//! Python `ocpp` charge point. Each scenario prints JSON lines (what the page showed, its
//! accessibility violations, its console errors) and saves screenshots as artefacts.
//!
//! Needs node with tests/browser's packages (`cd tests/browser && npm ci`), /usr/bin/chromium
//! (or `CMS_TEST_CHROMIUM`) and python3 with tests/interop's packages: scripts/test installs
//! them. Without them the tests fail, never skip.

use crate::support::commanded::CommandedCharger;
use crate::support::peer::Peer;
use crate::support::rest::{create_site, uuid_of};
use crate::support::{Api, Charger, Cms, Handshake};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;

/// How long a scenario may run: Chromium's start, the sign-in, a few pages, a charger's answer.
const SCENARIO_LIMIT: Duration = Duration::from_secs(45);

/// The operator `Cms::operator_token` makes, who signs in to the console in these tests.
pub const OPERATOR: &str = "operator@example.com";

/// The password the console's users of these tests sign in with.
pub const PASSWORD: &str = "a console password 1";

/// Gives `email` (made when absent; `extra` = `["--guest"]` keeps a new user outside the
/// operators' team) the password to sign in with on the OAuth pages, as an operator would with
/// `cms user create`; returns the arguments every scenario starts with: base URL, e-mail,
/// password.
pub async fn console_user(cms: &Cms, email: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["user", "create", "--email", email, "--password", PASSWORD];
    args.extend_from_slice(extra);
    let out = cms.cli(&args).await;
    assert!(out.status.success(), "user create: {}", out.stderr);
    vec![cms.http_url(""), email.to_string(), PASSWORD.to_string()]
}

/// Starts `node scenarios/<name>.js user... args...` in tests/browser: `user` is what
/// `console_user` returned.
fn scenario(name: &str, user: &[String], args: &[&str]) -> Peer {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/browser");
    let script = format!("scenarios/{name}.js");
    let all: Vec<&str> = std::iter::once(script.as_str())
        .chain(user.iter().map(String::as_str))
        .chain(args.iter().copied())
        .collect();
    let needs = "the console tests need node, tests/browser's packages (`cd tests/browser && \
                 npm ci`) and Chromium at /usr/bin/chromium (scripts/test installs them)";
    Peer::start(
        format!("the browser scenario {name}"),
        "node",
        &dir,
        &all,
        needs,
    )
}

/// Waits for the line that has `key`; fails on a `failed` line first.
async fn line(browser: &mut Peer, key: &str) -> Value {
    let found = browser
        .wait_within(SCENARIO_LIMIT, &format!("a line with {key:?}"), |l| {
            l.get(key).is_some() || l.get("failed").is_some()
        })
        .await;
    assert!(found.get("failed").is_none(), "{}: {found}", browser.name);
    found
}

/// Waits for the scenario to end well: every page it checked free of serious and critical
/// accessibility violations, no console error (CSP refusals among them), exit 0.
async fn finish(mut browser: Peer) {
    line(&mut browser, "done").await;
    let pages: Vec<Value> = (browser.printed().iter())
        .filter(|l| l.get("page").is_some() || l.get("done").is_some())
        .cloned()
        .collect();
    for page in &pages {
        let violations = page["violations"].as_array().cloned().unwrap_or_default();
        assert!(
            violations.is_empty(),
            "accessibility violations on {}: {violations:?}",
            page["page"]
        );
        let problems = page["problems"].as_array().cloned().unwrap_or_default();
        assert!(
            problems.is_empty(),
            "console errors on {}: {problems:?}",
            page["page"]
        );
        let missing = page["not_found"].as_array().cloned().unwrap_or_default();
        assert!(
            missing.is_empty(),
            "the console asked for what is not there: {missing:?}"
        );
        let leaked = page["token_in_url"].as_array().cloned().unwrap_or_default();
        assert!(leaked.is_empty(), "the token in a URL: {leaked:?}");
    }
    let status = browser.close_stdin_and_wait(SCENARIO_LIMIT).await;
    browser.assert_exit(status, 0);
}

/// A registered charger with the Python charge point connected and booted, connector 1
/// reported.
async fn connected(cms: &Cms, identity: &str) -> (String, CommandedCharger) {
    let uuid = cms.add_charger(identity).await;
    let token = cms.operator_token().await;
    let mut charger = CommandedCharger::connect(&cms.ocpp_url(identity), identity).await;
    charger.send("status 1 Available").await;
    let api = Api::new(cms, &token);
    api.wait_for_charger(&uuid, "online", |c| c["connection_status"] == "online")
        .await;
    // The configuration read after the boot, so that the settings are there to edit.
    let settings = format!("/api/v3/chargers/{uuid}/settings");
    crate::support::eventually("the configuration read after the boot", async || {
        let kept = api.get_ok(&settings).await;
        match kept["data"].as_array().is_some_and(|d| !d.is_empty()) {
            true => Ok(()),
            false => Err(kept.to_string()),
        }
    })
    .await;
    (uuid, charger)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_and_the_chargers_page_show_the_online_charger() {
    let cms = Cms::up().await;
    let (uuid, charger) = connected(&cms, "CP-CONSOLE-LIST").await;
    let depot = small_depot(&cms).await;
    let user = console_user(&cms, OPERATOR, &[]).await;
    let mut browser = scenario("overview_and_chargers", &user, &["CP-CONSOLE-LIST"]);

    let overview = line(&mut browser, "overview").await;
    assert_eq!(
        overview["overview"],
        json!({"total": "4", "online": "3", "offline": "1", "faulted": "1",
            "sessions": "1", "power": "7.4 kW"})
    );
    let listed = line(&mut browser, "listed").await;
    assert_eq!(listed["connection"], "online", "{listed}");
    let opened = line(&mut browser, "opened").await;
    assert_eq!(opened["opened"], format!("#/chargers/{uuid}"));
    finish(browser).await;
    charger.finish().await;
    drop(depot);
}

/// Beside the test's charger, the rest of a small depot for the overview (and the README's
/// screenshot of it): one charging at 7.4 kW, one faulted, one never connected.
async fn small_depot(cms: &Cms) -> [Charger; 2] {
    for identity in [
        "CP-DEPOT-CHARGING",
        "CP-DEPOT-FAULTED",
        "CP-DEPOT-NEVER-SEEN",
    ] {
        cms.add_charger(identity).await;
    }
    let mut charging = Charger::connect_and_boot(cms, "CP-DEPOT-CHARGING", "1.0").await;
    let mut faulted = Charger::connect_and_boot(cms, "CP-DEPOT-FAULTED", "1.0").await;
    let status =
        |status: &str, error: &str| json!({"connectorId": 1, "status": status, "errorCode": error});
    faulted
        .call_result("StatusNotification", status("Faulted", "GroundFailure"))
        .await;
    charging
        .call_result("StatusNotification", status("Charging", "NoError"))
        .await;
    let start = json!({"connectorId": 1, "idTag": "TAG-DEPOT", "meterStart": 0,
        "timestamp": chrono::Utc::now().to_rfc3339()});
    let id = charging.call_result("StartTransaction", start).await["transactionId"].clone();
    let reading = json!({"connectorId": 1, "transactionId": id, "meterValue": [{
        "timestamp": chrono::Utc::now().to_rfc3339(),
        "sampledValue": [{"value": "7.4", "measurand": "Power.Active.Import", "unit": "kW"},
            {"value": "1200", "measurand": "Energy.Active.Import.Register", "unit": "Wh"}]}]});
    charging.call_result("MeterValues", reading).await;
    // The overview as the page will read it, once the bus has brought it all.
    let api = Api::new(cms, &cms.operator_token().await);
    crate::support::eventually("the depot in the overview", async || {
        let overview = api.get_ok("/api/v3/overview").await;
        let data = &overview["data"];
        match (data["chargers"]["faulted"] == 1 && data["sessions"]["active"] == 1)
            && data["sessions"]["power_w"].as_f64() == Some(7400.0)
        {
            true => Ok(()),
            false => Err(overview.to_string()),
        }
    })
    .await;
    [charging, faulted]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_sent_from_the_chargers_page_shows_the_chargers_answer() {
    let cms = Cms::up().await;
    let (uuid, mut charger) = connected(&cms, "CP-CONSOLE-RESET").await;
    let user = console_user(&cms, OPERATOR, &[]).await;
    let mut browser = scenario("charger_reset", &user, &[&uuid]);

    let reset = line(&mut browser, "reset").await;
    assert_eq!(reset["reset"], "The charger answered: Accepted", "{reset}");
    charger.assert_received_once("Reset", &json!({"type": "Soft"}));
    finish(browser).await;
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setting_changed_on_the_chargers_page_reaches_the_charger() {
    let cms = Cms::up().await;
    let (uuid, mut charger) = connected(&cms, "CP-CONSOLE-SET").await;
    let user = console_user(&cms, OPERATOR, &[]).await;
    let args = [uuid.as_str(), "HeartbeatInterval", "120"];
    let mut browser = scenario("charger_setting", &user, &args);

    let answer = line(&mut browser, "setting").await;
    assert_eq!(answer["answer"], "HeartbeatInterval: Accepted", "{answer}");
    charger.assert_received_once(
        "ChangeConfiguration",
        &json!({"key": "HeartbeatInterval", "value": "120"}),
    );
    finish(browser).await;
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_of_another_team_sees_none_of_the_charger() {
    let cms = Cms::up().await;
    let (uuid, charger) = connected(&cms, "CP-CONSOLE-MINE").await;
    // Another customer, with a charger of their own.
    let email = "stranger@example.org";
    let stranger = cms.guest_token(email).await;
    let theirs = Api::new(&cms, &stranger);
    let site = uuid_of(&create_site(&theirs, "Their yard").await);
    let path = format!("/api/v3/sites/{site}/chargers");
    let body = json!({"identity": "CP-THEIRS"});
    theirs.expect(201, "POST", &path, Some(&body)).await;
    let user = console_user(&cms, email, &["--guest"]).await;
    let mut browser = scenario("other_team", &user, &["CP-CONSOLE-MINE", uuid.as_str()]);

    let overview = line(&mut browser, "overview_total").await;
    assert_eq!(
        overview["overview_total"], "1",
        "only their own charger: {overview}"
    );
    let listed = line(&mut browser, "listed").await;
    assert_eq!(
        listed["listed"], 0,
        "the operator's charger in their list: {listed}"
    );
    let page = line(&mut browser, "charger_page").await;
    assert_eq!(page["charger_page"], "Charger not found.", "{page}");
    assert_eq!(page["shows_identity"], 0, "{page}");
    finish(browser).await;
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charger_that_boots_turns_online_on_the_chargers_page_without_a_reload() {
    let cms = Cms::up().await;
    let identity = "CP-CONSOLE-BOOT";
    cms.add_charger(identity).await;
    let user = console_user(&cms, OPERATOR, &[]).await;
    let mut browser = scenario("appears_online", &user, &[identity]);

    let ready = line(&mut browser, "ready").await;
    assert_eq!(ready["ready"], "never seen", "{ready}");
    let charger = CommandedCharger::connect(&cms.ocpp_url(identity), identity).await;
    let online = line(&mut browser, "online").await;
    assert_eq!(online["reloads"], 0, "{online}");
    finish(browser).await;
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charger_with_a_wrong_password_shows_wrong_password_on_its_page() {
    let cms = Cms::up().await;
    let identity = "CP-CONSOLE-PASSWORD";
    let uuid = cms
        .add_charger_with(identity, &["--password", "the-right-password-1"])
        .await;
    let refused = Handshake::new(&cms, identity)
        .basic_auth(identity, "not-the-password-22")
        .refused_status()
        .await;
    assert_eq!(refused, 401);
    let user = console_user(&cms, OPERATOR, &[]).await;
    let mut browser = scenario("wrong_password", &user, &[&uuid]);

    let reason = line(&mut browser, "reason").await;
    assert_eq!(reason["reason"], "wrong password", "{reason}");
    finish(browser).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signing_in_opens_the_overview_and_signing_out_revokes_the_token() {
    let cms = Cms::up().await;
    let user = console_user(&cms, "console@example.com", &[]).await;
    let mut browser = scenario("sign_in", &user, &[]);

    let signed_in = line(&mut browser, "signed_in").await;
    assert_eq!(signed_in["has_token"], true, "{signed_in}");
    assert_eq!(signed_in["api_status"], 200, "{signed_in}");
    let signed_out = line(&mut browser, "signed_out").await;
    assert_eq!(
        signed_out["kept_in_tab"],
        Value::Null,
        "the tab forgets the token: {signed_out}"
    );
    assert_eq!(
        signed_out["api_status"], 401,
        "the API refuses the revoked token: {signed_out}"
    );
    // No console error, no 404, and no request's URL with the token, from sign-in to sign-out.
    finish(browser).await;
}
