//! Display messages (block O) in the Kafka deployment: an action taken by `cms api` reaches the
//! Python 2.0.1 station on a `cms gateway` over the bus, and the station's answer and its
//! NotifyDisplayMessages come back the same way.

use crate::support::broker::Broker;
use crate::support::fleet::Fleet;
use crate::support::station201::python_station;
use serde_json::json;
use std::time::{Duration, Instant};

const LINE: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_a_display_message_reaches_a_201_station_and_is_read_back() {
    let broker = Broker::shared().await;
    let gateway = ["gw-display"];
    let fleet = Fleet::start(&broker.brokers, &gateway).await;
    let identity = "KD-201-DISPLAY";
    let added = Instant::now();
    let uuid = fleet.add_charger(identity).await;
    fleet
        .wait_until_accepted(identity, &gateway, added, Duration::from_secs(10))
        .await;
    let url = format!(
        "ws://{}/ocpp/{identity}",
        fleet.gateway("gw-display").ocpp_addr
    );
    let mut station = python_station(&url, identity, "commanded", &["--for", "60"]);
    station
        .wait_within(LINE, "its BootNotification answered", |l| {
            l["sent"] == "BootNotification"
        })
        .await;
    let api = fleet.rest().await;
    // The API knows the station's version once it consumed its connection.
    api.wait_for_charger(&uuid, "2.0.1", |c| c["ocpp_version"] == "2.0.1")
        .await;
    let message = json!({"message": {"id": 3, "priority": "NormalCycle",
        "message": {"format": "UTF8", "content": "Welcome"}}});
    let path = format!("/api/v3/chargers/{uuid}/actions/set-display-message?wait=10");
    let set = api.expect(200, "POST", &path, Some(&message)).await;
    assert_eq!(set["data"]["status"], "answered", "{set}");
    assert_eq!(
        set["data"]["response"],
        json!({"status": "Accepted"}),
        "{set}"
    );

    let asked = json!({"requestId": 5});
    let path = format!("/api/v3/chargers/{uuid}/actions/get-display-messages?wait=10");
    let got = api.expect(200, "POST", &path, Some(&asked)).await;
    assert_eq!(
        got["data"]["response"],
        json!({"status": "Accepted"}),
        "{got}"
    );
    let notified = station
        .wait_within(LINE, "its NotifyDisplayMessages answered", |l| {
            l["sent"] == "NotifyDisplayMessages"
        })
        .await;
    assert_eq!(notified["answer"], json!({}), "{notified}");
    assert_eq!(
        notified["payload"]["messageInfo"][0]["message"]["content"], "Welcome",
        "{notified}"
    );
    station.assert_nothing_unexpected();
}
