//! The Core calls cms makes, sent through the REST API to the Python 2.0.1 station (its schema
//! validation of each call on): each reaches the station and ends `answered` with the station's
//! answer; Chargers > Settings shows the device model the station reported after its boot, with
//! its secret never in clear, and refuses a read-only variable before anything is sent.
//!
//! The REST shapes of 2.0.1 actions and settings are being decided (v201-contract.md): the
//! bodies below follow the 1.6 actions' envelope (the body is the request's payload), and the
//! settings' field names are read in one place, [`variable_row`], to adjust.

use super::{Bench, ID_TOKEN, SHOWN, id_token, require_python_packages};
use crate::support::commanded::calls::{Commands, json_contains, json_eq};
use crate::support::peer::Peer;
use crate::support::station201::{STATION_SECRET, python_station};
use crate::support::{eventually_within, is_uuid};
use serde_json::{Value, json};
use std::time::Duration;

/// How long a line of the station may take.
const LINE: Duration = Duration::from_secs(20);

/// A setting as this test reads it: (component, evse id, variable, attribute type, value,
/// mutability).
type Row = (Value, Value, Value, Value, Value, Value);

/// The API's names for them: `component`, `evse_id`, `variable`, `attribute_type`, `value`,
/// `mutability` (issue 42: "component, EVSE, variable, attribute type, value, mutability").
fn variable_row(setting: &Value) -> Row {
    let field = |name: &str| setting[name].clone();
    (
        field("component"),
        field("evse_id"),
        field("variable"),
        field("attribute_type"),
        field("value"),
        field("mutability"),
    )
}

fn row(component: &str, evse: Value, variable: &str, value: Value, mutability: &str) -> Row {
    (
        json!(component),
        evse,
        json!(variable),
        json!("Actual"),
        value,
        json!(mutability),
    )
}

/// Sends `body` (None: no body) to `segment` with `?wait=10` and checks what a user and the
/// station see: 200, `answered`, the request as sent, the response the station printed, which
/// must hold `expected`. Returns the action.
async fn round_trip(
    commands: &Commands,
    uuid: &str,
    station: &mut Peer,
    (segment, action, body, expected): (&str, &str, Option<Value>, Value),
) -> Value {
    let posted = commands
        .post(uuid, &format!("{segment}?wait=10"), body.as_ref())
        .await;
    assert_eq!(posted.status, 200, "{segment}: {}", posted.body);
    let shown = posted.json["data"].clone();
    assert!(shown["uuid"].as_str().is_some_and(is_uuid), "{shown}");
    assert_eq!(shown["action"], action, "{segment}: {shown}");
    assert_eq!(shown["status"], "answered", "{segment}: {shown}");
    let request = body.unwrap_or_else(|| json!({}));
    assert!(json_eq(&shown["request"], &request), "{segment}: {shown}");

    let what = format!("that it received {action} {request}");
    let arrived = station
        .wait_within(LINE, &what, |l| {
            l["received"] == action && json_eq(&l["payload"], &request)
        })
        .await;
    let id = arrived["unique_id"].clone();
    let answered = station
        .wait_within(LINE, &format!("its answer to {id}"), |l| {
            l.get("answered").is_some() && l["unique_id"] == id
        })
        .await;
    assert!(
        json_eq(&shown["response"], &answered["payload"]),
        "{segment}: the station answered {answered}, the action shows {shown}"
    );
    assert!(
        json_contains(&shown["response"], &expected),
        "{segment}: {shown}"
    );
    shown
}

