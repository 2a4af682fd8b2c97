//! Opening charger websockets: the handshake, who is let in, takeover by a newer connection,
//! and frames too big to take.

use crate::support::{Api, Charger, Cms, Handshake, throughout};
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offering_ocpp16_gets_it_agreed() {
    let cms = Cms::up().await;
    cms.add_charger("CP-PROTO-1").await;

    let mut charger = Charger::connect(&cms, "CP-PROTO-1").await;
    assert_eq!(charger.subprotocol.as_deref(), Some("ocpp1.6"));
    charger.heartbeat().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_offering_no_subprotocol_is_upgraded_then_closed_with_1002() {
    let cms = Cms::up().await;
    cms.add_charger("CP-PROTO-2").await;

    // tungstenite itself fails the handshake if the server names a subprotocol here.
    let mut charger = Handshake::new(&cms, "CP-PROTO-2")
        .without_subprotocol()
        .open()
        .await
        .expect("the upgrade completes even without a subprotocol");
    assert_eq!(charger.subprotocol, None);
    let (code, reason) = charger.expect_close().await;
    assert_eq!(code, 1002, "close code (reason {reason:?})");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_malformed_identities_are_refused_before_the_upgrade() {
    let cms = Cms::up().await;
    let longest = "A".repeat(48);
    cms.add_charger(&longest).await;

    assert_eq!(
        Handshake::new(&cms, "CP-NOBODY").refused_status().await,
        404
    );
    assert_eq!(
        Handshake::new(&cms, &"A".repeat(49)).refused_status().await,
        400
    );
    assert_eq!(
        Handshake::new(&cms, "CP%20SPACE").refused_status().await,
        400
    );

    let mut charger = Charger::connect(&cms, &longest).await;
    charger.heartbeat().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_identity_in_the_url_is_percent_decoded() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP|7@Site.1").await;
    let api = Api::new(&cms, &cms.operator_token().await);

    let mut charger = Charger::connect(&cms, "CP%7C7%40Site.1").await;
    charger
        .call_result("BootNotification", crate::support::boot_payload("9.9.9"))
        .await;

    let seen = api
        .wait_for_charger(&uuid, "firmware 9.9.9", |c| {
            c["firmware_version"] == "9.9.9"
        })
        .await;
    assert_eq!(seen["identity"], "CP|7@Site.1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_on_the_ocpp_port() {
    let cms = Cms::up().await;
    let url = format!("http://{}/healthz", cms.ocpp_addr());
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let response = tokio::time::timeout(Duration::from_secs(5), client.get(&url).send())
        .await
        .expect("GET /healthz on the OCPP port timed out")
        .expect("GET /healthz on the OCPP port");
    assert_eq!(response.status().as_u16(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_connection_replaces_the_first() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP-TAKEOVER").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let mut first = Charger::connect_and_boot(&cms, "CP-TAKEOVER", "1.0.0").await;
    api.wait_for_charger(&uuid, "online", |c| c["connection_status"] == "online")
        .await;

    let mut second = Charger::connect_and_boot(&cms, "CP-TAKEOVER", "1.0.0").await;

    let (code, reason) = first.expect_close().await;
    assert_eq!(
        code, 1000,
        "the replaced connection's close code (reason {reason:?})"
    );
    assert!(
        reason.contains("replaced"),
        "close reason should mention \"replaced\": {reason:?}"
    );

    second.heartbeat().await;
    second
        .call_result(
            "StatusNotification",
            json!({"connectorId": 0, "errorCode": "NoError", "status": "Available"}),
        )
        .await;
    // The heartbeat was sent after the first connection closed: once it shows, the first
    // connection's end has been consumed too, and must not have made the charger offline.
    api.wait_for_charger(&uuid, "heartbeat of the second connection", |c| {
        c["last_heartbeat_at"].is_string()
    })
    .await;
    throughout(Duration::from_secs(1), "the charger online", async || {
        let charger = api.charger(&uuid).await.expect("listed");
        match charger["connection_status"] == "online" {
            true => Ok(()),
            false => Err(charger.to_string()),
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_over_the_size_limit_closes_with_1009() {
    let cms = Cms::up_with(&["--max-frame-size", "4096"]).await;
    cms.add_charger("CP-BIG").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-BIG", "1.0.0").await;

    // Under the limit is fine.
    let data = "d".repeat(3_900);
    let payload = json!({"vendorId": "com.example", "data": data});
    let answer = charger.call_result("DataTransfer", payload).await;
    assert_eq!(answer["status"], "UnknownVendorId");

    let oversize = format!(
        r#"[2,"big","DataTransfer",{{"vendorId":"x","data":"{}"}}]"#,
        "d".repeat(5_000)
    );
    charger.send_text(&oversize).await;
    let (code, reason) = charger.expect_close().await;
    assert_eq!(
        code, 1009,
        "close code for a 5 kB frame over a 4 KiB limit (reason {reason:?})"
    );
}
