//! Firmware, logs and reservations of 2.0.1 stations (issue 45, blocks L, N and H): what a
//! station tells of its firmware update and log upload shows on the charger resource; a
//! reservation made through the REST API reaches the station as ReserveNow and ends as it does
//! (used, cancelled, expired).

use super::{Bench, SHOWN};
use crate::support::station201::RawStation201;
use serde_json::Value;

/// `GET /api/v3/chargers/{uuid}` once its `field` satisfies `done`.
async fn charger_once(bench: &Bench, field: &str, done: impl Fn(&Value) -> bool) -> Value {
    let path = format!("/api/v3/chargers/{}", bench.uuid);
    crate::support::eventually_within(SHOWN, &format!("{field} of {path}"), async || {
        let charger = bench.api.get_ok(&path).await["data"].clone();
        match done(&charger[field]) {
            true => Ok(charger),
            false => Err(charger.to_string()),
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_station_s_firmware_and_log_status_show_on_the_charger() {
    let bench = Bench::start("CP-201-FWRAW").await;
    let shown = charger_once(&bench, "firmware", Value::is_null).await;
    assert_eq!(shown["log_upload"], Value::Null, "none told yet: {shown}");

    let mut raw = RawStation201::connect(bench.cms.ocpp_addr(), &bench.identity).await;
    raw.boot().await;
    for (action, payload) in [
        (
            "FirmwareStatusNotification",
            r#"{"status":"Downloading","requestId":17}"#,
        ),
        (
            "FirmwareStatusNotification",
            r#"{"status":"Installed","requestId":17}"#,
        ),
        (
            "LogStatusNotification",
            r#"{"status":"Uploading","requestId":5}"#,
        ),
    ] {
        let answer = raw.call_text(action, payload).await;
        assert_eq!(answer[0], 3, "{action} answered: {answer}");
    }
    let shown = charger_once(&bench, "log_upload", |l| l["status"] == "Uploading").await;
    assert_eq!(shown["firmware"]["status"], "Installed", "{shown}");
    assert_eq!(shown["firmware"]["request_id"], 17, "{shown}");
    assert!(shown["firmware"]["updated_at"].is_string(), "{shown}");
    assert_eq!(shown["log_upload"]["request_id"], 5, "{shown}");
    // The list's rows show them too.
    let row = bench
        .api
        .wait_for_charger(&bench.uuid, "its log upload", |c| {
            c["log_upload"]["status"] == "Uploading"
        })
        .await;
    assert_eq!(row["firmware"], shown["firmware"], "{row}");
}
