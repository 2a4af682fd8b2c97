//! A property of the gateway: whatever sequence of frames one charger sends, its shard keeps
//! serving it and every other charger. A seeded generator sends hundreds of frames (real
//! charger messages mutated byte by byte, answers to calls never made, nesting, huge numbers,
//! binary frames) while neighbours on the same shard send meter values; after each frame a
//! Heartbeat must still be answered, everything the gateway sent must be an OCPP-J answer,
//! and the neighbours' readings must all be answered and stored as sent.
//!
//! `CMS_FRAME_SEED=N` replays a run (the seed is printed, and named in any failure).

use crate::support::{Api, Charger, Cms};
use serde_json::{Value, json};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const FRAMES: usize = 400;
const NEIGHBOURS: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_sequence_of_frames_stops_a_shard_or_touches_another_chargers_session() {
    let seed = std::env::var("CMS_FRAME_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("frame sequence seed {seed} (CMS_FRAME_SEED={seed} replays it)");

    // One shard: the attacker and its neighbours share it.
    let cms = Cms::up_with(&["--shards", "1"]).await;
    let api = Api::new(&cms, &cms.operator_token().await);
    cms.add_charger("SEQ-ATTACKER").await;
    let mut neighbours = Vec::new();
    for n in 0..NEIGHBOURS {
        let identity = format!("SEQ-NEIGHBOUR-{n}");
        let uuid = cms.add_charger(&identity).await;
        let charger = Charger::connect_and_boot(&cms, &identity, "1.0.0").await;
        neighbours.push((uuid, charger));
    }
    let mut attacker = Charger::connect_and_boot(&cms, "SEQ-ATTACKER", "1.0.0").await;
    // A neighbour's session under way: the attacker knows its transaction id and tries it.
    let start = json!({"connectorId": 1, "idTag": "TAG-N", "meterStart": 0,
        "timestamp": "2026-11-24T09:00:00Z"});
    let started = neighbours[0].1.call_result("StartTransaction", start).await;
    let transaction = started["transactionId"].as_i64().expect("a transaction id");
    let theirs = format!(
        r#"[2,"11","StopTransaction",{{"transactionId":{transaction},"meterStop":99,"timestamp":"2026-11-24T11:00:00Z"}}]"#
    );

    // The neighbours read their meters all along, each reading answered as any other day.
    let neighbours: Vec<_> = neighbours
        .into_iter()
        .map(|(uuid, mut charger)| {
            tokio::spawn(async move {
                let mut last = 0;
                for wh in (1_000..).step_by(7).take(60) {
                    let answer = charger.call_result("MeterValues", reading(wh)).await;
                    assert_eq!(answer, json!({}), "seed {seed}: a neighbour's reading");
                    last = wh;
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                (uuid, charger, last)
            })
        })
        .collect();

    let mut rng = Rng {
        state: seed | 1,
        theirs,
    };
    for n in 0..FRAMES {
        let frame = rng.frame();
        match &frame {
            Sent::Text(text) => attacker.send_text(text).await,
            Sent::Binary(bytes) => attacker.send_binary(bytes.clone()).await,
        }
        // Whatever the frame did, the charger is still served: its answers (if any) come first,
        // then the Heartbeat's.
        let probe = format!("probe-{n}");
        attacker
            .send_text(&json!([2, probe, "Heartbeat", {}]).to_string())
            .await;
        let mut answers = 0;
        loop {
            let answer = attacker.next_frame().await;
            let shape = answer.as_array().map(|a| (a.first().cloned(), a.len()));
            let well_formed = matches!(
                shape,
                Some((Some(ref t), 3)) if *t == 3
            ) || matches!(shape, Some((Some(ref t), 5)) if *t == 4);
            assert!(
                well_formed && answer[1].is_string(),
                "seed {seed}, frame {n} {frame:?}: the gateway sent {answer}"
            );
            if answer[1] == json!(probe) {
                assert_eq!(answer[0], 3, "seed {seed}, frame {n} {frame:?}: {answer}");
                break;
            }
            answers += 1;
        }
        assert!(
            answers <= 1,
            "seed {seed}, frame {n} {frame:?}: {answers} answers to one frame"
        );
    }

    let mut neighbours_uuid0 = String::new();
    let mut still_open = Vec::new();
    for neighbour in neighbours {
        let (uuid, mut charger, last) = neighbour.await.expect("a neighbour's task");
        if neighbours_uuid0.is_empty() {
            neighbours_uuid0 = uuid.clone();
        }
        charger.heartbeat().await;
        let expected = format!(
            r#"{{"connectorId":1,"meterValue":[{{"timestamp":"2026-11-24T10:00:00Z","sampledValue":[
                {{"value":"{last}","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"}}
            ]}}]}}"#
        );
        api.wait_for_latest_meter_value(&uuid, 1, &expected).await;
        still_open.push(charger);
    }
    // The neighbour's transaction is still under way: a StopTransaction from another charger
    // does not end it.
    let path = format!("/api/v3/chargers/{}/transactions", neighbours_uuid0);
    let list = api.get_ok(&path).await;
    assert_eq!(
        (
            list["data"].as_array().map(Vec::len),
            &list["data"][0]["stopped_at"]
        ),
        (Some(1), &Value::Null),
        "seed {seed}: the neighbour's transactions {list}"
    );
    let metrics = api.metrics().await;
    // (The support code's registration probes end as `no_subprotocol`; no session did.)
    for reason in [
        "closed_by_charger",
        "connection_lost",
        "idle_timeout",
        "replaced",
        "frame_too_large",
        "protocol_error",
    ] {
        assert_eq!(
            metrics.sum("cms_gateway_disconnects_total", &[("reason", reason)]),
            Some(0.0),
            "seed {seed}: a session ended ({reason}):\n{}",
            metrics.text
        );
    }
    assert_eq!(
        metrics.sum("cms_gateway_connections_open", &[]),
        Some(1.0 + NEIGHBOURS as f64),
        "seed {seed}"
    );
}

