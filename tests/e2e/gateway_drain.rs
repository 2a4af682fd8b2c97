//! Graceful drain (`--drain-period`): SIGTERM makes a gateway unready, stop accepting, and close
//! its chargers spread evenly over the period, so that they reconnect to the other gateway at a
//! bounded rate; everything it acknowledged is in Kafka when it exits 0.

use crate::support::broker::Broker;
use crate::support::fleet::Fleet;
use crate::support::topic::{read_readings, reading_seq};
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use std::collections::HashSet;
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

/// Chargers on the draining gateway.
const CHARGERS: usize = 2_000;
/// The gateways' `--drain-period`.
const PERIOD: Duration = Duration::from_secs(4);
/// Pause between a reading's answer and the next one, per charger.
const PACE: Duration = Duration::from_millis(1_000);
/// How long one answer, one connection attempt or the whole reconnection may take.
const LIMIT: Duration = Duration::from_secs(20);
/// Readings each charger sends on the gateway it reconnected to.
const AFTER: u64 = 2;
/// Width of the buckets in which closes and reconnections are counted.
const BUCKET: Duration = Duration::from_millis(500);

type Ws = WebSocketStream<TcpStream>;

/// What one charger saw.
#[derive(Default)]
struct Report {
    identity: String,
    /// Readings (by sequence number) the draining gateway acknowledged.
    acked_on_a: Vec<u64>,
    acked_on_b: Vec<u64>,
    /// When the draining gateway's close frame came, and its code.
    closed: Option<(Instant, u16)>,
    /// When the other gateway upgraded the connection after the close (then the boot followed).
    reconnected: Option<Instant>,
    failure: Option<String>,
}

fn reading(seq: u64) -> String {
    format!(
        r#"{{"connectorId":1,"meterValue":[{{"timestamp":"2026-06-01T10:00:00Z","sampledValue":[{{"value":"{seq}","measurand":"Energy.Active.Import.Register","unit":"Wh"}}]}}]}}"#
    )
}

const BOOT: &str =
    r#"{"chargePointVendor":"Alfen BV","chargePointModel":"NG920","firmwareVersion":"drain-1"}"#;

async fn connect(addr: &str, identity: &str) -> Result<Ws, String> {
    let url = format!("ws://{addr}/ocpp/{identity}");
    let mut request = url.as_str().into_client_request().expect("valid ws url");
    request.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        HeaderValue::from_static("ocpp1.6"),
    );
    let connecting = async {
        let tcp = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect {addr}: {e}"))?;
        tokio_tungstenite::client_async(request, tcp)
            .await
            .map(|(ws, _)| ws)
            .map_err(|e| format!("upgrade at {addr}: {e}"))
    };
    tokio::time::timeout(LIMIT, connecting)
        .await
        .map_err(|_| format!("handshake with {addr} timed out"))?
}

/// How waiting on a connection ended.
enum Event {
    Answer(Value),
    Closed(u16),
    Lost(String),
}

/// The next answer or the close (pings are answered by tungstenite as it reads, calls from the
/// gateway here with an empty CALLRESULT).
async fn next_event(ws: &mut Ws) -> Event {
    loop {
        match tokio::time::timeout(LIMIT, ws.next()).await {
            Err(_) => return Event::Lost("no frame within the limit".into()),
            Ok(None) => return Event::Lost("stream ended without a close frame".into()),
            Ok(Some(Err(e))) => return Event::Lost(e.to_string()),
            Ok(Some(Ok(Message::Text(text)))) => {
                let frame: Value = serde_json::from_str(text.as_str()).expect("JSON frame");
                if frame[0] == 2 {
                    let answer = format!("[3,{},{{}}]", frame[1]);
                    if let Err(e) = ws.send(Message::text(answer)).await {
                        return Event::Lost(e.to_string());
                    }
                    continue;
                }
                return Event::Answer(frame);
            }
            Ok(Some(Ok(Message::Close(frame)))) => {
                return Event::Closed(frame.map_or(1005, |f| u16::from(f.code)));
            }
            Ok(Some(Ok(_))) => {}
        }
    }
}

