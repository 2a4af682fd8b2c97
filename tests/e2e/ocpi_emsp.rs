//! OCPI 2.2.1 (issue 46, docs/ocpi.md) end to end against an independent eMSP: an app on the PyPI
//! `extrawest-ocpi` framework (tests/interop/ocpi_emsp) that speaks the protocol through that
//! library's endpoints and pydantic schemas, never through cms's types. Whatever cms sends must
//! pass the library's validation; whatever cms serves must parse with the library's schemas.
//!
//! The flows past the handshake's first refusal need the CPO role's parts on main (R the
//! registration, L locations, T tokens, S sessions and CDRs, C commands, D the push
//! dispatcher); they are written against the shared contract and ignored until then.

use crate::support::commanded::CommandedCharger;
use crate::support::ocpi_emsp::Emsp;
use crate::support::rest::{create_tariff, operators_site, team_of_type, uuid_of};
use crate::support::{Api, Cms, eventually};
use serde_json::{Value, json};

/// cms calls the eMSP on 127.0.0.1, which only `--ocpi-allow-private` lets it do.
const LOOPBACK: &[&str] = &["--ocpi-allow-private"];
/// The team's CPO identity in every test.
const CPO: (&str, &str) = ("NL", "CMS");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_cms_does_not_know_is_refused_with_an_ocpi_envelope() {
    let cms = Cms::up_with(LOOPBACK).await;
    let emsp = Emsp::start().await;

    let outcome = (emsp.register_with(&cms.http_url("/ocpi/versions"), "no-such-token")).await;

    assert_eq!(outcome["ok"], false, "{outcome}");
    assert_eq!(outcome["step"], "versions", "{outcome}");
    // A client error (401 once versions are served; before that, the OCPI fallback's 404), in
    // an envelope the library's OCPIResponse reads, with the generic client error's code.
    let status = outcome["status"].as_u64().expect("an HTTP status");
    assert!((400..500).contains(&status), "{outcome}");
    assert_eq!(outcome["answer"]["status_code"], 2000, "{outcome}");
    assert!(
        outcome["error"]
            .as_str()
            .unwrap()
            .contains("OCPI status 2000"),
        "{outcome}"
    );
    // The request ids the eMSP sent come back.
    let sent = emsp.sent().await;
    assert_eq!(sent.len(), 1, "{sent:#?}");
    for (ours, echoed) in [
        ("X-Request-ID", "x-request-id"),
        ("X-Correlation-ID", "x-correlation-id"),
    ] {
        assert_eq!(
            sent[0]["response_headers"][echoed], sent[0]["headers"][ours],
            "{:#?}",
            sent[0]
        );
    }
    assert!(emsp.state().await["peer"].is_null(), "nothing registered");
    assert_eq!(
        emsp.received().await,
        Vec::<Value>::new(),
        "cms never called back"
    );
}

/// A team with its CPO identity and a provider the eMSP stands for, registered.
struct Roaming {
    cms: Cms,
    api: Api,
    team: String,
    provider: String,
    /// The token A the eMSP registered with (spent).
    token_a: String,
    emsp: Emsp,
}

/// `cms up` with `args`, the operators' team as CPO NL*CMS, a provider NL*EMP (priced with an
/// energy-only tariff of 0.50 a kWh) and the eMSP registered through token A.
async fn registered(args: &[&str]) -> Roaming {
    let cms = Cms::up_with(&[LOOPBACK, args].concat()).await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let identity = json!({"country_code": CPO.0, "party_id": CPO.1, "name": "cms e2e"});
    api.expect(
        200,
        "PUT",
        &format!("/api/v3/teams/{team}/ocpi"),
        Some(&identity),
    )
    .await;
    let provider = provider(&api, &team, "EMP").await;
    let emsp = Emsp::start().await;
    let (token, versions_url) = token_a(&api, &team, &provider).await;
    let outcome = emsp.register_with(&versions_url, &token).await;
    assert_eq!(outcome["ok"], true, "{outcome}");
    Roaming {
        cms,
        api,
        team,
        provider,
        token_a: token,
        emsp,
    }
}