fn reading(wh: u64) -> Value {
    json!({
        "connectorId": 1,
        "meterValue": [{
            "timestamp": "2026-11-24T10:00:00Z",
            "sampledValue": [{"value": wh.to_string()}],
        }],
    })
}

#[derive(Debug)]
enum Sent {
    Text(String),
    Binary(Vec<u8>),
}

/// xorshift64*: a seed replays a run exactly; no crate needed for a test's dice.
struct Rng {
    state: u64,
    /// A StopTransaction of a neighbour's transaction, sent and mutated as any other frame.
    theirs: String,
}

/// What a charger sends on a good day, the material the mutations start from.
const FRAMES_SEEN: &[&str] = &[
    r#"[2,"1","BootNotification",{"chargePointVendor":"Alfen BV","chargePointModel":"NG920","firmwareVersion":"1.2"}]"#,
    r#"[2,"2","Heartbeat",{}]"#,
    r#"[2,"3","MeterValues",{"connectorId":1,"transactionId":5,"meterValue":[{"timestamp":"2026-11-24T10:00:00Z","sampledValue":[{"value":"12.5","measurand":"Current.Import","phase":"L1","unit":"A"},{"value":"1000","context":"Sample.Clock"}]}]}]"#,
    r#"[2,"4","StatusNotification",{"connectorId":1,"errorCode":"NoError","status":"Charging","timestamp":"2026-11-24T10:00:00Z"}]"#,
    r#"[2,"5","StartTransaction",{"connectorId":1,"idTag":"TAG-1","meterStart":0,"timestamp":"2026-11-24T10:00:00Z"}]"#,
    r#"[2,"6","StopTransaction",{"transactionId":1,"meterStop":10,"timestamp":"2026-11-24T11:00:00Z","reason":"Local","transactionData":[{"timestamp":"2026-11-24T11:00:00Z","sampledValue":[{"value":"10"}]}]}]"#,
    r#"[2,"7","Authorize",{"idTag":"TAG-1"}]"#,
    r#"[2,"8","DataTransfer",{"vendorId":"com.example","messageId":"x","data":"{\"a\":[1,2]}"}]"#,
    r#"[2,"9","FirmwareStatusNotification",{"status":"Installed"}]"#,
    r#"[2,"10","DiagnosticsStatusNotification",{"status":"Uploaded"}]"#,
    r#"[3,"never-asked",{"status":"Accepted"}]"#,
    r#"[4,"never-asked","NotImplemented","",{}]"#,
];

/// Pieces spliced into frames: JSON punctuation, numbers at the edges, escapes and characters
/// beyond ASCII.
const PIECES: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    "\"",
    ",",
    ":",
    "\\",
    "\\u0000",
    "\\ud800",
    "null",
    "true",
    "-0",
    "1e400",
    "-1",
    "18446744073709551616",
    "0.000000000000000000001",
    "é",
    "😀",
    "\u{0}",
    " ",
    "\"\":",
    "[2,",
    "[3,",
    "[4,",
    "2",
    "\"2\"",
];

impl Rng {
    fn next(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn frame(&mut self) -> Sent {
        match self.below(20) {
            0 => Sent::Binary((0..self.below(64)).map(|_| self.next() as u8).collect()),
            1 => {
                // Deep nesting, under the frame size limit.
                let depth = 1 + self.below(10_000);
                Sent::Text(format!("{}{}", "[".repeat(depth), "]".repeat(depth)))
            }
            2 => Sent::Text(String::new()),
            _ => {
                let pick = self.below(FRAMES_SEEN.len() + 1);
                let base = FRAMES_SEEN.get(pick).copied().unwrap_or(&self.theirs);
                let mut text: Vec<char> = base.chars().collect();
                for _ in 0..self.below(4) {
                    self.mutate(&mut text);
                }
                Sent::Text(text.into_iter().collect())
            }
        }
    }

    fn mutate(&mut self, text: &mut Vec<char>) {
        let at = self.below(text.len() + 1);
        match self.below(4) {
            0 if at < text.len() => {
                let end = (at + 1 + self.below(8)).min(text.len());
                text.drain(at..end);
            }
            1 if at < text.len() => {
                let end = (at + 1 + self.below(16)).min(text.len());
                let copy: Vec<char> = text[at..end].to_vec();
                text.splice(at..at, copy);
            }
            2 if at < text.len() => text[at] = char::from(b' ' + self.below(95) as u8),
            _ => {
                let piece = PIECES[self.below(PIECES.len())];
                text.splice(at..at, piece.chars());
            }
        }
    }
}