/// A CALL and its CALLRESULT; `Err` with the event that came instead.
async fn call(ws: &mut Ws, id: &str, action: &str, payload: &str) -> Result<(), Event> {
    let frame = format!(r#"[2,"{id}","{action}",{payload}]"#);
    if let Err(e) = ws.send(Message::text(frame)).await {
        return Err(Event::Lost(e.to_string()));
    }
    match next_event(ws).await {
        Event::Answer(answer) if answer[0] == 3 && answer[1] == id => Ok(()),
        Event::Answer(answer) => Err(Event::Lost(format!("{action} answered {answer}"))),
        other => Err(other),
    }
}

/// Boots on gateway A and sends readings until A closes the connection; then reconnects to B,
/// sends the reading A did not answer and `AFTER` more, and holds the connection until `done`.
async fn charger(
    identity: String,
    a: String,
    b: String,
    mut done: watch::Receiver<bool>,
) -> Report {
    let mut report = Report {
        identity: identity.clone(),
        ..Report::default()
    };
    let started = Instant::now();
    // Registered in one import: retried until gateway A knows it.
    let mut ws = loop {
        let attempt = match connect(&a, &identity).await {
            Ok(mut ws) => match call(&mut ws, "a-boot", "BootNotification", BOOT).await {
                Ok(()) => Ok(ws),
                Err(_) => Err("boot on A not answered".to_string()),
            },
            Err(e) => Err(e),
        };
        match attempt {
            Ok(ws) => break ws,
            Err(e) if started.elapsed() > LIMIT => {
                report.failure = Some(format!("never on A: {e}"));
                return report;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    };
    let mut seq = 0;
    // Readings until A closes: between two, a close is noticed as it comes.
    let code = loop {
        seq += 1;
        match call(&mut ws, &format!("a-{seq}"), "MeterValues", &reading(seq)).await {
            Ok(()) => report.acked_on_a.push(seq),
            Err(Event::Closed(code)) => break code,
            Err(Event::Lost(why)) => {
                report.failure = Some(format!("lost on A at seq {seq}: {why}"));
                return report;
            }
            Err(Event::Answer(_)) => unreachable!("call answers are Ok or refused as Lost"),
        }
        tokio::select! {
            _ = tokio::time::sleep(PACE) => {}
            event = next_event(&mut ws) => match event {
                Event::Closed(code) => {
                    seq += 1; // the next reading was never sent to A
                    break code;
                }
                Event::Answer(frame) => {
                    report.failure = Some(format!("unasked frame from A: {frame}"));
                    return report;
                }
                Event::Lost(why) => {
                    report.failure = Some(format!("lost on A between readings: {why}"));
                    return report;
                }
            }
        }
    };
    report.closed = Some((Instant::now(), code));
    // The close handshake completes as tungstenite answers it; then on to B.
    let _ = tokio::time::timeout(Duration::from_secs(2), ws.close(None)).await;
    drop(ws);
    let reconnecting = Instant::now();
    let mut ws = loop {
        let attempt = match connect(&b, &identity).await {
            Ok(mut ws) => {
                report.reconnected = Some(Instant::now());
                match call(&mut ws, "b-boot", "BootNotification", BOOT).await {
                    Ok(()) => Ok(ws),
                    Err(_) => Err("boot on B not answered".to_string()),
                }
            }
            Err(e) => Err(e),
        };
        match attempt {
            Ok(ws) => break ws,
            Err(e) if reconnecting.elapsed() > LIMIT => {
                report.failure = Some(format!("never back on B: {e}"));
                return report;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    for seq in seq..seq + 1 + AFTER {
        match call(&mut ws, &format!("b-{seq}"), "MeterValues", &reading(seq)).await {
            Ok(()) => report.acked_on_b.push(seq),
            Err(_) => {
                report.failure = Some(format!("reading {seq} not answered on B"));
                return report;
            }
        }
    }
    // Online on B until the test has counted it there.
    let _ = done.wait_for(|done| *done).await;
    let _ = tokio::time::timeout(Duration::from_secs(2), ws.close(None)).await;
    report
}

/// Counts of `times` in `BUCKET`-wide buckets from the first.
fn buckets(times: &[Instant]) -> Vec<usize> {
    let Some(first) = times.iter().min() else {
        return Vec::new();
    };
    let mut counts = Vec::new();
    for t in times {
        let i = (t.duration_since(*first).as_millis() / BUCKET.as_millis()) as usize;
        if counts.len() <= i {
            counts.resize(i + 1, 0);
        }
        counts[i] += 1;
    }
    counts
}

/// One /readyz probe of the draining gateway: when it was sent and what came back.
struct Probe {
    sent: Instant,
    status: Option<u16>,
}

/// Probes /readyz (and reads `cms_gateway_drained_total` from /metrics) until `stop`.
async fn watch_gateway(ops_base: String, stop: watch::Receiver<bool>) -> (Vec<Probe>, f64) {
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(2))
        .build()
        .expect("http client");
    let mut probes = Vec::new();
    let mut drained: f64 = 0.0;
    let mut n = 0u32;
    while !*stop.borrow() {
        let sent = Instant::now();
        let status = client
            .get(format!("{ops_base}/readyz"))
            .send()
            .await
            .ok()
            .map(|r| r.status().as_u16());
        probes.push(Probe { sent, status });
        n += 1;
        if n.is_multiple_of(10) {
            let text = match client.get(format!("{ops_base}/metrics")).send().await {
                Ok(response) => response.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            let seen = text
                .lines()
                .find_map(|l| l.strip_prefix("cms_gateway_drained_total "))
                .and_then(|v| v.trim().parse::<f64>().ok());
            drained = drained.max(seen.unwrap_or(0.0));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (probes, drained)
}

/// The text of a log without its colours.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters, ending with a letter.
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `cms_gateway_connections_open` of a gateway.
async fn open_on(ops: &str) -> f64 {
    let text = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("http client")
        .get(format!("{ops}/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics text");
    crate::support::Metrics::parse(&text)
        .sum("cms_gateway_connections_open", &[])
        .unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_gateway_hands_its_chargers_over_at_a_bounded_rate_losing_nothing() {
    let broker = Broker::shared().await;
    let period = format!("{}s", PERIOD.as_secs());
    let mut fleet = Fleet::start_with(
        &broker.brokers,
        &["gw-a", "gw-b"],
        &[
            "--drain-period",
            &period,
            "--read-configuration-at-boot",
            "false",
        ],
    )
    .await;
    let identities: Vec<String> = (1..=CHARGERS).map(|n| format!("DR-{n:04}")).collect();
    let registered = Instant::now();
    fleet.import_chargers(&identities).await;
    let last = identities.last().expect("chargers");
    fleet
        .wait_until_accepted(last, &["gw-a", "gw-b"], registered, LIMIT)
        .await;

    let a = fleet.gateway("gw-a").ocpp_addr.clone();
    let b = fleet.gateway("gw-b").ocpp_addr.clone();
    let (finish, done) = watch::channel(false);
    let runs: Vec<_> = identities
        .iter()
        .map(|id| tokio::spawn(charger(id.clone(), a.clone(), b.clone(), done.clone())))
        .collect();
    // Everyone on A, and a few readings in.
    let ops_a = fleet.gateway("gw-a").ops_base.clone();
    let ops_b = fleet.gateway("gw-b").ops_base.clone();
    let connecting = Instant::now();
    while open_on(&ops_a).await < CHARGERS as f64 {
        assert!(
            connecting.elapsed() < LIMIT,
            "only {} of {CHARGERS} chargers connected to gw-a",
            open_on(&ops_a).await
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    eprintln!(
        "{CHARGERS} chargers on gw-a after {:?}",
        connecting.elapsed()
    );
    tokio::time::sleep(Duration::from_secs(2)).await;

    // SIGTERM to A, watched from outside.
    let (stop_watching, watching) = watch::channel(false);
    let watcher = tokio::spawn(watch_gateway(ops_a.clone(), watching));
    let sigterm = Instant::now();
    let status = fleet.gateway_mut("gw-a").process.terminate().await;
    let exited = sigterm.elapsed();
    stop_watching.send(true).expect("watcher");
    let (probes, drained_seen) = watcher.await.expect("watcher");
    assert!(status.success(), "gw-a exited with {status}");
    eprintln!("gw-a exited 0 {exited:?} after SIGTERM");

    // Every charger back on B, counted there, then released.
    let back = Instant::now();
    while open_on(&ops_b).await < CHARGERS as f64 && back.elapsed() < LIMIT {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let open_b = open_on(&ops_b).await;
    finish.send(true).expect("chargers");
    let mut reports = Vec::new();
    for run in runs {
        reports.push(run.await.expect("charger task"));
    }
    let failures: Vec<String> = reports
        .iter()
        .filter_map(|r| r.failure.as_ref().map(|f| format!("{}: {f}", r.identity)))
        .collect();
    assert!(
        failures.is_empty(),
        "{} chargers failed, e.g. {:?}\ngw-a:\n{}",
        failures.len(),
        &failures[..failures.len().min(5)],
        fleet.gateway("gw-a").process.log_tail()
    );
    assert_eq!(open_b, CHARGERS as f64, "chargers open on gw-b");

    // Closed with 1001, spread over the period, never before A turned unready.
    let closes: Vec<Instant> = reports
        .iter()
        .filter_map(|r| r.closed.map(|c| c.0))
        .collect();
    assert_eq!(closes.len(), CHARGERS);
    let codes: HashSet<u16> = reports
        .iter()
        .filter_map(|r| r.closed.map(|c| c.1))
        .collect();
    assert_eq!(codes, HashSet::from([1001]), "close codes");
    let first_close = *closes.iter().min().expect("closes");
    assert!(
        first_close > sigterm,
        "a charger was closed before the SIGTERM"
    );
    let last_close = *closes.iter().max().expect("closes");
    let spread = last_close - first_close;
    let turned = probes
        .iter()
        .find(|p| p.status == Some(503))
        .map(|p| p.sent - sigterm);
    let ready_after_close: Vec<_> = probes
        .iter()
        .filter(|p| p.sent > first_close && p.status == Some(200))
        .map(|p| p.sent - first_close)
        .collect();
    eprintln!(
        "readyz 503 from {turned:?} after SIGTERM; first close {:?} after SIGTERM; closes spread over {spread:?}",
        first_close - sigterm
    );
    assert!(turned.is_some(), "gw-a's /readyz never answered 503");
    assert!(
        ready_after_close.is_empty(),
        "gw-a answered /readyz 200 to probes sent after its first close: {ready_after_close:?}"
    );
    // Even: CHARGERS / (PERIOD / BUCKET) a bucket; allowed twice that.
    let even = CHARGERS as f64 * BUCKET.as_secs_f64() / PERIOD.as_secs_f64();
    let bound = (2.0 * even).ceil() as usize;
    let close_buckets = buckets(&closes);
    let reconnects: Vec<Instant> = reports.iter().filter_map(|r| r.reconnected).collect();
    let reconnect_buckets = buckets(&reconnects);
    eprintln!(
        "closes per {BUCKET:?}: {close_buckets:?}; reconnects: {reconnect_buckets:?}; bound {bound}"
    );
    assert!(
        spread >= PERIOD.mul_f64(0.75) && spread <= PERIOD + Duration::from_secs(2),
        "closes spread over {spread:?}, the period is {PERIOD:?}"
    );
    assert!(
        close_buckets.iter().all(|n| *n <= bound),
        "closes per {BUCKET:?} over the bound {bound}: {close_buckets:?}"
    );
    assert!(
        reconnect_buckets.iter().all(|n| *n <= bound),
        "reconnections per {BUCKET:?} over the bound {bound}: {reconnect_buckets:?}"
    );
    // The end of the drain is among the last lines (its start, before 600 disconnects, is not).
    let log = strip_ansi(&fleet.gateway("gw-a").process.log_tail());
    assert!(
        log.contains("drain ended") && log.contains(&format!("drained={CHARGERS}")),
        "gw-a's log should tell the drain's end with drained={CHARGERS}:\n{log}"
    );
    assert!(
        drained_seen > 0.0 && drained_seen <= CHARGERS as f64,
        "cms_gateway_drained_total seen on gw-a during the drain: {drained_seen}"
    );

    // Every reading A or B acknowledged is in the topic.
    let acknowledged: HashSet<(String, u64)> = reports
        .iter()
        .flat_map(|r| {
            let id = &r.identity;
            r.acked_on_a
                .iter()
                .chain(&r.acked_on_b)
                .map(|seq| (id.clone(), *seq))
        })
        .collect();
    let records = read_readings(&fleet.brokers, &fleet.messages_topic(), acknowledged).await;
    let in_topic: HashSet<(String, u64)> = records
        .iter()
        .filter(|r| r.header("action") == Some("MeterValues"))
        .map(|r| reading_seq(r).expect("a reading with its sequence number"))
        .collect();
    let mut acked_on_a = 0;
    let mut missing = Vec::new();
    for report in &reports {
        acked_on_a += report.acked_on_a.len();
        for seq in report.acked_on_a.iter().chain(&report.acked_on_b) {
            if !in_topic.contains(&(report.identity.clone(), *seq)) {
                missing.push(format!("{} seq {seq}", report.identity));
            }
        }
    }
    eprintln!(
        "{acked_on_a} readings acknowledged by gw-a, {} records of readings in the topic",
        in_topic.len()
    );
    assert!(
        missing.is_empty(),
        "{} acknowledged readings are not in the topic, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
}
