//! Display messages (block O) for a 2.0.1 station, through the REST API's actions: a message set
//! on the Python 2.0.1 station (its schema validation of each call on), read back (the station's
//! NotifyDisplayMessages reaches cms and shows in the charger's frames), cleared.

use super::{Bench, require_python_packages};
use crate::support::commanded::calls::Commands;
use crate::support::eventually_within;
use crate::support::station201::python_station;
use serde_json::{Value, json};
use std::time::Duration;

const LINE: Duration = Duration::from_secs(20);

/// Posts `body` to the action `segment` and returns the station's answer, once `answered`.
async fn answered(commands: &Commands, uuid: &str, segment: &str, body: &Value) -> Value {
    let posted = commands
        .post(uuid, &format!("{segment}?wait=10"), Some(body))
        .await;
    assert_eq!(posted.status, 200, "{segment}: {}", posted.body);
    let action = &posted.json["data"];
    assert_eq!(action["status"], "answered", "{segment}: {action}");
    assert_eq!(action["ocpp_version"], "2.0.1", "{segment}: {action}");
    action["response"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_is_set_read_back_and_cleared_on_a_201_station() {
    require_python_packages().await;
    let bench = Bench::start("CP-201-DISPLAY").await;
    let mut station = python_station(&bench.url(), &bench.identity, "commanded", &["--for", "60"]);
    station
        .wait_within(LINE, "its BootNotification answered", |l| {
            l["sent"] == "BootNotification"
        })
        .await;
    // The API takes the station's version from its connection, once stored.
    (bench.api)
        .wait_for_charger(&bench.uuid, "2.0.1, online", |c| {
            c["ocpp_version"] == "2.0.1" && c["connection_status"] == "online"
        })
        .await;
    let token = bench.cms.operator_token().await;
    let commands = Commands::at(&bench.cms.http_url(""), &token);
    let uuid = &bench.uuid;

    let message = json!({"message": {"id": 7, "priority": "InFront", "state": "Charging",
        "message": {"format": "UTF8", "content": "0.36 EUR/kWh"}}});
    let set = answered(&commands, uuid, "set-display-message", &message).await;
    assert_eq!(set, json!({"status": "Accepted"}));
    station
        .wait_within(LINE, "the SetDisplayMessage", |l| {
            l["received"] == "SetDisplayMessage" && l["payload"] == message
        })
        .await;

    let asked = json!({"requestId": 41, "id": [7]});
    let got = answered(&commands, uuid, "get-display-messages", &asked).await;
    assert_eq!(got, json!({"status": "Accepted"}));
    // The messages come in the station's own call, which cms answers and keeps.
    let notified = station
        .wait_within(LINE, "its NotifyDisplayMessages answered", |l| {
            l["sent"] == "NotifyDisplayMessages"
        })
        .await;
    assert_eq!(notified["answer"], json!({}), "{notified}");
    assert_eq!(notified["payload"]["requestId"], 41, "{notified}");
    assert_eq!(
        notified["payload"]["messageInfo"][0]["message"]["content"], "0.36 EUR/kWh",
        "{notified}"
    );
    let frames = format!("/api/v3/chargers/{uuid}/messages");
    eventually_within(
        LINE,
        "the NotifyDisplayMessages among its frames",
        async || {
            let shown = bench.api.get_ok(&frames).await;
            let frames = shown["data"].as_array().cloned().unwrap_or_default();
            let arrived = frames.iter().any(|f| {
                f["direction"] == "in"
                    && f["frame"]
                        .as_str()
                        .is_some_and(|t| t.contains("NotifyDisplayMessages"))
            });
            arrived.then_some(()).ok_or(format!("{shown}"))
        },
    )
    .await;

    let clear = json!({"id": 7});
    let cleared = answered(&commands, uuid, "clear-display-message", &clear).await;
    assert_eq!(cleared, json!({"status": "Accepted"}));
    let again = answered(&commands, uuid, "get-display-messages", &asked).await;
    assert_eq!(again, json!({"status": "Unknown"}), "cleared, so none left");
    let gone = answered(&commands, uuid, "clear-display-message", &clear).await;
    assert_eq!(gone, json!({"status": "Unknown"}));
    station.assert_nothing_unexpected();
}
