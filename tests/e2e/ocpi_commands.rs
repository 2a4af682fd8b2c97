//! OCPI commands (docs/ocpi.md "Commands"), end to end: a registered eMSP sends START_SESSION,
//! STOP_SESSION, UNLOCK_CONNECTOR, RESERVE_NOW and CANCEL_RESERVATION to `cms up`; the
//! third-party charge point of tests/interop/ocpp16_commanded_charge_point.py receives the OCPP
//! calls; each command is kept with its action, and the CommandResult its action's end makes
//! is the push the OCPI dispatcher sends (cms_roaming::translate, run here on the event the
//! outbox holds for it).
//!
//! Needs `python3` with the packages of tests/interop/requirements.txt.

use crate::support::commanded::CommandedCharger;
use crate::support::ocpi::{Ocpi, OcpiAnswer, token_header};
use crate::support::rest::{create_site, operators_site, team_of_type, uuid_of};
use crate::support::station201::RawStation201;
use crate::support::{Api, Cms, eventually};
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use cms_store::ocpi::pushes::OutboxEvent;
use serde_json::{Value, json};

/// The eMSP's token B (what cms calls it with).
const TOKEN_B: &str = "EMSP-COMMANDS-B";

fn envelope(data: Value) -> Json<Value> {
    Json(json!({"data": data, "status_code": 1000, "timestamp": "2026-11-29T10:00:00Z"}))
}

fn allowed(headers: &HeaderMap) -> bool {
    let sent = headers.get("authorization").and_then(|v| v.to_str().ok());
    sent == Some(token_header(TOKEN_B).as_str())
}

