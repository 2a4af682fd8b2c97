//! OCPI 2.2.1 Tokens in the CPO role (docs/ocpi.md, "Tokens"), end to end against `cms up`: an
//! eMSP pushes its drivers' tokens (PUT, PATCH, GET under `/ocpi/2.2.1/tokens`) and cms answers
//! chargers for them, from memory or, as each token's whitelist says, after a real-time
//! authorisation by the eMSP: here a real local HTTP server (axum) that answers in time or late.
//! `kafka.rs`: the same across `cms api` and `cms gateway`.

mod kafka;

use crate::support::commanded::CommandedCharger;
use crate::support::rest::{operators_site, team_of_type, uuid_of};
use crate::support::station201::RawStation201;
use crate::support::{Api, Charger, Cms, eventually};
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use base64::Engine;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The token the eMSP calls cms with, and the one cms calls it with.
const EMSP_TOKEN: &str = "emsp-calls-cms-with-this";
const CMS_TOKEN: &str = "cms-calls-the-emsp-with-this";
const TOKENS: &str = "/ocpi/2.2.1/tokens/NL/EMP";

/// The operator's default site turned `id_tags`, whose team has the provider NL*EMP,
/// registered as an OCPI party.
struct Roaming {
    api: Api,
    /// The OCPI side, as the eMSP calls.
    emsp: Api,
    site: String,
    team: String,
    provider: String,
}

impl Roaming {
    /// `identity` added to `cms up`; `tokens_url`: the eMSP's tokens SENDER endpoint, for
    /// real-time authorisation.
    async fn set_up(cms: &Cms, identity: &str, tokens_url: Option<&str>) -> Roaming {
        cms.add_charger(identity).await;
        let api = Api::new(cms, &cms.operator_token().await);
        let store = cms.open_store().await;
        Roaming::set_up_with(api, &cms.http_url(""), store, tokens_url).await
    }

    /// The same where `api` (an operator's) serves at `base` and keeps `store`, once a charger
    /// was added (the default site exists).
    async fn set_up_with(
        api: Api,
        base: &str,
        store: cms_store::Store,
        tokens_url: Option<&str>,
    ) -> Roaming {
        let team = uuid_of(&team_of_type(&api, "operators").await);
        let site = operators_site(&api).await;
        let closed = json!({"authorization": "id_tags"});
        api.expect(200, "PUT", &format!("/api/v3/sites/{site}"), Some(&closed))
            .await;
        let body = json!({"name": "Roam", "country_code": "NL", "party_id": "EMP"});
        let providers = format!("/api/v3/teams/{team}/providers");
        let provider = uuid_of(&api.expect(201, "POST", &providers, Some(&body)).await["data"]);
        register_party(store, &provider, tokens_url).await;
        Roaming {
            api,
            emsp: Api::at(base, ""),
            site,
            team,
            provider,
        }
    }

    /// An OCPI request as the eMSP makes it (`Authorization: Token base64(token)`).
    async fn ocpi(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let token = base64::engine::general_purpose::STANDARD.encode(EMSP_TOKEN);
        let header = format!("Token {token}");
        let answer = (self.emsp)
            .send_authorized(method, path, body, Some(&header))
            .await;
        (answer.status, answer.json)
    }

    /// PUTs `token` at its own uid and type, expecting success.
    async fn push(&self, token: &Value) {
        let path = format!(
            "{TOKENS}/{}?type={}",
            token["uid"].as_str().unwrap(),
            token["type"]
        );
        let path = path.replace('"', "");
        let (status, answer) = self.ocpi("PUT", &path, Some(token)).await;
        assert_eq!(
            (status, &answer["status_code"]),
            (200, &json!(1000)),
            "{answer}"
        );
    }

    /// The provider's id tags as the REST API lists them.
    async fn id_tags(&self) -> Value {
        let path = format!(
            "/api/v3/teams/{}/providers/{}/id-tags",
            self.team, self.provider
        );
        self.api.get_ok(&path).await["data"].clone()
    }
}

/// Until the credentials handshake (part R) is on main, a party cannot register over HTTP: this
/// writes the provider's OCPI connection into the store of `cms up` (or `cms api`) directly, as
/// registered. Switch it to the handshake once that lands.
async fn register_party(store: cms_store::Store, provider_uuid: &str, tokens_url: Option<&str>) {
    use cms_store::ocpi::{parties::PartyConnection, token_hash};
    let provider = store.provider_by_uuid(provider_uuid).await.unwrap();
    let endpoints = tokens_url
        .map(|url| json!([{"identifier": "tokens", "role": "SENDER", "url": url}]).to_string());
    let connection = PartyConnection {
        incoming_token_hash: token_hash(EMSP_TOKEN),
        outgoing_token: Some(CMS_TOKEN.into()),
        status: "registered".into(),
        versions_url: None,
        endpoints,
        roles: None,
    };
    store
        .ocpi_save_party(provider.expect("the provider").id, &connection)
        .await
        .unwrap();
    store.close().await;
}

