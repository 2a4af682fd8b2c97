//! Faults under load: the broker dies for a few seconds, or a gateway is killed, while chargers
//! send readings. The promise measured: a charger is told "taken" (a CALLRESULT) only for what
//! Kafka has, so every acknowledged reading is in the topic afterwards (at least once; the
//! duplicates a retry may cause are counted), and nothing is acknowledged while the broker is
//! away: the gateway makes chargers wait instead.

use crate::support::Api;
use crate::support::broker::Tansu;
use crate::support::fleet::Fleet;
use crate::support::station::Station;
use crate::support::topic::{read_readings, reading_seq};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Chargers sending at once.
const CHARGERS: usize = 10;
/// Pause between a CALLRESULT and a charger's next reading.
const PACE: Duration = Duration::from_millis(10);
/// How long a charger waits for the answer to one reading before it gives up on the connection
/// and sends the reading again on a new one: longer than any outage here, so a time-out is a
/// finding, not part of the plan.
const ANSWER_LIMIT: Duration = Duration::from_secs(25);
/// How long a charger keeps trying to reconnect.
const RECONNECT_LIMIT: Duration = Duration::from_secs(20);
/// Answers the gateway had on their way before the broker died may still land this long after.
const IN_FLIGHT_GRACE: Duration = Duration::from_millis(300);
/// How long the API may lag behind Kafka.
const API_LAG: Duration = Duration::from_secs(20);

/// One reading, numbered per charger.
struct Frame {
    seq: u64,
    transmissions: u32,
    first_sent: Instant,
    /// When its CALLRESULT arrived.
    acked: Option<Instant>,
}

/// What one charger did.
#[derive(Default)]
struct Report {
    identity: String,
    frames: Vec<Frame>,
    /// CALLERRORs received (the gateway could not take a reading).
    call_errors: Vec<String>,
    /// How waits for an answer ended without one (lost connections, time-outs).
    interruptions: Vec<String>,
    reconnects: u32,
    /// Set when the charger gave up: could not reconnect within the limit.
    gave_up: Option<String>,
}

/// A reading whose energy register is the sequence number: the topic record tells which it is.
fn reading(seq: u64) -> String {
    let minute = seq % 60;
    let hour = (seq / 60) % 24;
    format!(
        r#"{{"connectorId":1,"meterValue":[{{"timestamp":"2026-05-01T{hour:02}:{minute:02}:00Z","sampledValue":[{{"value":"{seq}","measurand":"Energy.Active.Import.Register","unit":"Wh"}}]}}]}}"#
    )
}