/// An eMSP on loopback: its versions and details for the registration, and a commands
/// SENDER that takes the results; its base URL.
async fn emsp() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let at = base.clone();
    let versions = move |headers: HeaderMap| {
        let at = at.clone();
        async move {
            if !allowed(&headers) {
                return Err(StatusCode::UNAUTHORIZED);
            }
            Ok(envelope(
                json!([{"version": "2.2.1", "url": format!("{at}/2.2.1")}]),
            ))
        }
    };
    let app = axum::Router::new()
        .route("/versions", get(versions))
        .route("/2.2.1", get(details))
        .route(
            "/commands/{*result}",
            post(|| async { envelope(Value::Null) }),
        )
        .with_state(base.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

async fn details(
    State(base): State<String>,
    headers: HeaderMap,
) -> Result<Json<Value>, StatusCode> {
    if !allowed(&headers) {
        return Err(StatusCode::UNAUTHORIZED);
    }
    Ok(envelope(json!({"version": "2.2.1", "endpoints": [
        {"identifier": "credentials", "role": "RECEIVER", "url": format!("{base}/credentials")},
        {"identifier": "commands", "role": "SENDER", "url": format!("{base}/commands")},
    ]})))
}

/// cms with a registered eMSP (the operators' team's provider NL/EMP): what a test needs.
struct Roaming {
    api: Api,
    ocpi: Ocpi,
    /// Token C: what the eMSP calls cms with.
    token: String,
    emsp: String,
    /// The provider's REST path and uuid.
    provider: String,
    provider_uuid: String,
}

impl Roaming {
    async fn register(cms: &Cms) -> Roaming {
        let api = Api::new(cms, &cms.operator_token().await);
        let team = uuid_of(&team_of_type(&api, "operators").await);
        let identity = json!({"country_code": "NL", "party_id": "CMS", "name": "Charging Co"});
        api.expect(
            200,
            "PUT",
            &format!("/api/v3/teams/{team}/ocpi"),
            Some(&identity),
        )
        .await;
        let provider = json!({"name": "The eMSP", "country_code": "NL", "party_id": "EMP"});
        let providers = format!("/api/v3/teams/{team}/providers");
        let created = api.expect(201, "POST", &providers, Some(&provider)).await;
        let provider_uuid = uuid_of(&created["data"]);
        let provider = format!("{providers}/{provider_uuid}");
        let issued = api
            .expect(201, "POST", &format!("{provider}/ocpi/token"), None)
            .await;
        let token_a = issued["data"]["token"].as_str().unwrap().to_string();
        let emsp = emsp().await;
        let ocpi = Ocpi::at(&cms.http_url(""));
        let credentials = json!({"token": TOKEN_B, "url": format!("{emsp}/versions"),
            "roles": [{"role": "EMSP", "country_code": "NL", "party_id": "EMP",
                       "business_details": {"name": "The eMSP"}}]});
        let registered = ocpi
            .call(
                "POST",
                "/ocpi/2.2.1/credentials",
                Some(&token_a),
                Some(&credentials),
            )
            .await;
        assert_eq!(registered.code(), 1000, "{:?}", registered.json);
        let token = registered.json["data"]["token"]
            .as_str()
            .unwrap()
            .to_string();
        Roaming {
            api,
            ocpi,
            token,
            emsp,
            provider,
            provider_uuid,
        }
    }

    /// POST `/ocpi/2.2.1/commands/{command}` with `body`, as the eMSP.
    async fn command(&self, command: &str, body: &Value) -> OcpiAnswer {
        let path = format!("/ocpi/2.2.1/commands/{command}");
        self.ocpi
            .call("POST", &path, Some(&self.token), Some(body))
            .await
    }

    /// A command the CPO answered with `result` (HTTP 200, 1000); its CommandResponse.
    async fn answered(&self, command: &str, body: &Value, result: &str) -> Value {
        let answer = self.command(command, body).await;
        assert_eq!(
            (answer.status, answer.code()),
            (200, 1000),
            "{command}: {:?}",
            answer.json
        );
        let response = answer.json["data"].clone();
        assert_eq!(response["result"], result, "{command}: {response}");
        response
    }

    fn response_url(&self, command: &str, n: u32) -> String {
        format!("{}/commands/{command}/{n}", self.emsp)
    }

    /// The token object an eMSP sends in a command.
    fn token(uid: &str) -> Value {
        json!({"country_code": "NL", "party_id": "EMP", "uid": uid, "type": "APP_USER",
               "contract_id": "NL-EMP-C00000001", "issuer": "The eMSP", "valid": true,
               "whitelist": "ALLOWED", "last_updated": "2026-11-29T10:00:00Z"})
    }
}

/// The newest command of the provider, as kept, once its action has ended on charger
/// `charger_uuid`; and the CommandResult push its `action.finished` makes for the party.
async fn result_of_newest(cms: &Cms, roaming: &Roaming, charger_uuid: &str) -> (Value, Value) {
    let store = cms.open_store().await;
    let provider = store
        .provider_by_uuid(&roaming.provider_uuid)
        .await
        .unwrap()
        .unwrap();
    let commands = store
        .ocpi_commands_of_provider(provider.id, 1)
        .await
        .unwrap();
    let command = commands.first().expect("a command kept").clone();
    let action = command.action_uuid.clone().expect("the command's action");
    let path = format!("/api/v3/chargers/{charger_uuid}/actions/{action}");
    eventually(&format!("the end of {path}"), async || {
        let shown = roaming.api.get_ok(&path).await;
        match shown["data"]["finished_at"].is_string() {
            true => Ok(()),
            false => Err(shown.to_string()),
        }
    })
    .await;
    let party = store
        .ocpi_party_of_provider(provider.id)
        .await
        .unwrap()
        .unwrap();
    let event = OutboxEvent {
        seq: 1,
        event_type: "action.finished".into(),
        subject: String::new(),
        team_id: Some(party.team_id),
        site_id: None,
        charger_id: command.charger_id,
        data: json!({"action_uuid": action}),
        occurred_at: String::new(),
    };
    let pushes = cms_roaming::translate::pushes(&store, &event, &party)
        .await
        .unwrap();
    assert_eq!(pushes.len(), 1, "{pushes:?}");
    let push = &pushes[0];
    assert_eq!(
        (push.module.as_str(), push.method.as_str(), push.provider_id),
        ("url", "POST", provider.id)
    );
    assert_eq!(push.path, command.response_url);
    assert_eq!(push.object_key, format!("command:{}", command.id));
    let body: Value = serde_json::from_str(push.body.as_deref().unwrap()).unwrap();
    let kept = json!({"id": command.id, "command": command.command, "response": command.response,
                      "token_uid": command.token_uid, "session_id": command.session_id,
                      "reservation_id": command.reservation_id, "action_uuid": action});
    (kept, body)
}

/// A connected commanded charger at the operators' site; (its uuid, the site's uuid, it).
async fn connected(cms: &Cms, api: &Api, identity: &str) -> (String, String, CommandedCharger) {
    let uuid = cms.add_charger(identity).await;
    let charger = CommandedCharger::connect(&cms.ocpp_url(identity), identity).await;
    api.wait_for_charger(&uuid, "online", |c| c["connection_status"] == "online")
        .await;
    (uuid, operators_site(api).await, charger)
}

impl Roaming {
    /// Publishes `site` to the provider: its party may command it from then on.
    async fn publish(&self, site: &str) {
        crate::support::ocpi::publish(&self.api, site, &[&self.provider_uuid]).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_emsp_starts_and_stops_a_session_and_unlocks_a_connector() {
    let cms = Cms::up_with(&["--ocpi-allow-private"]).await;
    let roaming = Roaming::register(&cms).await;
    let (evse, location, mut charger) = connected(&cms, &roaming.api, "CP-OCPI-CMD").await;
    roaming.publish(&location).await;

    let start = json!({"response_url": roaming.response_url("START_SESSION", 1),
        "token": Roaming::token("APP-0001"), "location_id": location, "evse_uid": evse,
        "connector_id": "1", "authorization_reference": "AUTH-1"});
    let response = roaming.answered("START_SESSION", &start, "ACCEPTED").await;
    assert_eq!(response["timeout"], 30);
    charger
        .wait_received(
            "RemoteStartTransaction",
            &json!({"connectorId": 1, "idTag": "APP-0001"}),
        )
        .await;
    // The token is one of the provider's id tags now: the start it asked for is its driver's.
    let tag = roaming
        .api
        .get_ok(&format!("{}/id-tags/app-0001", roaming.provider))
        .await;
    assert_eq!(tag["data"]["status"], "Accepted", "{tag}");
    let (kept, result) = result_of_newest(&cms, &roaming, &evse).await;
    assert_eq!(
        (&kept["command"], &kept["response"], &kept["token_uid"]),
        (
            &json!("START_SESSION"),
            &json!("ACCEPTED"),
            &json!("APP-0001")
        )
    );
    assert_eq!(result["result"], "ACCEPTED", "{result}");

    // The driver plugs in: the session runs on the eMSP's token, and the eMSP stops it.
    let started = charger.send("start 1 APP-0001").await;
    assert_eq!(started["idTagInfo"]["status"], "Accepted", "{started}");
    let transaction_id = started["transactionId"].as_i64().unwrap();
    let store = cms.open_store().await;
    let session = eventually("the transaction stored", async || {
        match store
            .transaction_of("CP-OCPI-CMD", transaction_id)
            .await
            .unwrap()
        {
            Some(t) if t.provider_uuid.is_some() => Ok(t),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    let stop = json!({"response_url": roaming.response_url("STOP_SESSION", 2),
                      "session_id": session.uuid.clone().expect("a uuid")});
    roaming.answered("STOP_SESSION", &stop, "ACCEPTED").await;
    charger
        .wait_received(
            "RemoteStopTransaction",
            &json!({"transactionId": transaction_id}),
        )
        .await;
    let (kept, result) = result_of_newest(&cms, &roaming, &evse).await;
    assert_eq!(kept["session_id"], session.uuid.clone().expect("a uuid"));
    assert_eq!(result["result"], "ACCEPTED", "{result}");

    // A session that is not the eMSP's, and one there is not: UNKNOWN_SESSION, nothing sent.
    let local = charger.send("start 2 LOCAL-CARD").await;
    let local_id = local["transactionId"].as_i64().unwrap();
    let local = eventually("the local transaction stored", async || {
        match store.transaction_of("CP-OCPI-CMD", local_id).await.unwrap() {
            Some(t) => Ok(t),
            None => Err("not yet".to_string()),
        }
    })
    .await;
    for session_id in [
        local.uuid.clone().expect("a uuid"),
        "999999".into(),
        "not-a-session".into(),
    ] {
        let stop = json!({"response_url": roaming.response_url("STOP_SESSION", 3),
                          "session_id": session_id});
        let response = roaming
            .answered("STOP_SESSION", &stop, "UNKNOWN_SESSION")
            .await;
        assert!(response["message"][0]["text"].is_string(), "{response}");
    }
    assert_eq!(charger.received_of("RemoteStopTransaction").len(), 1);

    let unlock = json!({"response_url": roaming.response_url("UNLOCK_CONNECTOR", 4),
        "location_id": location, "evse_uid": evse, "connector_id": "2"});
    roaming
        .answered("UNLOCK_CONNECTOR", &unlock, "ACCEPTED")
        .await;
    charger
        .wait_received("UnlockConnector", &json!({"connectorId": 2}))
        .await;
    let (kept, result) = result_of_newest(&cms, &roaming, &evse).await;
    assert_eq!(kept["command"], "UNLOCK_CONNECTOR");
    assert_eq!(result["result"], "ACCEPTED", "{result}");
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_emsps_reservation_is_a_cms_reservation_and_is_cancelled() {
    let cms = Cms::up_with(&["--ocpi-allow-private"]).await;
    let roaming = Roaming::register(&cms).await;
    let (evse, location, mut charger) = connected(&cms, &roaming.api, "CP-OCPI-RES").await;
    roaming.publish(&location).await;
    let expiry = chrono::Utc::now() + chrono::Duration::hours(1);
    let expiry = expiry.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);

    let reserve = json!({"response_url": roaming.response_url("RESERVE_NOW", 1),
        "token": Roaming::token("APP-0002"), "expiry_date": expiry, "reservation_id": "res-1",
        "location_id": location, "evse_uid": evse});
    roaming.answered("RESERVE_NOW", &reserve, "ACCEPTED").await;
    let reservations = format!("/api/v3/chargers/{evse}/reservations");
    let reservation = eventually("the reservation active", async || {
        let page = roaming.api.get_ok(&reservations).await;
        match page["data"][0]["status"] == "active" {
            true => Ok(page["data"][0].clone()),
            false => Err(page.to_string()),
        }
    })
    .await;
    assert_eq!(reservation["id_tag"], "APP-0002");
    assert_eq!(reservation["connector_id"], 0);
    let cms_id = reservation["id"].as_i64().unwrap();
    charger
        .wait_received(
            "ReserveNow",
            &json!({"connectorId": 0, "expiryDate": expiry, "idTag": "APP-0002",
                    "reservationId": cms_id}),
        )
        .await;
    let (kept, result) = result_of_newest(&cms, &roaming, &evse).await;
    assert_eq!(kept["reservation_id"], "res-1");
    assert_eq!(result["result"], "ACCEPTED", "{result}");

    // Cancelled by its id in another case (a CiString): CancelReservation of cms's id.
    let cancel = json!({"response_url": roaming.response_url("CANCEL_RESERVATION", 2),
                        "reservation_id": "RES-1"});
    roaming
        .answered("CANCEL_RESERVATION", &cancel, "ACCEPTED")
        .await;
    charger
        .wait_received("CancelReservation", &json!({"reservationId": cms_id}))
        .await;
    let path = format!("{reservations}/{cms_id}");
    eventually("the reservation cancelled", async || {
        let shown = roaming.api.get_ok(&path).await;
        match shown["data"]["status"] == "cancelled" {
            true => Ok(()),
            false => Err(shown.to_string()),
        }
    })
    .await;
    let (kept, result) = result_of_newest(&cms, &roaming, &evse).await;
    assert_eq!(kept["command"], "CANCEL_RESERVATION");
    assert_eq!(result["result"], "ACCEPTED", "{result}");
    // Ended: nothing of the eMSP's to cancel, nothing sent.
    roaming
        .answered("CANCEL_RESERVATION", &cancel, "REJECTED")
        .await;
    assert_eq!(charger.received_of("CancelReservation").len(), 1);
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_201_station_is_sent_the_201_calls_and_its_answers_are_the_results() {
    let cms = Cms::up_with(&["--ocpi-allow-private"]).await;
    let roaming = Roaming::register(&cms).await;
    let evse = cms.add_charger("CS-OCPI-201").await;
    let mut station = RawStation201::connect(cms.ocpp_addr(), "CS-OCPI-201").await;
    station.boot().await;
    let online = |c: &Value| c["connection_status"] == "online" && c["ocpp_version"] == "2.0.1";
    roaming
        .api
        .wait_for_charger(&evse, "online, 2.0.1", online)
        .await;
    let report = station.call_from_cms("GetBaseReport").await;
    station.answer(&report, json!({"status": "Accepted"})).await;
    let location = operators_site(&roaming.api).await;
    roaming.publish(&location).await;

    // A token longer than 1.6's 20 characters: 2.0.1 takes 36.
    let uid = "APP-201-0000000000000000001";
    let start = json!({"response_url": roaming.response_url("START_SESSION", 1),
        "token": Roaming::token(uid), "location_id": location, "evse_uid": evse,
        "connector_id": "1"});
    roaming.answered("START_SESSION", &start, "ACCEPTED").await;
    let call = station.call_from_cms("RequestStartTransaction").await;
    let remote_start_id = call[3]["remoteStartId"].as_i64().expect("a remoteStartId");
    assert_eq!(
        call[3],
        json!({"idToken": {"idToken": uid, "type": "Central"}, "evseId": 1,
               "remoteStartId": remote_start_id})
    );
    let refusal = json!({"status": "Rejected", "statusInfo": {"reasonCode": "TxInProgress"}});
    station.answer(&call, refusal).await;
    let (kept, result) = result_of_newest(&cms, &roaming, &evse).await;
    assert_eq!(kept["id"], remote_start_id, "the command's own id");
    assert_eq!(result["result"], "REJECTED", "{result}");
    assert!(
        result["message"][0]["text"]
            .as_str()
            .unwrap()
            .contains("TxInProgress"),
        "{result}"
    );

    let unlock = json!({"response_url": roaming.response_url("UNLOCK_CONNECTOR", 2),
        "location_id": location, "evse_uid": evse, "connector_id": "1"});
    roaming
        .answered("UNLOCK_CONNECTOR", &unlock, "ACCEPTED")
        .await;
    let call = station.call_from_cms("UnlockConnector").await;
    assert_eq!(call[3], json!({"evseId": 1, "connectorId": 1}));
    station
        .answer(&call, json!({"status": "UnlockFailed"}))
        .await;
    let (_, result) = result_of_newest(&cms, &roaming, &evse).await;
    assert_eq!(result["result"], "FAILED", "{result}");

    // A reservation the station refuses: EVSE_OCCUPIED, and the cms reservation refused.
    let expiry = chrono::Utc::now() + chrono::Duration::hours(2);
    let expiry = expiry.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let reserve = json!({"response_url": roaming.response_url("RESERVE_NOW", 3),
        "token": Roaming::token(uid), "expiry_date": expiry, "reservation_id": "r-201",
        "location_id": location});
    roaming.answered("RESERVE_NOW", &reserve, "ACCEPTED").await;
    let call = station.call_from_cms("ReserveNow").await;
    let id = call[3]["id"].as_i64().expect("cms's reservation id");
    assert_eq!(
        call[3],
        json!({"id": id, "expiryDateTime": expiry,
               "idToken": {"idToken": uid, "type": "Central"}})
    );
    station.answer(&call, json!({"status": "Occupied"})).await;
    let (_, result) = result_of_newest(&cms, &roaming, &evse).await;
    assert_eq!(result["result"], "EVSE_OCCUPIED", "{result}");
    let path = format!("/api/v3/chargers/{evse}/reservations/{id}");
    eventually("the reservation refused", async || {
        let shown = roaming.api.get_ok(&path).await;
        match shown["data"]["status"] == "refused" {
            true => Ok(()),
            false => Err(shown.to_string()),
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_cms_cannot_send_are_refused_and_nothing_is_sent() {
    let cms = Cms::up_with(&["--ocpi-allow-private"]).await;
    let roaming = Roaming::register(&cms).await;
    let offline = cms.add_charger("CP-OCPI-OFF").await;
    let location = operators_site(&roaming.api).await;
    roaming.publish(&location).await;
    let url = roaming.response_url("START_SESSION", 1);
    let start = |location: &str, evse: &str| {
        json!({"response_url": url, "token": Roaming::token("APP-0003"),
               "location_id": location, "evse_uid": evse})
    };

    // A charger that is not connected: REJECTED, saying so.
    let response = roaming
        .answered("START_SESSION", &start(&location, &offline), "REJECTED")
        .await;
    assert_eq!(
        response["message"][0]["text"], "The charger is not connected.",
        "{response}"
    );
    // A command OCPI does not have: NOT_SUPPORTED.
    roaming
        .answered("CHARGE_FASTER", &json!({}), "NOT_SUPPORTED")
        .await;
    // Malformed bodies and missing fields: 400, 2001.
    for (command, body) in [
        ("START_SESSION", json!("not an object")),
        (
            "START_SESSION",
            json!({"response_url": url, "location_id": location}),
        ),
        ("STOP_SESSION", json!({"response_url": url})),
        (
            "UNLOCK_CONNECTOR",
            json!({"response_url": url, "location_id": location,
                                     "evse_uid": offline}),
        ),
        (
            "RESERVE_NOW",
            json!({"response_url": url, "token": Roaming::token("A"),
            "expiry_date": "soon", "reservation_id": "r", "location_id": location}),
        ),
        (
            "CANCEL_RESERVATION",
            json!({"response_url": "not a url", "reservation_id": "r"}),
        ),
    ] {
        let answer = roaming.command(command, &body).await;
        assert_eq!(
            (answer.status, answer.code()),
            (400, 2001),
            "{command} {body}: {:?}",
            answer.json
        );
    }
    // A location of another team, one there is not, an EVSE of another location, a
    // connector that is no number: 404, 2003.
    let elsewhere = uuid_of(&create_site(&roaming.api, "Somebody else's").await);
    for (location, evse) in [
        (elsewhere.as_str(), offline.as_str()),
        ("00000000-0000-4000-8000-000000000000", offline.as_str()),
        (location.as_str(), "00000000-0000-4000-8000-000000000000"),
    ] {
        let answer = roaming
            .command("START_SESSION", &start(location, evse))
            .await;
        assert_eq!(
            (answer.status, answer.code()),
            (404, 2003),
            "{location} {evse}: {:?}",
            answer.json
        );
    }
    let unlock = json!({"response_url": url, "location_id": location, "evse_uid": offline,
                        "connector_id": "left"});
    let answer = roaming.command("UNLOCK_CONNECTOR", &unlock).await;
    assert_eq!((answer.status, answer.code()), (404, 2003));
    // Without the party's token: 401.
    let path = "/ocpi/2.2.1/commands/START_SESSION";
    let anonymous = roaming
        .ocpi
        .call("POST", path, None, Some(&start(&location, &offline)))
        .await;
    assert_eq!(anonymous.status, 401);

    // Only the offline charger's START_SESSION was kept (REJECTED, no action).
    let store = cms.open_store().await;
    let provider = store
        .provider_by_uuid(&roaming.provider_uuid)
        .await
        .unwrap()
        .unwrap();
    let kept = store
        .ocpi_commands_of_provider(provider.id, 10)
        .await
        .unwrap();
    let kept: Vec<_> = kept
        .iter()
        .map(|c| {
            (
                c.command.as_str(),
                c.response.as_deref(),
                c.action_uuid.is_some(),
            )
        })
        .collect();
    assert_eq!(kept, [("START_SESSION", Some("REJECTED"), false)]);
    let actions = roaming
        .api
        .get_ok(&format!("/api/v3/chargers/{offline}/actions"))
        .await;
    assert_eq!(actions["data"], json!([]), "nothing taken: {actions}");
}