fn token(uid: &str, whitelist: &str) -> Value {
    json!({
        "country_code": "NL", "party_id": "EMP", "uid": uid, "type": "RFID",
        "contract_id": format!("NL-EMP-C{uid}"), "issuer": "Roam B.V.", "valid": true,
        "whitelist": whitelist, "last_updated": "2026-03-01T10:00:00Z"
    })
}

/// Authorize until the gateway answers `status` for `tag` (its tags follow the store within a
/// second of a push).
async fn authorized(charger: &mut Charger, tag: &str, status: &str) {
    eventually(&format!("{tag} to be {status}"), async || {
        let answer = charger
            .call_result("Authorize", json!({"idTag": tag}))
            .await;
        match answer["idTagInfo"]["status"].as_str() {
            Some(s) if s == status => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_emsp_puts_patches_and_reads_its_tokens_and_drivers_are_answered_by_them() {
    let cms = Cms::up().await;
    let roaming = Roaming::set_up(&cms, "CP-TOKENS", None).await;
    let card = token("04A2B3C4D5", "ALWAYS");
    roaming.push(&card).await;
    let path = format!("{TOKENS}/04A2B3C4D5");
    let (status, got) = roaming.ocpi("GET", &path, None).await;
    assert_eq!((status, &got["data"]), (200, &card), "{got}");
    // The same uid of another type is another token, unknown here.
    let (status, got) = roaming
        .ocpi("GET", &format!("{path}?type=APP_USER"), None)
        .await;
    assert_eq!((status, &got["status_code"]), (404, &json!(2004)), "{got}");

    // The token is one of the provider's id tags, and a charger at the team's site takes it.
    let tags = roaming.id_tags().await;
    assert_eq!(tags[0]["id_tag"], "04A2B3C4D5", "{tags}");
    assert_eq!(tags[0]["status"], "Accepted", "{tags}");
    let mut charger = Charger::connect_and_boot(&cms, "CP-TOKENS", "1.0").await;
    authorized(&mut charger, "04a2b3c4d5", "Accepted").await;

    // Invalidated by a PATCH: the rest is kept, and the driver is refused.
    let patch = json!({"valid": false, "last_updated": "2026-03-02T10:00:00Z"});
    let (status, got) = roaming.ocpi("PATCH", &path, Some(&patch)).await;
    assert_eq!((status, &got["status_code"]), (200, &json!(1000)), "{got}");
    let (_, got) = roaming.ocpi("GET", &path, None).await;
    assert_eq!(got["data"]["valid"], false, "{got}");
    assert_eq!(got["data"]["issuer"], "Roam B.V.", "{got}");
    assert_eq!(got["data"]["last_updated"], "2026-03-02T10:00:00Z", "{got}");
    authorized(&mut charger, "04A2B3C4D5", "Blocked").await;
    assert_eq!(roaming.id_tags().await[0]["status"], "Blocked");

    // What an eMSP gets wrong is a 400 with 2001, and changes nothing.
    let no_last_updated = json!({"valid": true});
    let mut no_issuer = card.clone();
    no_issuer.as_object_mut().unwrap().remove("issuer");
    let mut bad_whitelist = card.clone();
    bad_whitelist["whitelist"] = json!("SOMETIMES");
    let mut long_uid = card.clone();
    long_uid["uid"] = json!("X".repeat(37));
    let mut other_uid = card.clone();
    other_uid["uid"] = json!("04A2B3C4D6");
    let mut other_type = card.clone();
    other_type["type"] = json!("APP_USER");
    for (method, body) in [
        ("PATCH", &no_last_updated),
        ("PUT", &no_issuer),
        ("PUT", &bad_whitelist),
        ("PUT", &other_uid),
        ("PUT", &other_type),
        ("PUT", &json!("not an object")),
    ] {
        let (status, got) = roaming.ocpi(method, &path, Some(body)).await;
        let what = format!("{method} {body}: {got}");
        assert_eq!((status, &got["status_code"]), (400, &json!(2001)), "{what}");
    }
    let (status, got) = (roaming)
        .ocpi(
            "PUT",
            &format!("{TOKENS}/{}", "X".repeat(37)),
            Some(&long_uid),
        )
        .await;
    assert_eq!((status, &got["status_code"]), (400, &json!(2001)), "{got}");
    let (status, got) = roaming
        .ocpi("PUT", &format!("{path}?type=CARD"), Some(&card))
        .await;
    assert_eq!((status, &got["status_code"]), (400, &json!(2001)), "{got}");
    let (_, got) = roaming.ocpi("GET", &path, None).await;
    assert_eq!(got["data"]["valid"], false, "unchanged: {got}");

    // A token nobody pushed, and another party's path: unknown, never served.
    let (status, got) = (roaming)
        .ocpi("PATCH", &format!("{TOKENS}/NOSUCHCARD"), Some(&patch))
        .await;
    assert_eq!((status, &got["status_code"]), (404, &json!(2004)), "{got}");
    let elsewhere = "/ocpi/2.2.1/tokens/DE/OTH/04A2B3C4D5";
    for method in ["GET", "PUT", "PATCH"] {
        let body = (method != "GET").then_some(&card);
        let (status, got) = roaming.ocpi(method, elsewhere, body).await;
        assert_eq!(status, 404, "{method} of another party's token: {got}");
        assert!(got["data"].is_null(), "{got}");
    }
    // Without the party's token: 401.
    let answer = roaming.emsp.get_authorized(&path, None).await;
    assert_eq!(answer.status, 401, "{}", answer.body);
    charger.close().await;
}

/// What the eMSP's tokens SENDER endpoint was asked: (uid, query, Authorization, body).
type Asked = Arc<Mutex<Vec<(String, HashMap<String, String>, String, Value)>>>;

/// The eMSP's real-time authorisation: `LATE-*` answers after 3 s (past cms's time-out), the
/// others at once, with the AllowedType their uid names (`ALLOWED` by default).
async fn authorize(
    State(asked): State<Asked>,
    Path(uid): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: String,
) -> axum::Json<Value> {
    let authorization = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = serde_json::from_str(&body).unwrap_or(Value::Null);
    asked
        .lock()
        .unwrap()
        .push((uid.clone(), query, authorization, body));
    if uid.starts_with("LATE") {
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    let allowed = match uid.as_str() {
        "BLOCKED-OFFLINE" => "BLOCKED",
        "NO-CREDIT-NEVER" => "NO_CREDIT",
        _ => "ALLOWED",
    };
    axum::Json(json!({
        "data": {"allowed": allowed, "token": token(&uid, "NEVER")},
        "status_code": 1000, "timestamp": "2026-03-01T10:00:00Z"
    }))
}

/// A local eMSP answering real-time authorisations; its tokens URL and what it was asked.
async fn emsp() -> (String, Asked) {
    let asked = Asked::default();
    let app = axum::Router::new()
        .route("/tokens/{uid}/authorize", axum::routing::post(authorize))
        .with_state(asked.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://127.0.0.1:{port}/tokens"), asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_time_authorisation_follows_each_tokens_whitelist() {
    let cms = Cms::up_with(&["--ocpi-authorize-timeout", "1s"]).await;
    let (url, asked) = emsp().await;
    let roaming = Roaming::set_up(&cms, "CP-REALTIME", Some(&url)).await;
    let charger_uuid = roaming.api.get_ok("/api/v3/chargers").await["data"][0]["uuid"].clone();
    let whitelists = [
        ("ALWAYS-1", "ALWAYS"),
        ("ALLOWED-1", "ALLOWED"),
        ("LATE-OFFLINE", "ALLOWED_OFFLINE"),
        ("BLOCKED-OFFLINE", "ALLOWED_OFFLINE"),
        ("LATE-NEVER", "NEVER"),
        ("ALLOWED-NEVER", "NEVER"),
        ("NO-CREDIT-NEVER", "NEVER"),
    ];
    for (uid, whitelist) in whitelists {
        roaming.push(&token(uid, whitelist)).await;
    }
    let mut charger = Charger::connect_and_boot(&cms, "CP-REALTIME", "1.0").await;
    // Whitelisted: from memory, the eMSP never asked.
    authorized(&mut charger, "ALWAYS-1", "Accepted").await;
    authorized(&mut charger, "ALLOWED-1", "Accepted").await;
    assert!(
        asked.lock().unwrap().is_empty(),
        "{:?}",
        asked.lock().unwrap()
    );
    // Asked, and answered in time: the eMSP's word wins over cms's copy.
    authorized(&mut charger, "ALLOWED-NEVER", "Accepted").await;
    authorized(&mut charger, "BLOCKED-OFFLINE", "Blocked").await;
    authorized(&mut charger, "NO-CREDIT-NEVER", "Invalid").await;
    // Asked, and late: ALLOWED_OFFLINE is taken from cms's copy, NEVER is refused.
    authorized(&mut charger, "LATE-OFFLINE", "Accepted").await;
    authorized(&mut charger, "LATE-NEVER", "Invalid").await;

    let calls = asked.lock().unwrap().clone();
    let (uid, query, authorization, body) = (calls.iter())
        .find(|c| c.0 == "ALLOWED-NEVER")
        .expect("the eMSP was asked about ALLOWED-NEVER");
    assert_eq!(uid, "ALLOWED-NEVER");
    assert_eq!(query.get("type").map(String::as_str), Some("RFID"));
    let token = base64::engine::general_purpose::STANDARD.encode(CMS_TOKEN);
    assert_eq!(authorization, &format!("Token {token}"));
    let references = json!({"location_id": roaming.site, "evse_uids": [charger_uuid]});
    assert_eq!(body, &references);
    let asked_about: Vec<&str> = calls.iter().map(|c| c.0.as_str()).collect();
    for (uid, whitelist) in whitelists {
        let real_time = whitelist == "ALLOWED_OFFLINE" || whitelist == "NEVER";
        assert_eq!(
            asked_about.contains(&uid),
            real_time,
            "{uid}: {asked_about:?}"
        );
    }

    // A 2.0.1 station at the same site: the same, in 2.0.1's words, about itself.
    let station_uuid = cms.add_charger("ST-REALTIME").await;
    let mut station = RawStation201::connect(cms.ocpp_addr(), "ST-REALTIME").await;
    station.boot().await;
    let authorize = |uid: &str| format!(r#"{{"idToken":{{"idToken":"{uid}","type":"ISO14443"}}}}"#);
    let answer = station
        .call_text("Authorize", &authorize("BLOCKED-OFFLINE"))
        .await;
    assert_eq!(answer[2]["idTokenInfo"]["status"], "Blocked", "{answer}");
    let answer = station
        .call_text("Authorize", &authorize("LATE-NEVER"))
        .await;
    assert_eq!(answer[2]["idTokenInfo"]["status"], "Invalid", "{answer}");
    let calls = asked.lock().unwrap().clone();
    let (_, _, _, body) = calls.last().expect("the eMSP was asked");
    assert_eq!(body["evse_uids"], json!([station_uuid]), "{body}");
    station.heartbeat().await;

    // A start is answered from memory (the real-time check is the Authorize's), and the
    // session goes on answering.
    let before = asked.lock().unwrap().len();
    let start = json!({"connectorId": 1, "idTag": "LATE-NEVER", "meterStart": 0,
        "timestamp": "2026-03-01T10:00:00Z"});
    let answer = charger.call_result("StartTransaction", start).await;
    assert_eq!(answer["idTagInfo"]["status"], "Accepted", "{answer}");
    assert_eq!(asked.lock().unwrap().len(), before, "no call for a start");
    charger.heartbeat().await;
    charger.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn published_tokens_are_in_the_chargers_local_list_but_never_ones() {
    let cms = Cms::up().await;
    let roaming = Roaming::set_up(&cms, "CP-LIST", None).await;
    roaming.push(&token("NEVER-1", "NEVER")).await;
    roaming.push(&token("ALWAYS-2", "ALWAYS")).await;
    roaming.push(&token("OFFLINE-3", "ALLOWED_OFFLINE")).await;
    crate::support::ocpi::set_identity(&roaming.api, &roaming.team).await;
    crate::support::ocpi::publish(&roaming.api, &roaming.site, &[&roaming.provider]).await;
    let own = json!({"id_tag": "OWN-1"});
    let tags = format!("/api/v3/teams/{}/id-tags", roaming.team);
    roaming.api.expect(201, "POST", &tags, Some(&own)).await;
    let keeps = json!({"local_authorization_list": true});
    let site = format!("/api/v3/sites/{}", roaming.site);
    roaming.api.expect(200, "PUT", &site, Some(&keeps)).await;
    let config = json!({
        "LocalAuthListEnabled": "true",
        "LocalAuthListMaxLength": {"value": "100", "readonly": true},
        "SendLocalListMaxLength": {"value": "100", "readonly": true},
    })
    .to_string();
    let mut charger =
        CommandedCharger::connect_with(&cms.ocpp_url("CP-LIST"), "CP-LIST", &["--config", &config])
            .await;
    let held = charger
        .wait_for("its local list", |l| l.get("local_list").is_some())
        .await;
    let entries = held["entries"].to_string();
    assert!(entries.contains("OWN-1"), "{entries}");
    // Tokens a charger may accept offline are in its list; one the eMSP must always be asked
    // about is not.
    assert!(entries.contains("ALWAYS-2"), "{entries}");
    assert!(entries.contains("OFFLINE-3"), "{entries}");
    assert!(
        !entries.contains("NEVER-1"),
        "a NEVER token in the list: {entries}"
    );
    // Unpublished: the site's lists lose the provider's tokens.
    let private = json!({"latitude": "52.378900", "longitude": "4.900400", "provider_uuids": []});
    let roaming_path = format!("/api/v3/sites/{}/roaming", roaming.site);
    roaming
        .api
        .expect(200, "PUT", &roaming_path, Some(&private))
        .await;
    charger
        .wait_for("the tokens taken out of its list", |l| {
            l.get("local_list").is_some() && !l["entries"].to_string().contains("ALWAYS-2")
        })
        .await;
    charger.finish().await;
}