/// A provider NL*`party_id` of the team, its drivers priced at 0.50 a kWh; its uuid.
async fn provider(api: &Api, team: &str, party_id: &str) -> String {
    let tariff = json!({"name": format!("Roaming {party_id}"), "currency": "EUR",
        "elements": [{"price_components": [
            {"type": "ENERGY", "price": "0.50", "vat": null, "step_size": 1}]}]});
    let tariff = create_tariff(api, team, &tariff).await;
    let body = json!({"name": format!("eMSP {party_id}"), "country_code": "NL",
        "party_id": party_id, "tariff_uuid": tariff});
    let path = format!("/api/v3/teams/{team}/providers");
    uuid_of(&api.expect(201, "POST", &path, Some(&body)).await["data"])
}

/// Token A for the provider: the token and cms's versions URL.
async fn token_a(api: &Api, team: &str, provider: &str) -> (String, String) {
    let path = format!("/api/v3/teams/{team}/providers/{provider}/ocpi/token");
    let answer = api.expect(201, "POST", &path, None).await;
    let token = answer["data"]["token"].as_str().expect("a token A");
    let url = answer["data"]["versions_url"]
        .as_str()
        .expect("cms's versions URL");
    (token.to_string(), url.to_string())
}

impl Roaming {
    /// The provider's OCPI connection as the operator sees it.
    async fn connection(&self, provider: &str) -> Value {
        let path = format!("/api/v3/teams/{}/providers/{provider}/ocpi", self.team);
        self.api.get_ok(&path).await["data"].clone()
    }

    /// Adds `identity` to the operators' site, connects it (the Python `ocpp` 1.6 charge
    /// point), makes the site take id tags only and publishes it to the provider. Returns the
    /// charger's uuid, the site's and the charger.
    async fn published_charger(&self, identity: &str) -> (String, String, CommandedCharger) {
        let uuid = self.cms.add_charger(identity).await;
        let charger = CommandedCharger::connect(&self.cms.ocpp_url(identity), identity).await;
        let site = operators_site(&self.api).await;
        // A Location needs an address: the default site has none until given one.
        let mut closed = crate::support::rest::site_body("Depot");
        closed["authorization"] = json!("id_tags");
        (self.api)
            .expect(200, "PUT", &format!("/api/v3/sites/{site}"), Some(&closed))
            .await;
        // The site's roaming settings (docs/ocpi.md "Locations and tariffs").
        let roaming = json!({"latitude": "52.378900", "longitude": "4.900400",
            "provider_uuids": [self.provider]});
        let path = format!("/api/v3/sites/{site}/roaming");
        self.api.expect(200, "PUT", &path, Some(&roaming)).await;
        (uuid, site, charger)
    }
}

