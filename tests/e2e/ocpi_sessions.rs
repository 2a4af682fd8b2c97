//! OCPI sessions and CDRs (docs/ocpi.md "Sessions and CDRs"), end to end: a registered eMSP's
//! driver charges at the team's charger with the provider's tag; the eMSP pulls the running
//! session with its energy and running cost, then the CDR with the same final cost as the REST
//! API's transaction; another registered eMSP sees none of it. The pushes the outbox's events
//! and the running-sessions timer make are those cms-roaming produces from the live store.

use crate::support::commanded::CommandedCharger;
use crate::support::ocpi::{Ocpi, OcpiAnswer};
use crate::support::rest::{create_tariff, operators_site, team_of_type, uuid_of};
use crate::support::{Api, Cms, eventually};
use axum::Json;
use axum::routing::{get, post};
use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
use cms_store::Store;
use cms_store::ocpi::parties::Party;
use cms_store::ocpi::pushes::NewPush;
use cms_store::ocpi::sessions::fixtures::ready_events;
use serde_json::{Value, json};

fn envelope(data: Value) -> Json<Value> {
    Json(json!({"data": data, "status_code": 1000, "timestamp": "2026-11-29T10:00:00Z"}))
}

/// An eMSP on loopback that takes any token: its versions and details (receiving sessions and
/// CDRs), and a webhook receiver (`/hooks`), so that the events outbox is written. Its base URL.
async fn emsp() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (versions, details) = (base.clone(), base.clone());
    let app = axum::Router::new()
        .route(
            "/versions",
            get(async move || {
                envelope(json!([{"version": "2.2.1", "url": format!("{versions}/2.2.1")}]))
            }),
        )
        .route(
            "/2.2.1",
            get(async move || {
                let url = |m: &str| format!("{details}/{m}");
                envelope(json!({"version": "2.2.1", "endpoints": [
                    {"identifier": "credentials", "role": "RECEIVER", "url": url("credentials")},
                    {"identifier": "sessions", "role": "RECEIVER", "url": url("sessions")},
                    {"identifier": "cdrs", "role": "RECEIVER", "url": url("cdrs")},
                ]}))
            }),
        )
        .route("/hooks", post(async || "ok"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// A provider of `team` as party NL/`party_id`, registered with the eMSP at `emsp`; its uuid
/// and the token it calls cms with.
async fn registered(
    api: &Api,
    ocpi: &Ocpi,
    team: &str,
    party_id: &str,
    emsp: &str,
) -> (String, String) {
    let providers = format!("/api/v3/teams/{team}/providers");
    let body = json!({"name": party_id, "country_code": "NL", "party_id": party_id});
    let provider = uuid_of(&api.expect(201, "POST", &providers, Some(&body)).await["data"]);
    let issued = api
        .expect(
            201,
            "POST",
            &format!("{providers}/{provider}/ocpi/token"),
            None,
        )
        .await;
    let token_a = issued["data"]["token"].as_str().unwrap();
    let credentials = json!({"token": format!("B-{party_id}"), "url": format!("{emsp}/versions"),
        "roles": [{"role": "EMSP", "country_code": "NL", "party_id": party_id,
                   "business_details": {"name": party_id}}]});
    let answer = ocpi
        .call(
            "POST",
            "/ocpi/2.2.1/credentials",
            Some(token_a),
            Some(&credentials),
        )
        .await;
    assert_eq!(answer.code(), 1000, "{:?}", answer.json);
    let token_c = answer.json["data"]["token"].as_str().unwrap().to_string();
    (provider, token_c)
}

/// A charger's time `ago` before now, in whole seconds.
fn ago(seconds: i64) -> String {
    (Utc::now() - TimeDelta::seconds(seconds)).to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The transaction as `GET /api/v3/chargers/{uuid}/transactions` lists it.
async fn api_transaction(api: &Api, charger: &str, id: i64) -> Value {
    let listed = api
        .get_ok(&format!("/api/v3/chargers/{charger}/transactions"))
        .await;
    let all = listed["data"].as_array().cloned().unwrap_or_default();
    all.into_iter().find(|t| t["id"] == id).expect("listed")
}

/// The transaction's cost as the REST API shows it.
async fn api_cost(api: &Api, charger: &str, id: i64) -> Value {
    api_transaction(api, charger, id).await["cost"].clone()
}

/// OCPI's price equals the REST cost: the same decimals, excluding and including VAT.
fn same_cost(ocpi: &Value, rest: &Value) -> bool {
    let amount = |v: &Value| v.as_str().and_then(|s| s.parse::<f64>().ok());
    Some(ocpi["excl_vat"].as_f64().unwrap_or(-1.0)) == amount(&rest["excl_vat"])
        && Some(ocpi["incl_vat"].as_f64().unwrap_or(-1.0)) == amount(&rest["incl_vat"])
}

/// The one object a party's list gives, once `ready` holds of it.
async fn listed(
    ocpi: &Ocpi,
    module: &str,
    token: &str,
    ready: impl Fn(&Value) -> bool,
) -> (Value, OcpiAnswer) {
    eventually(&format!("the party's {module}"), async || {
        let answer = ocpi.get(&format!("/ocpi/2.2.1/{module}"), token).await;
        match answer.json["data"].as_array().map(Vec::as_slice) {
            Some([one]) if ready(one) => Ok((one.clone(), answer)),
            _ => Err(format!("{:?}", answer.json)),
        }
    })
    .await
}

/// The pushes of the outbox's ready `event_type` events for `party`.
async fn pushes_of(store: &Store, event_type: &str, party: &Party) -> Vec<NewPush> {
    let mut pushes = Vec::new();
    for event in ready_events(store, event_type).await.unwrap() {
        pushes.extend(
            cms_roaming::translate::pushes(store, &event, party)
                .await
                .unwrap(),
        );
    }
    pushes
}

fn body(push: &NewPush) -> Value {
    serde_json::from_str(push.body.as_deref().unwrap_or("null")).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_roaming_drivers_session_and_cdr_reach_its_emsp_only() {
    // The dispatcher's own timer stays out of the way of the test's calls of `due`.
    let cms = Cms::up_with(&[
        "--ocpi-allow-private",
        "--webhook-allow-private",
        "--ocpi-session-interval",
        "1h",
    ])
    .await;
    let charger = cms.add_charger("CP-OCPI").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let ocpi = Ocpi::at(&cms.http_url(""));
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let cpo = json!({"country_code": "NL", "party_id": "CMS", "name": "Charging Co"});
    api.expect(
        200,
        "PUT",
        &format!("/api/v3/teams/{team}/ocpi"),
        Some(&cpo),
    )
    .await;
    let tariff = json!({"name": "Energy", "currency": "EUR", "elements": [{"price_components": [
        {"type": "ENERGY", "price": "0.30", "vat": 21, "step_size": 1}]}]});
    let tariff = create_tariff(&api, &team, &tariff).await;
    let site = operators_site(&api).await;
    let priced = json!({"tariff_uuid": tariff});
    api.expect(200, "PUT", &format!("/api/v3/sites/{site}"), Some(&priced))
        .await;
    let emsp = emsp().await;
    let hook = json!({"url": format!("{emsp}/hooks"), "event_types": ["transaction.started"]});
    api.expect(
        201,
        "POST",
        &format!("/api/v3/teams/{team}/webhooks"),
        Some(&hook),
    )
    .await;
    let (provider, token) = registered(&api, &ocpi, &team, "EMP", &emsp).await;
    let (other, other_token) = registered(&api, &ocpi, &team, "OTH", &emsp).await;
    // The site published to both: the other party sees the site, not EMP's drivers' sessions.
    crate::support::ocpi::publish(&api, &site, &[&provider, &other]).await;
    api.expect(200, "PUT", &format!("/api/v3/sites/{site}"), Some(&priced))
        .await;
    let tags = format!("/api/v3/teams/{team}/providers/{provider}/id-tags");
    api.expect(201, "POST", &tags, Some(&json!({"id_tag": "ROAM-1"})))
        .await;
    let store = cms.open_store().await;
    let party = |uuid: String| {
        let store = store.clone();
        async move {
            let provider = store.provider_by_uuid(&uuid).await.unwrap().unwrap();
            store
                .ocpi_party_of_provider(provider.id)
                .await
                .unwrap()
                .unwrap()
        }
    };
    let (party, other_party) = (party(provider).await, party(other).await);

    // The driver starts: the session is listed, ACTIVE, with nothing charged yet.
    let mut cp = CommandedCharger::connect(&cms.ocpp_url("CP-OCPI"), "CP-OCPI").await;
    let started = cp.send(&format!("start 1 ROAM-1 0 {}", ago(120))).await;
    assert_eq!(started["idTagInfo"]["status"], "Accepted", "{started}");
    let id = started["transactionId"].as_i64().expect("a transactionId");
    let (session, page) = listed(&ocpi, "sessions", &token, |_| true).await;
    assert_eq!(page.header("x-total-count").as_deref(), Some("1"));
    assert_eq!(session["status"], "ACTIVE", "{session}");
    assert_eq!(
        (session["kwh"].as_f64(), &session["country_code"]),
        (Some(0.0), &json!("NL"))
    );
    assert_eq!(session["cdr_token"]["uid"], "ROAM-1");
    assert_eq!(session["cdr_token"]["party_id"], "EMP");
    assert_eq!(session["location_id"], site.as_str());
    assert_eq!(session["evse_uid"], charger.as_str());
    assert_eq!(session["connector_id"], "1");
    let session_id = session["id"].as_str().unwrap().to_string();
    let transaction = api_transaction(&api, &charger, id).await;
    assert_eq!(
        transaction["uuid"],
        session_id.as_str(),
        "the REST API's uuid"
    );

    // transaction.started: a PUT of the session to its eMSP, none to the other.
    let put = eventually("the start's push", async || {
        match pushes_of(&store, "transaction.started", &party)
            .await
            .as_slice()
        {
            [put] => Ok(put.clone()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    assert_eq!(
        (put.module.as_str(), put.method.as_str()),
        ("sessions", "PUT")
    );
    assert_eq!(put.path, format!("/NL/CMS/{session_id}"));
    assert_eq!(put.object_key, format!("session:{session_id}"));
    assert_eq!(body(&put)["status"], "ACTIVE");
    assert!(
        (pushes_of(&store, "transaction.started", &other_party).await).is_empty(),
        "not the other party's driver"
    );
    assert_eq!(
        cms_roaming::running_sessions::due(&store).await.unwrap(),
        []
    );

    // 2.5 kWh: the running session tells them and the running cost, as the REST API does.
    cp.send(&format!("meter 1 {id} 2500 {}", ago(60))).await;
    let (session, _) = listed(&ocpi, "sessions", &token, |s| s["kwh"] == 2.5).await;
    let rest = api_cost(&api, &charger, id).await;
    assert_eq!(rest["excl_vat"], "0.75", "{rest}");
    assert!(same_cost(&session["total_cost"], &rest), "{session} {rest}");
    assert_eq!(session["currency"], "EUR");
    let patches = cms_roaming::running_sessions::due(&store).await.unwrap();
    let [patch] = patches.as_slice() else {
        panic!("one update: {patches:?}");
    };
    assert_eq!(
        (patch.method.as_str(), patch.path.as_str()),
        ("PATCH", put.path.as_str())
    );
    let patched = body(patch);
    assert_eq!(patched["kwh"], 2.5);
    assert!(same_cost(&patched["total_cost"], &rest), "{patched}");
    assert!(patched["last_updated"].is_string());
    assert_eq!(
        cms_roaming::running_sessions::due(&store).await.unwrap(),
        [],
        "told"
    );

    // The other party sees none of it, nor may set its preferences; its own party is told
    // cms takes none.
    let theirs = ocpi.get("/ocpi/2.2.1/sessions", &other_token).await;
    assert_eq!((theirs.code(), &theirs.json["data"]), (1000, &json!([])));
    let preferences = format!("/ocpi/2.2.1/sessions/{session_id}/charging_preferences");
    let wish = json!({"profile_type": "FAST", "energy_need": 20});
    let refused = ocpi
        .call("PUT", &preferences, Some(&other_token), Some(&wish))
        .await;
    assert_eq!((refused.status, refused.code()), (404, 2000));
    let answer = ocpi
        .call("PUT", &preferences, Some(&token), Some(&wish))
        .await;
    assert_eq!(
        (answer.code(), &answer.json["data"]),
        (1000, &json!("NOT_POSSIBLE"))
    );
    let malformed = ocpi
        .call("PUT", &preferences, Some(&token), Some(&json!([1])))
        .await;
    assert_eq!((malformed.status, malformed.code()), (400, 2001));
    let bad_page = ocpi
        .get("/ocpi/2.2.1/sessions?date_from=soon", &token)
        .await;
    assert_eq!((bad_page.status, bad_page.code()), (400, 2001));

    // Stopped at 4 kWh and priced, its Eichrecht meter's signed readings in the stop: the CDR's
    // total is the REST API's final cost, and it carries the signed readings.
    let signed = |wh: u32| {
        format!(r#"OCMF|{{"FV":"1.0","RD":[{{"RV":{wh},"RU":"Wh"}}]}}|{{"SD":"30{wh}"}}"#)
    };
    let stop = format!(
        "signed-stop {id} 4000 {} {} {}",
        ago(10),
        signed(0),
        signed(4000)
    );
    cp.send(&stop).await;
    let (cdr, _) = listed(&ocpi, "cdrs", &token, |_| true).await;
    let rest = api_cost(&api, &charger, id).await;
    assert_eq!(rest["excl_vat"], "1.20", "{rest}");
    assert!(same_cost(&cdr["total_cost"], &rest), "{cdr} {rest}");
    assert_eq!(
        (cdr["id"].as_str(), cdr["session_id"].as_str()),
        (Some(session_id.as_str()), Some(session_id.as_str()))
    );
    assert_eq!(cdr["total_energy"], 4.0);
    assert_eq!(cdr["tariffs"][0]["id"], tariff.as_str());
    assert_eq!(cdr["cdr_location"]["id"], site.as_str());
    assert_eq!(cdr["cdr_location"]["evse_id"], "NL*CMS*ECPOCPI");
    let signed_data = json!({"encoding_method": "OCMF", "signed_values": [
        {"nature": "Start", "plain_data": "0", "signed_data": signed(0)},
        {"nature": "End", "plain_data": "4000", "signed_data": signed(4000)}]});
    assert_eq!(cdr["signed_data"], signed_data, "{cdr}");
    let ended = DateTime::parse_from_rfc3339(cdr["end_date_time"].as_str().unwrap());
    assert!(ended.is_ok(), "{cdr}");
    let (session, _) = listed(&ocpi, "sessions", &token, |s| s["status"] == "COMPLETED").await;
    assert!(same_cost(&session["total_cost"], &rest), "{session}");
    let theirs = ocpi.get("/ocpi/2.2.1/cdrs", &other_token).await;
    assert_eq!((theirs.code(), &theirs.json["data"]), (1000, &json!([])));

    // transaction.ended: the session PUT COMPLETED and the CDR POSTed; nothing runs any more.
    // (The outbox keeps every event type while any webhook listens.)
    let ended = eventually("the stop's pushes", async || {
        match pushes_of(&store, "transaction.ended", &party)
            .await
            .as_slice()
        {
            [put, post] => Ok((put.clone(), post.clone())),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    let (put, post) = ended;
    assert_eq!(
        (put.method.as_str(), body(&put)["status"].as_str()),
        ("PUT", Some("COMPLETED"))
    );
    assert_eq!(
        (
            post.module.as_str(),
            post.method.as_str(),
            post.path.as_str()
        ),
        ("cdrs", "POST", "")
    );
    assert_eq!(post.object_key, format!("cdr:{session_id}"));
    assert!(
        same_cost(&body(&post)["total_cost"], &rest),
        "{:?}",
        post.body
    );
    assert_eq!(body(&post)["signed_data"], signed_data, "the pushed CDR's");
    assert!((pushes_of(&store, "transaction.ended", &other_party).await).is_empty());
    assert_eq!(
        cms_roaming::running_sessions::due(&store).await.unwrap(),
        []
    );
    cp.finish().await;
}
