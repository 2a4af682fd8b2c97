//! Websocket pings, and closing connections that went silent.

use crate::support::{Api, Charger, Cms};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_answering_pings_stays_connected_past_the_idle_timeout() {
    let cms = Cms::up_with(&["--ws-ping-interval", "500ms", "--ws-idle-timeout", "2s"]).await;
    cms.add_charger("CP-PONG").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-PONG", "1.0.0").await;

    // Sends no OCPP frame for twice the idle timeout, only pongs (answered while reading).
    let pings = charger.stay_for(Duration::from_secs(4)).await;
    assert!(
        pings >= 4,
        "expected a ping about every 500ms for 4s, got {pings}"
    );
    charger.heartbeat().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_client_is_disconnected_after_the_idle_timeout() {
    let cms = Cms::up_with(&["--ws-ping-interval", "1s", "--ws-idle-timeout", "3s"]).await;
    let uuid = cms.add_charger("CP-SILENT").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let mut charger = Charger::connect_and_boot(&cms, "CP-SILENT", "1.0.0").await;

    // Not reading means not answering pings either: the connection is silent.
    tokio::time::sleep(Duration::from_millis(4_500)).await;

    let ended = charger.expect_end(Duration::from_secs(4)).await;
    eprintln!("the silent connection ended with {ended:?}");
    api.wait_for_charger(&uuid, "offline after the idle timeout", |c| {
        c["connection_status"] == "offline"
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_idle_timeout_holds_even_when_shorter_than_the_ping_interval() {
    let cms = Cms::up_with(&["--ws-ping-interval", "30s", "--ws-idle-timeout", "2s"]).await;
    cms.add_charger("CP-SILENT-2").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-SILENT-2", "1.0.0").await;

    // No ping is due for 30s, so nothing is owed to the server: 2s of silence is enough.
    let ended = charger.expect_end(Duration::from_secs(5)).await;
    eprintln!("the silent connection ended with {ended:?}");
}