/// Sends readings one at a time (as OCPP wants) until `stop`, reconnecting to the first of
/// `gateways` that takes it when the connection dies, and sending again the reading whose
/// answer it did not get (as a charger keeps transaction data until acknowledged).
async fn send_readings(identity: String, gateways: Vec<String>, stop: Arc<AtomicBool>) -> Report {
    let mut report = Report {
        identity: identity.clone(),
        ..Report::default()
    };
    let mut station: Option<Station> = None;
    let mut pending: Option<usize> = None;
    loop {
        if pending.is_none() && stop.load(Ordering::Relaxed) {
            return report;
        }
        if station.is_none() {
            match connect_and_boot(&identity, &gateways, &mut report).await {
                Some(connected) => station = Some(connected),
                None => return report,
            }
        }
        let index = match pending.take() {
            Some(index) => index,
            None => {
                report.frames.push(Frame {
                    seq: report.frames.len() as u64 + 1,
                    transmissions: 0,
                    first_sent: Instant::now(),
                    acked: None,
                });
                report.frames.len() - 1
            }
        };
        let frame = &mut report.frames[index];
        frame.transmissions += 1;
        let payload = reading(frame.seq);
        let connection = station.as_mut().expect("connected");
        let (sent, ended) = connection
            .call_raw("MeterValues", &payload, ANSWER_LIMIT)
            .await;
        match (sent.answer, ended) {
            (Some(answer), _) if answer[0] == 3 => {
                frame.acked = Some(Instant::now());
                tokio::time::sleep(PACE).await;
            }
            (Some(answer), _) => {
                report.call_errors.push(answer.to_string());
                // Kept, and sent again after a pause, unless the test is over.
                if !stop.load(Ordering::Relaxed) {
                    pending = Some(index);
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            (None, ended) => {
                report.interruptions.push(format!(
                    "seq {} after {:?}: {ended:?}",
                    frame.seq,
                    frame.first_sent.elapsed()
                ));
                station = None;
                if !stop.load(Ordering::Relaxed) {
                    pending = Some(index);
                }
            }
        }
    }
}

/// Connects to the first gateway that takes the charger and boots; retries (bounded).
async fn connect_and_boot(
    identity: &str,
    gateways: &[String],
    report: &mut Report,
) -> Option<Station> {
    let started = Instant::now();
    let prefix = format!("c{}", report.reconnects);
    let mut last = String::new();
    while started.elapsed() < RECONNECT_LIMIT {
        for addr in gateways {
            match Station::connect(addr, identity, &prefix).await {
                Ok(mut station) => {
                    let boot = r#"{"chargePointVendor":"Alfen BV","chargePointModel":"NG920","firmwareVersion":"fault-1"}"#;
                    let (sent, ended) = station
                        .call_raw("BootNotification", boot, ANSWER_LIMIT)
                        .await;
                    if sent.answer.as_ref().is_some_and(|a| a[0] == 3) {
                        report.reconnects += 1;
                        return Some(station);
                    }
                    last = format!("boot on {addr}: {:?} {ended:?}", sent.answer);
                }
                Err(refused) => last = format!("{addr}: {refused:?}"),
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    report.gave_up = Some(format!(
        "no gateway took {identity} within {RECONNECT_LIMIT:?}; last: {last}"
    ));
    None
}

/// The fleet's chargers: registered, accepted by `gateways`, then sending.
struct Load {
    stop: Arc<AtomicBool>,
    runs: Vec<tokio::task::JoinHandle<Report>>,
    uuids: HashMap<String, String>,
}

async fn start_load(fleet: &Fleet, gateways: &[&str]) -> Load {
    let identities: Vec<String> = (1..=CHARGERS).map(|n| format!("KF-FAULT-{n:02}")).collect();
    let registered = Instant::now();
    let uuids = fleet.import_chargers(&identities).await;
    for identity in &identities {
        fleet
            .wait_until_accepted(identity, gateways, registered, Duration::from_secs(15))
            .await;
    }
    let addrs: Vec<String> = gateways
        .iter()
        .map(|g| fleet.gateway(g).ocpp_addr.clone())
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let runs = identities
        .into_iter()
        .map(|identity| tokio::spawn(send_readings(identity, addrs.clone(), stop.clone())))
        .collect();
    Load { stop, runs, uuids }
}

impl Load {
    /// Stops the chargers (each finishes the reading it is waiting on) and collects reports.
    async fn finish(self) -> Vec<Report> {
        self.stop.store(true, Ordering::Relaxed);
        let mut reports = Vec::new();
        for run in self.runs {
            let report = tokio::time::timeout(ANSWER_LIMIT + RECONNECT_LIMIT, run)
                .await
                .expect("a charger did not stop in time")
                .expect("a charger task panicked");
            reports.push(report);
        }
        reports
    }
}

/// What Kafka holds of the readings, against what chargers were told.
struct Tally {
    sent: usize,
    acknowledged: usize,
    in_topic: usize,
    duplicates: usize,
    /// `identity seq` of readings acknowledged but not in the topic.
    acknowledged_missing: Vec<String>,
    /// Records of readings no charger sent (must be none).
    unknown: Vec<String>,
}

async fn tally(fleet: &Fleet, reports: &[Report]) -> Tally {
    let acknowledged = reports
        .iter()
        .flat_map(|r| {
            let id = &r.identity;
            r.frames
                .iter()
                .filter(|f| f.acked.is_some())
                .map(|f| (id.clone(), f.seq))
        })
        .collect();
    let records = read_readings(&fleet.brokers, &fleet.messages_topic(), acknowledged).await;
    let mut copies: HashMap<(String, u64), usize> = HashMap::new();
    let mut unknown = Vec::new();
    for record in records
        .iter()
        .filter(|r| r.header("action") == Some("MeterValues"))
    {
        match reading_seq(record) {
            Some(key) => *copies.entry(key).or_default() += 1,
            None => unknown.push(record.value_str().to_string()),
        }
    }
    let mut tally = Tally {
        sent: 0,
        acknowledged: 0,
        in_topic: 0,
        duplicates: 0,
        acknowledged_missing: Vec::new(),
        unknown,
    };
    let mut sent_keys = std::collections::HashSet::new();
    for report in reports {
        for frame in &report.frames {
            let key = (report.identity.clone(), frame.seq);
            let found = copies.get(&key).copied().unwrap_or(0);
            tally.sent += 1;
            tally.in_topic += usize::from(found > 0);
            tally.duplicates += found.saturating_sub(1);
            if frame.acked.is_some() {
                tally.acknowledged += 1;
                if found == 0 {
                    tally
                        .acknowledged_missing
                        .push(format!("{} seq {}", report.identity, frame.seq));
                }
            }
            sent_keys.insert(key);
        }
    }
    for key in copies.keys().filter(|k| !sent_keys.contains(*k)) {
        tally.unknown.push(format!("{} seq {}", key.0, key.1));
    }
    tally
}

fn describe(reports: &[Report]) -> String {
    reports
        .iter()
        .map(|r| {
            let acked = r.frames.iter().filter(|f| f.acked.is_some()).count();
            format!(
                "  {}: sent {} acked {} reconnects {} call_errors {:?} interruptions {:?} gave_up {:?}",
                r.identity,
                r.frames.len(),
                acked,
                r.reconnects.saturating_sub(1),
                r.call_errors.iter().take(3).collect::<Vec<_>>(),
                r.interruptions.iter().take(3).collect::<Vec<_>>(),
                r.gave_up
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The at-least-once verdict shared by both faults.
fn assert_at_least_once(name: &str, tally: &Tally, reports: &[Report]) {
    println!(
        "fault {name}: sent={} acknowledged={} in_topic={} duplicates={}",
        tally.sent, tally.acknowledged, tally.in_topic, tally.duplicates
    );
    let call_errors: usize = reports.iter().map(|r| r.call_errors.len()).sum();
    let interruptions: usize = reports.iter().map(|r| r.interruptions.len()).sum();
    let transmissions: u32 = reports
        .iter()
        .flat_map(|r| &r.frames)
        .map(|f| f.transmissions)
        .sum();
    println!(
        "fault {name}: transmissions={transmissions} call_errors={call_errors} \
         interruptions={interruptions} acknowledged_missing={}",
        tally.acknowledged_missing.len()
    );
    let details = describe(reports);
    assert!(
        reports.iter().all(|r| r.gave_up.is_none()),
        "fault {name}: chargers gave up:\n{details}"
    );
    assert!(
        tally.unknown.is_empty(),
        "fault {name}: records of readings nobody sent: {:?}",
        tally.unknown
    );
    assert!(
        tally.acknowledged_missing.is_empty(),
        "fault {name}: {} readings were acknowledged to chargers but are not in Kafka: {:?}\n{details}",
        tally.acknowledged_missing.len(),
        tally.acknowledged_missing
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_fault_broker_stop_acknowledges_nothing_while_down_loses_nothing() {
    let mut tansu = Tansu::start().await;
    // scripts/test installs a tansu with file-backed storage: in CI the broker process itself
    // must be stopped and started again, not merely cut off.
    assert!(
        std::env::var_os("CI").is_none() || tansu.kills_the_process(),
        "CI needs a tansu with the libsql feature (scripts/lib/tansu.sh installs it)"
    );
    let fleet = Fleet::start(&tansu.brokers(), &["gw-f1"]).await;
    let load = start_load(&fleet, &["gw-f1"]).await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    tansu.take_down().await;
    let down = Instant::now();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let up = Instant::now();
    tansu.bring_back().await;
    let listening = up.elapsed();
    println!("fault broker-stop: outage made by: {}", tansu.outage_kind());
    tokio::time::sleep(Duration::from_secs(4)).await;
    let reports = load.finish().await;

    // No CALLRESULT while the broker was away.
    let mut during = Vec::new();
    let mut stalled = 0;
    let mut first_after_up: Option<Duration> = None;
    for report in &reports {
        for frame in &report.frames {
            let Some(acked) = frame.acked else { continue };
            let sent_during = frame.first_sent > down && frame.first_sent < up;
            if acked < up && (sent_during || acked > down + IN_FLIGHT_GRACE) {
                during.push(format!(
                    "{} seq {} sent {:?} and answered {:?} into the outage",
                    report.identity,
                    frame.seq,
                    frame.first_sent.saturating_duration_since(down),
                    acked.saturating_duration_since(down)
                ));
            }
            if frame.first_sent < up && acked >= up {
                stalled += 1;
            }
            if acked >= up {
                let after = acked - up;
                first_after_up = Some(first_after_up.map_or(after, |f| f.min(after)));
            }
        }
    }
    println!(
        "fault broker-stop: outage {:?}, tansu listening again {listening:?} after restart, \
         {stalled} readings waited through it, first CALLRESULT {first_after_up:?} after restart",
        up - down
    );
    assert!(
        during.is_empty(),
        "CALLRESULTs arrived while the broker was down: {during:?}"
    );
    for report in &reports {
        assert!(
            report
                .frames
                .iter()
                .any(|f| f.acked.is_some_and(|a| a >= up)),
            "{} got no CALLRESULT after the broker came back:\n{}",
            report.identity,
            describe(&reports)
        );
    }
    let tally = tally(&fleet, &reports).await;
    assert_at_least_once("broker-stop", &tally, &reports);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_fault_gateway_sigkill_loses_no_acknowledged_reading() {
    let tansu = Tansu::start().await;
    let mut fleet = Fleet::start(&tansu.brokers(), &["gw-k1", "gw-k2"]).await;
    let rest = fleet.rest().await;
    // Chargers prefer gw-k1 and fall back to gw-k2.
    let load = start_load(&fleet, &["gw-k1", "gw-k2"]).await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    fleet.gateway_mut("gw-k1").process.kill().await;
    let killed = Instant::now();
    tokio::time::sleep(Duration::from_secs(3)).await;
    // Still sending, through gw-k2: the API shows them there.
    check_moved_to(&rest, &load.uuids, "gw-k2").await;
    let reports = load.finish().await;

    for report in &reports {
        assert!(
            report.reconnects >= 2,
            "{} never reconnected after gw-k1 died:\n{}",
            report.identity,
            describe(&reports)
        );
        assert!(
            report
                .frames
                .iter()
                .any(|f| f.acked.is_some_and(|a| a > killed)),
            "{} got no CALLRESULT from gw-k2 after gw-k1 died:\n{}",
            report.identity,
            describe(&reports)
        );
    }
    let tally = tally(&fleet, &reports).await;
    assert_at_least_once("gateway-kill", &tally, &reports);
    assert!(!fleet.gateway_mut("gw-k1").process.is_running());
}

/// Every charger is shown online on `gateway` (a killed gateway publishes no disconnects; the
/// newer connect elsewhere must win).
async fn check_moved_to(rest: &Api, uuids: &HashMap<String, String>, gateway: &str) {
    for (identity, uuid) in uuids {
        rest.wait_for_charger_within(
            uuid,
            &format!("{identity} online on {gateway}"),
            API_LAG,
            |c| {
                c["connection_status"] == "online"
                    && c["server"] == gateway
                    && c["firmware_version"] == "fault-1"
            },
        )
        .await;
    }
}