/// The station's TransactionEvent of `trigger_reason` for `transaction_id`, once sent.
async fn event_sent(station: &mut Peer, transaction_id: &str, trigger_reason: &str) -> Value {
    let what = format!("its TransactionEvent {trigger_reason} of {transaction_id}");
    station
        .wait_within(LINE, &what, |l| {
            l["sent"] == "TransactionEvent"
                && l["payload"]["transactionInfo"]["transactionId"] == transaction_id
                && l["payload"]["triggerReason"] == trigger_reason
        })
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_station_commanded() {
    require_python_packages().await;
    let bench = Bench::start("CP-201-CMD").await;
    let mut station = python_station(&bench.url(), &bench.identity, "commanded", &["--for", "90"]);
    station
        .wait_within(LINE, "its BootNotification answered", |l| {
            l["sent"] == "BootNotification"
        })
        .await;
    (bench.api)
        .wait_for_charger(&bench.uuid, "online", |c| {
            c["connection_status"] == "online"
        })
        .await;

    // Settings: the device model the station reported after its boot (cms asked for it).
    let path = format!("/api/v3/chargers/{}/settings", bench.uuid);
    let (body, mut rows) = eventually_within(SHOWN, "the device model in settings", async || {
        let answer = bench.api.get(&path).await;
        let data = answer.json["data"].as_array().cloned().unwrap_or_default();
        match answer.status == 200 && data.len() == 6 {
            true => Ok((
                answer.body,
                data.iter().map(variable_row).collect::<Vec<Row>>(),
            )),
            false => Err(format!("{} {}", answer.status, answer.body)),
        }
    })
    .await;
    assert!(
        !body.contains(STATION_SECRET),
        "the secret shown in clear: {body}"
    );
    let secret = rows
        .iter_mut()
        .find(|r| r.2 == "BasicAuthPassword")
        .unwrap_or_else(|| panic!("BasicAuthPassword listed: {body}"));
    secret.4 = Value::Null; // whatever stands for it (null, a mask), never the secret
    rows.sort_by_key(|r| format!("{}/{}/{}", r.0, r.1, r.2));
    let identity = json!(bench.identity);
    assert_eq!(
        rows,
        [
            row(
                "AuthCtrlr",
                Value::Null,
                "AuthorizeRemoteStart",
                json!("true"),
                "ReadWrite"
            ),
            row(
                "EVSE",
                json!(1),
                "AvailabilityState",
                json!("Available"),
                "ReadOnly"
            ),
            row(
                "OCPPCommCtrlr",
                Value::Null,
                "HeartbeatInterval",
                json!("300"),
                "ReadWrite"
            ),
            row(
                "SecurityCtrlr",
                Value::Null,
                "BasicAuthPassword",
                Value::Null,
                "WriteOnly"
            ),
            row(
                "SecurityCtrlr",
                Value::Null,
                "Identity",
                identity,
                "ReadOnly"
            ),
            row(
                "TxCtrlr",
                Value::Null,
                "EVConnectionTimeOut",
                json!("60"),
                "ReadWrite"
            ),
        ],
        "{body}"
    );

    // A read-only variable is refused before anything is sent; a writable one goes as
    // SetVariables and is answered per variable.
    // Keys in the flattened form of docs/api.md: `Component/Variable` for these.
    let setting = |component: &str, variable: &str, value: &str| json!({"settings": {format!("{component}/{variable}"): value}});
    let read_only = setting("SecurityCtrlr", "Identity", "CP-OTHER");
    bench
        .api
        .expect_invalid("PUT", &path, Some(&read_only))
        .await;
    let changed = setting("OCPPCommCtrlr", "HeartbeatInterval", "120");
    let put = format!("{path}?wait=10");
    let answer = bench.api.expect(200, "PUT", &put, Some(&changed)).await;
    assert_eq!(answer["data"][0]["status"], "Accepted", "{answer}");
    let sent = station.lines_where("received", "SetVariables");
    assert_eq!(
        sent.len(),
        1,
        "one SetVariables, none for the read-only one: {sent:?}"
    );
    let expected = json!({"attributeValue": "120", "component": {"name": "OCPPCommCtrlr"},
                          "variable": {"name": "HeartbeatInterval"}});
    assert!(
        json_contains(&sent[0]["payload"]["setVariableData"][0], &expected),
        "{sent:?}"
    );

    // Every Core call, through the REST API.
    let token = bench.cms.operator_token().await;
    let commands = Commands::at(&bench.cms.http_url(""), &token);
    let accepted = json!({"status": "Accepted"});
    let heartbeat = json!([{"component": {"name": "OCPPCommCtrlr"},
                            "variable": {"name": "HeartbeatInterval"}}]);
    let plain = [
        (
            "get-base-report",
            "GetBaseReport",
            Some(json!({"requestId": 101, "reportBase": "FullInventory"})),
            accepted.clone(),
        ),
        (
            "get-report",
            "GetReport",
            Some(json!({"requestId": 102, "componentVariable": heartbeat})),
            accepted.clone(),
        ),
        (
            "get-variables",
            "GetVariables",
            Some(json!({"getVariableData": heartbeat})),
            json!({"getVariableResult": [{"attributeStatus": "Accepted", "attributeValue": "120"}]}),
        ),
        (
            "set-variables",
            "SetVariables",
            Some(json!({"setVariableData": [
             {"attributeValue": "90", "component": {"name": "TxCtrlr"},
              "variable": {"name": "EVConnectionTimeOut"}},
             {"attributeValue": "CP-OTHER", "component": {"name": "SecurityCtrlr"},
              "variable": {"name": "Identity"}}]})),
            json!({"setVariableResult": [{"attributeStatus": "Accepted"},
                                      {"attributeStatus": "Rejected"}]}),
        ),
        (
            "reset",
            "Reset",
            Some(json!({"type": "OnIdle"})),
            accepted.clone(),
        ),
        (
            "reset",
            "Reset",
            Some(json!({"type": "Immediate", "evseId": 1})),
            accepted.clone(),
        ),
        (
            "unlock-connector",
            "UnlockConnector",
            Some(json!({"evseId": 1, "connectorId": 1})),
            json!({"status": "Unlocked"}),
        ),
        (
            "trigger-message",
            "TriggerMessage",
            Some(json!({"requestedMessage": "StatusNotification",
                     "evse": {"id": 1, "connectorId": 1}})),
            accepted.clone(),
        ),
        (
            "change-availability",
            "ChangeAvailability",
            Some(json!({"operationalStatus": "Operative"})),
            accepted.clone(),
        ),
        (
            "change-availability",
            "ChangeAvailability",
            Some(json!({"operationalStatus": "Inoperative", "evse": {"id": 1}})),
            accepted.clone(),
        ),
        (
            "change-availability",
            "ChangeAvailability",
            Some(json!({"operationalStatus": "Operative", "evse": {"id": 1, "connectorId": 1}})),
            accepted.clone(),
        ),
        ("clear-cache", "ClearCache", None, accepted.clone()),
        (
            "data-transfer",
            "DataTransfer",
            Some(json!({"vendorId": "com.example.vendor", "messageId": "Ping", "data": "héllo"})),
            json!({"status": "Accepted", "data": "héllo"}),
        ),
    ];
    for planned in plain {
        round_trip(&commands, &bench.uuid, &mut station, planned).await;
    }
    // Its boot's StatusNotification, then the one TriggerMessage asked for.
    eventually_within(LINE, "the triggered StatusNotification", async || {
        let sent = station.lines_where("sent", "StatusNotification");
        match sent.len() {
            2 => Ok(()),
            _ => Err(format!("{sent:?}")),
        }
    })
    .await;

    // A remote start, its status, its stop; the transaction they make.
    let start = json!({"idToken": id_token(ID_TOKEN), "evseId": 1, "remoteStartId": 77});
    let planned = (
        "request-start-transaction",
        "RequestStartTransaction",
        Some(start),
        accepted.clone(),
    );
    round_trip(&commands, &bench.uuid, &mut station, planned).await;
    let started = event_sent(&mut station, "RS-77", "RemoteStart").await;
    assert_eq!(
        started["answer"]["idTokenInfo"]["status"], "Accepted",
        "{started}"
    );
    let status = json!({"transactionId": "RS-77"});
    let planned = (
        "get-transaction-status",
        "GetTransactionStatus",
        Some(status),
        json!({"messagesInQueue": false, "ongoingIndicator": true}),
    );
    round_trip(&commands, &bench.uuid, &mut station, planned).await;
    let stop = json!({"transactionId": "RS-77"});
    let planned = (
        "request-stop-transaction",
        "RequestStopTransaction",
        Some(stop),
        accepted,
    );
    round_trip(&commands, &bench.uuid, &mut station, planned).await;
    event_sent(&mut station, "RS-77", "RemoteStop").await;
    let transaction = bench
        .transaction("RS-77", |t| t["stopped_at"].is_string())
        .await;
    assert_eq!(transaction["stop_reason"], "Remote", "{transaction}");
    assert_eq!(transaction["meter_start"], 1000, "{transaction}");
    assert_eq!(transaction["meter_stop"], 1500, "{transaction}");

    // Every call cms sent passed the station's schema validation, and so did every answer.
    station.finish(Duration::from_secs(10)).await;
}
