//! The harness of proxy relaying, checked on its own: the third-party central system
//! (support/central_system.rs) and the third-party charge point (support/commanded.rs), both
//! built on the Python `ocpp` package, talk to each other directly, so that a proxy test that
//! fails points at cms and not at the harness.
//!
//! Needs `python3` with the packages of tests/interop/requirements.txt (scripts/test installs
//! them). Without them the test fails, never skips.

use crate::support::central_system::CentralSystem;
use crate::support::commanded::CommandedCharger;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_central_system_call_reaches_the_charge_point_and_its_answer_comes_back() {
    let mut central = CentralSystem::start(&["--transaction-id", "77"]).await;
    let identity = "CP-HARNESS";
    let url = format!("{}/ocpp/{identity}", central.url());
    let mut charger = CommandedCharger::connect(&url, identity).await;

    let connected = central
        .wait_for("that CP-HARNESS connected", |l| l["connected"] == identity)
        .await;
    assert_eq!(connected["path"], "/ocpp/CP-HARNESS");
    let boot = central
        .wait_received("BootNotification", |l| l["identity"] == identity)
        .await;
    assert_eq!(boot["payload"]["chargePointModel"], "CommandedModel");

    // A CSMS-initiated call arrives as sent, and the charger's answer comes back.
    let request = json!({"connectorId": 1, "idTag": "04A2B3C4D5E680"});
    let sent = central
        .call(identity, "RemoteStartTransaction", &request)
        .await;
    assert_eq!(sent["answer"], json!({"status": "Accepted"}), "{sent}");
    charger
        .wait_received("RemoteStartTransaction", &request)
        .await;

    // A call the charger refuses comes back as the CALLERROR it sent.
    let refused = json!({"vendorId": "cms.test.error", "messageId": "NotSupported"});
    let sent = central.call(identity, "DataTransfer", &refused).await;
    assert_eq!(sent["error"][0], "NotSupported", "{sent}");
    assert!(sent.get("answer").is_none(), "{sent}");

    // The charger's own call is answered as configured.
    let answer = charger.send("start 1 04A2B3C4D5E680").await;
    assert_eq!(answer["transactionId"], 77, "{answer}");
    assert_eq!(answer["idTagInfo"]["status"], "Accepted", "{answer}");
    let starts = central.received_of("StartTransaction");
    assert_eq!(starts.len(), 1, "{starts:?}");
    assert_eq!(starts[0]["payload"]["connectorId"], 1, "{starts:?}");

    // Closing the connection from the central system's side reaches the charger.
    central.close(identity).await;
    charger
        .wait_for("that the server closed its connection", |l| {
            l["disconnected"].is_string() && l["by"] == "server"
        })
        .await;

    charger.finish().await;
    central.finish().await;
}