/// The charger asks until cms answers `Authorize` for `tag` with a status `wanted` accepts.
async fn authorized(charger: &mut CommandedCharger, tag: &str, wanted: impl Fn(&str) -> bool) {
    eventually(&format!("the answer cms gives {tag}"), async || {
        let answer = charger.send(&format!("authorize {tag}")).await;
        match answer["idTagInfo"]["status"].as_str() {
            Some(s) if wanted(s) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
}

/// The eMSP took it: HTTP 200 (a body the library's schema refuses is a 422) and OCPI 1000.
fn accepted(request: &Value) -> bool {
    request["status"] == 200 && request["answer"]["status_code"] == 1000
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_credentials_handshake_both_ways() {
    let roaming = registered(&[]).await;
    let emsp = &roaming.emsp;
    let state = emsp.state().await;
    let peer = &state["peer"];
    let roles = peer["roles"].as_array().expect("cms's roles");
    assert!(
        (roles.iter())
            .any(|r| r["role"] == "CPO" && r["country_code"] == CPO.0 && r["party_id"] == CPO.1),
        "{peer}"
    );
    for module in ["credentials", "locations", "tariffs", "sessions", "cdrs"] {
        let listed = peer["endpoints"].as_array().unwrap();
        assert!(
            listed.iter().any(|e| e["identifier"] == module),
            "{module}: {peer}"
        );
    }
    // cms read the eMSP's versions and details with the token the eMSP gave it (token B).
    let token_b = state["tokens_c"][0].as_str().expect("token B").to_string();
    for module in ["versions", "details"] {
        let got = emsp.received_of(module).await;
        assert!(
            got.iter()
                .any(|r| r["token"] == token_b.as_str() && accepted(r)),
            "{module}: {got:#?}"
        );
    }
    assert_eq!(
        roaming.connection(&roaming.provider).await["status"],
        "registered"
    );
    // Token A is spent, and a token cms never issued is no better: 401 in an OCPI envelope.
    let (team, api) = (&roaming.team, &roaming.api);
    for token in [roaming.token_a.as_str(), "no-such-token"] {
        let url = roaming.cms.http_url("/ocpi/versions");
        let again = emsp.call(json!({"url": url, "token": token})).await;
        assert_eq!(again["status"], 401, "{again}");
        assert_eq!(again["answer"]["status_code"], 2000, "{again}");
    }
    // With the token C cms gave, the eMSP reads cms's modules (nothing published yet).
    let pulled = emsp.pull("locations").await;
    assert_eq!(pulled["ok"], true, "{pulled}");
    assert_eq!(pulled["items"], json!([]), "{pulled}");

    // The other way: cms registers with a second eMSP that issued a token A.
    let other = Emsp::start_as("NL", "EM2").await;
    let provider = provider(api, team, "EM2").await;
    let token = other.issue_token_a().await;
    let path = format!("/api/v3/teams/{team}/providers/{provider}/ocpi/register");
    let body = json!({"versions_url": other.versions_url(), "token": token});
    api.expect(200, "POST", &path, Some(&body)).await;
    let state = other.state().await;
    assert_eq!(state["tokens_a"], json!([]), "token A spent: {state}");
    let peer = &state["peer"];
    assert!(
        peer["versions_url"]
            .as_str()
            .unwrap()
            .ends_with("/ocpi/versions"),
        "{peer}"
    );
    let posted = other.received_of("credentials").await;
    assert!(
        posted
            .iter()
            .any(|r| r["method"] == "POST" && r["token"] == token.as_str() && accepted(r)),
        "{posted:#?}"
    );
    assert_eq!(roaming.connection(&provider).await["status"], "registered");
    let pulled = other.pull("locations").await;
    assert_eq!(pulled["ok"], true, "{pulled}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_published_site_is_pushed_and_pulled_and_its_status_follows_the_charger() {
    let roaming = registered(&[]).await;
    let emsp = &roaming.emsp;
    let (charger_uuid, site, mut charger) = roaming.published_charger("CP-OCPI-1").await;

    let location_path = format!("/ocpi/emsp/2.2.1/locations/{}/{}/{site}", CPO.0, CPO.1);
    let put = emsp
        .wait_received("locations", "the site's Location", |r| {
            r["method"] == "PUT" && r["path"] == location_path.as_str()
        })
        .await;
    assert!(accepted(&put), "the library refused the Location: {put:#}");
    let location = &put["body"];
    assert_eq!(location["id"], site.as_str(), "{location}");
    let evse = (location["evses"].as_array().unwrap().iter())
        .find(|e| e["uid"] == charger_uuid.as_str())
        .unwrap_or_else(|| panic!("the charger's EVSE: {location}"));
    assert_eq!(evse["evse_id"], "NL*CMS*ECPOCPI1", "{evse}");
    assert_eq!(evse["connectors"][0]["id"], "1", "{evse}");

    let pulled = emsp.pull("locations").await;
    assert_eq!(pulled["ok"], true, "{pulled}");
    let ids: Vec<&Value> = pulled["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| &l["id"])
        .collect();
    assert_eq!(ids, [&json!(site)], "{pulled}");
    let one = emsp
        .pull_one("locations", &format!("/{site}/{charger_uuid}"))
        .await;
    assert_eq!(one["ok"], true, "the EVSE by itself: {one}");

    // The pushes of the charger's arrival at the site settle first (its EVSE, AVAILABLE): a
    // change told later is then a PATCH of its status.
    let evse_path = format!("{location_path}/{charger_uuid}");
    emsp.wait_received("locations", "the EVSE told AVAILABLE", |r| {
        r["path"]
            .as_str()
            .is_some_and(|p| p.starts_with(location_path.as_str()))
            && (r["body"]["status"] == "AVAILABLE"
                || r["body"]["evses"][0]["status"] == "AVAILABLE")
    })
    .await;
    charger.send("status 1 Charging").await;
    let patch = emsp
        .wait_received("locations", "the EVSE's status patched", |r| {
            r["method"] == "PATCH"
                && r["path"] == evse_path.as_str()
                && r["body"]["status"] == "CHARGING"
        })
        .await;
    assert!(accepted(&patch), "{patch:#}");
    assert!(patch["body"]["last_updated"].is_string(), "{patch:#}");
    let kept = emsp.objects("locations").await;
    assert_eq!(kept[0]["evses"][0]["status"], "CHARGING", "{kept:#?}");
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_the_emsp_pushes_is_accepted_at_the_charger_until_it_is_invalidated() {
    let roaming = registered(&[]).await;
    let emsp = &roaming.emsp;
    let (_, _, mut charger) = roaming.published_charger("CP-OCPI-2").await;
    authorized(&mut charger, "EMSP-TAG-1", |s| s == "Invalid").await;

    let pushed = emsp
        .push_token(json!({"uid": "EMSP-TAG-1", "whitelist": "ALWAYS"}))
        .await;
    assert_eq!(pushed["ok"], true, "{pushed}");
    authorized(&mut charger, "EMSP-TAG-1", |s| s == "Accepted").await;

    let patched = emsp
        .patch_token(json!({"uid": "EMSP-TAG-1", "valid": false}))
        .await;
    assert_eq!(patched["ok"], true, "{patched}");
    authorized(&mut charger, "EMSP-TAG-1", |s| s != "Accepted").await;
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_start_runs_a_session_pushed_while_running_and_a_cdr_of_the_apis_cost() {
    let roaming = registered(&["--ocpi-session-interval", "1s"]).await;
    let emsp = &roaming.emsp;
    let (charger_uuid, site, mut charger) = roaming.published_charger("CP-OCPI-3").await;
    let pushed = (emsp.push_token(json!({"uid": "EMSP-TAG-3", "whitelist": "ALWAYS"}))).await;
    assert_eq!(pushed["ok"], true, "{pushed}");
    authorized(&mut charger, "EMSP-TAG-3", |s| s == "Accepted").await;

    // START_SESSION: the library writes CiStrings in capitals, so the location id and the EVSE
    // uid reach cms upper-cased (OCPI compares them case-insensitively).
    let fields = json!({"token_uid": "EMSP-TAG-3", "location_id": site,
        "evse_uid": charger_uuid, "connector_id": "1"});
    let started = emsp.command("START_SESSION", fields).await;
    assert_eq!(started["ok"], true, "{started}");
    assert_eq!(started["answer"]["data"]["result"], "ACCEPTED", "{started}");
    charger
        .wait_for("the RemoteStartTransaction", |l| {
            l["received"] == "RemoteStartTransaction"
                && l["payload"]["idTag"] == "EMSP-TAG-3"
                && l["payload"]["connectorId"] == 1
        })
        .await;
    let uid = started["uid"].as_str().unwrap();
    let result = emsp.wait_command_result(uid).await;
    assert_eq!(result["result"], "ACCEPTED", "{result}");

    let answer = (charger.send("start 1 EMSP-TAG-3 0 2026-11-20T10:00:00Z")).await;
    assert_eq!(answer["idTagInfo"]["status"], "Accepted", "{answer}");
    let id = answer["transactionId"].as_i64().expect("a transactionId");
    let session_path = format!("/ocpi/emsp/2.2.1/sessions/{}/{}/", CPO.0, CPO.1);
    let active = emsp
        .wait_received("sessions", "the running Session", |r| {
            r["method"] == "PUT"
                && r["path"].as_str().unwrap().starts_with(&session_path)
                && r["body"]["status"] == "ACTIVE"
        })
        .await;
    assert!(
        accepted(&active),
        "the library refused the Session: {active:#}"
    );
    let session = &active["body"];
    assert_eq!(session["cdr_token"]["uid"], "EMSP-TAG-3", "{session}");
    assert_eq!(session["location_id"], site.as_str(), "{session}");
    assert_eq!(session["evse_uid"], charger_uuid.as_str(), "{session}");
    assert_eq!(session["connector_id"], "1", "{session}");

    charger
        .send(&format!("stop {id} - 10000 2026-11-20T11:00:00Z"))
        .await;
    let session_id = session["id"].as_str().unwrap().to_string();
    let posted = emsp
        .wait_received("cdrs", "the CDR", |r| {
            r["method"] == "POST" && r["body"]["session_id"] == session_id.as_str()
        })
        .await;
    assert!(accepted(&posted), "the library refused the CDR: {posted:#}");
    let cdr = &posted["body"];
    let path = format!("/api/v3/chargers/{charger_uuid}/transactions/{id}");
    let transaction = roaming.api.get_ok(&path).await["data"].clone();
    let cost: f64 = (transaction["cost"]["excl_vat"].as_str())
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("a priced transaction: {transaction}"));
    assert_eq!(cost, 5.0, "10 kWh at 0.50: {transaction}");
    assert_eq!(cdr["total_cost"]["excl_vat"].as_f64(), Some(cost), "{cdr}");
    assert_eq!(cdr["total_energy"].as_f64(), Some(10.0), "{cdr}");
    // The Session's and the CDR's id: the transaction's uuid (the contract's wire decision).
    assert_eq!(cdr["id"], session_id.as_str(), "{cdr}");
    assert_eq!(transaction["uuid"], session_id.as_str(), "{transaction}");
    emsp.wait_received("sessions", "the Session completed", |r| {
        r["path"].as_str().unwrap().ends_with(&session_id) && r["body"]["status"] == "COMPLETED"
    })
    .await;
    for module in ["sessions", "cdrs"] {
        let pulled = emsp.pull(module).await;
        assert_eq!(pulled["ok"], true, "{module}: {pulled}");
        assert_eq!(
            pulled["items"][0]["id"],
            session_id.as_str(),
            "{module}: {pulled}"
        );
    }
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_real_time_authorisation_falls_back_on_the_tokens_whitelist() {
    let roaming = registered(&["--ocpi-authorize-timeout", "1s"]).await;
    let emsp = &roaming.emsp;
    let (_, _, mut charger) = roaming.published_charger("CP-OCPI-4").await;
    // Each asked in real time; `delay` past cms's 1 s means cms decides alone.
    for (uid, whitelist, allowed, delay) in [
        ("RT-QUICK-YES", "NEVER", "ALLOWED", 0.0),
        ("RT-QUICK-NO", "NEVER", "BLOCKED", 0.0),
        ("RT-LATE-OFFLINE", "ALLOWED_OFFLINE", "ALLOWED", 3.0),
        ("RT-LATE-NEVER", "NEVER", "ALLOWED", 3.0),
    ] {
        emsp.set_authorize(uid, allowed, delay).await;
        let pushed = emsp
            .push_token(json!({"uid": uid, "whitelist": whitelist}))
            .await;
        assert_eq!(pushed["ok"], true, "{pushed}");
    }
    authorized(&mut charger, "RT-QUICK-YES", |s| s == "Accepted").await;
    authorized(&mut charger, "RT-QUICK-NO", |s| s != "Accepted").await;
    // Late: ALLOWED_OFFLINE lets cms accept without the answer, NEVER does not.
    authorized(&mut charger, "RT-LATE-OFFLINE", |s| s == "Accepted").await;
    authorized(&mut charger, "RT-LATE-NEVER", |s| s != "Accepted").await;
    for uid in [
        "RT-QUICK-YES",
        "RT-QUICK-NO",
        "RT-LATE-OFFLINE",
        "RT-LATE-NEVER",
    ] {
        let path = format!("/ocpi/emsp/2.2.1/tokens/{uid}/authorize");
        emsp.wait_arrived("tokens", &format!("cms asking about {uid}"), |r| {
            r["method"] == "POST" && r["path"] == path.as_str()
        })
        .await;
    }
    charger.finish().await;
}
