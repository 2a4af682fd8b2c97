//! Starting and stopping charging sessions; a retried start gets the same transaction.

use crate::support::{Charger, Cms};
use serde_json::{Value, json};

fn start(connector: u32, id_tag: &str, meter_start: i64, timestamp: &str) -> Value {
    json!({
        "connectorId": connector,
        "idTag": id_tag,
        "meterStart": meter_start,
        "timestamp": timestamp,
    })
}

async fn start_transaction(charger: &mut Charger, payload: Value) -> i64 {
    let answer = charger
        .call_result("StartTransaction", payload.clone())
        .await;
    assert_eq!(
        answer["idTagInfo"]["status"], "Accepted",
        "answer to {payload}: {answer}"
    );
    answer["transactionId"]
        .as_i64()
        .unwrap_or_else(|| panic!("transactionId should be an integer: {answer}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_start_gets_the_same_transaction_and_a_new_start_another() {
    let cms = Cms::up().await;
    cms.add_charger("CP-TX-1").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-TX-1", "1.0.0").await;

    let first = start(1, "04A2B3C4D5E680", 12_345, "2026-02-10T09:00:00Z");
    let id = start_transaction(&mut charger, first.clone()).await;
    let retried = start_transaction(&mut charger, first).await;
    assert_eq!(
        retried, id,
        "a retried StartTransaction (new message id) got a new transaction"
    );

    let other_meter = start(1, "04A2B3C4D5E680", 12_346, "2026-02-10T09:00:00Z");
    let later = start(1, "04A2B3C4D5E680", 12_345, "2026-02-10T09:00:01Z");
    let other_connector = start(2, "04A2B3C4D5E680", 12_345, "2026-02-10T09:00:00Z");
    let other_tag = start(1, "CARD-2", 12_345, "2026-02-10T09:00:00Z");
    let mut ids = vec![id];
    for payload in [other_meter, later, other_connector, other_tag] {
        let new_id = start_transaction(&mut charger, payload.clone()).await;
        assert!(
            !ids.contains(&new_id),
            "{payload} reused transaction {new_id} of {ids:?}"
        );
        ids.push(new_id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_retried_on_a_new_connection_gets_the_same_transaction() {
    let cms = Cms::up().await;
    cms.add_charger("CP-TX-2").await;
    let payload = start(1, "04A2B3C4D5E680", 500, "2026-02-10T10:15:30Z");

    let mut charger = Charger::connect_and_boot(&cms, "CP-TX-2", "1.0.0").await;
    let id = start_transaction(&mut charger, payload.clone()).await;
    charger.close().await;

    let mut reconnected = Charger::connect_and_boot(&cms, "CP-TX-2", "1.0.0").await;
    let retried = start_transaction(&mut reconnected, payload).await;
    assert_eq!(
        retried, id,
        "the StartTransaction retried after a reconnect got a new transaction"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_transaction_is_answered() {
    let cms = Cms::up().await;
    cms.add_charger("CP-TX-3").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-TX-3", "1.0.0").await;
    let first = start_transaction(&mut charger, start(1, "TAG-1", 0, "2026-02-10T11:00:00Z")).await;
    let second =
        start_transaction(&mut charger, start(2, "TAG-2", 0, "2026-02-10T11:00:00Z")).await;

    let with_tag = json!({
        "transactionId": first,
        "idTag": "TAG-1",
        "meterStop": 7_250,
        "timestamp": "2026-02-10T12:00:00Z",
        "reason": "Local",
    });
    let answer = charger.call_result("StopTransaction", with_tag).await;
    assert_eq!(answer, json!({"idTagInfo": {"status": "Accepted"}}));

    let without_tag = json!({
        "transactionId": second,
        "meterStop": 3_100,
        "timestamp": "2026-02-10T12:05:00Z",
        "reason": "EVDisconnected",
        "transactionData": [{
            "timestamp": "2026-02-10T12:05:00Z",
            "sampledValue": [{"value": "3100", "context": "Transaction.End"}],
        }],
    });
    assert_eq!(
        charger.call_result("StopTransaction", without_tag).await,
        json!({})
    );
}
