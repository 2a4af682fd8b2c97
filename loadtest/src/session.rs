//! One simulated charger: its own websocket, one call of its own outstanding at a time (closed
//! loop), answering the central system's calls as they come.

use crate::args::OcppVersion;
use crate::connect::{self, Target};
use crate::ocpp::{self, Incoming, Reading};
use crate::ocpp201::{self, TransactionEvent};
use crate::stats::Stats;
use crate::tls::Tls;
use futures_util::{SinkExt, StreamExt};
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tokio::time::error::Elapsed;
use tokio::time::{Instant, sleep_until, timeout_at};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;

const CONNECTOR: u32 = 1;

/// What one charger does and until when.
#[derive(Debug, Clone)]
pub struct Plan {
    pub target: Target,
    /// The TLS client of a wss target (shared by every charger of the process).
    pub tls: Option<Tls>,
    pub source: Ipv4Addr,
    pub identity: String,
    /// The charger's 0-based index: picks its histogram shard and starting meter reading.
    pub index: usize,
    pub heartbeat: Duration,
    /// Time between MeterValues; `None`: none.
    pub meter_period: Option<Duration>,
    /// Readings on a fixed schedule (`--open-loop`): a late answer delays the next reading but
    /// not the ones after it, and each reading's latency counts from when it was due.
    pub open_loop: bool,
    /// Authorize with one of `LT-TAG-1..=N` instead of each MeterValues; 0: MeterValues.
    pub authorize_tags: u64,
    pub ocpp_version: OcppVersion,
    /// Length of each transaction; `None`: no transactions.
    pub transaction: Option<Duration>,
    pub timeout: Duration,
    /// Set once the whole fleet is up (connected and booted, or failed): meter values and
    /// transactions start then.
    pub go: watch::Receiver<Option<Instant>>,
    pub stop_at: Instant,
}

/// Why a session ended early.
#[derive(Debug)]
enum End {
    Closed,
    TimedOut,
}

enum Reply {
    Result(String),
    Error,
}

/// Runs the charger until `plan.stop_at`, counting everything in `stats`.
pub async fn run(plan: Plan, stats: Arc<Stats>) {
    let deadline = (Instant::now() + plan.timeout).min(plan.stop_at);
    let subprotocol = plan.ocpp_version.subprotocol();
    // Each transport its own instance of the session: the plain one stays free of TLS.
    match plan.tls.clone() {
        None => {
            let connecting = async {
                let tcp = connect::tcp(plan.source, plan.target.addr).await?;
                connect::upgrade(tcp, &plan.target, &plan.identity, subprotocol).await
            };
            let ws = timeout_at(deadline, connecting).await;
            play(ws, plan, stats).await
        }
        Some(tls) => {
            let connecting = async {
                let tcp = connect::tcp(plan.source, plan.target.addr).await?;
                let stream = connect::tls(&tls, tcp).await?;
                connect::upgrade(stream, &plan.target, &plan.identity, subprotocol).await
            };
            let ws = timeout_at(deadline, connecting).await;
            play(ws, plan, stats).await
        }
    }
}

/// Plays the charger over the websocket it got, if it got one.
async fn play<S>(
    ws: Result<Result<WebSocketStream<S>, connect::Error>, Elapsed>,
    plan: Plan,
    stats: Arc<Stats>,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let c = &stats.counters;
    let ws = match ws {
        Ok(Ok(ws)) => ws,
        Ok(Err(e)) => return stats.failed(|| e.to_string()),
        Err(_) => return stats.failed(|| format!("no websocket within {:?}", plan.timeout)),
    };
    Stats::bump(&c.established);
    c.open.fetch_add(1, Ordering::Relaxed);
    let mut session = Session {
        ws,
        next_id: 0,
        seq_no: 0,
        meter: Meter::new(plan.index),
        due: None,
        stats: stats.clone(),
        plan,
    };
    let end = session.drive().await;
    c.open.fetch_sub(1, Ordering::Relaxed);
    match end {
        Ok(()) => {
            let closing = Instant::now() + Duration::from_secs(2);
            let _ = timeout_at(closing, session.ws.close(None)).await;
        }
        Err(End::TimedOut) => {}
        Err(End::Closed) => Stats::bump(&c.disconnects),
    }
}

/// A charger's energy register, advancing with the power it draws.
struct Meter {
    energy_wh: f64,
    charging: bool,
    last: Instant,
    samples: u64,
}

impl Meter {
    fn new(index: usize) -> Self {
        Self {
            // Chargers start from different, plausible register values.
            energy_wh: 1_000_000.0 + (index % 997) as f64 * 3_517.0,
            charging: false,
            last: Instant::now(),
            samples: 0,
        }
    }

    fn read(&mut self) -> Reading {
        let now = Instant::now();
        let hours = now.duration_since(self.last).as_secs_f64() / 3600.0;
        self.last = now;
        self.samples += 1;
        let wobble = (self.samples as f64 * 0.7).sin();
        let voltage_v = 230.0 + 2.5 * wobble;
        let current_a = if self.charging {
            16.0 + 0.4 * wobble
        } else {
            0.0
        };
        self.energy_wh += voltage_v * current_a * hours;
        Reading {
            energy_wh: self.energy_wh,
            current_a,
            voltage_v,
        }
    }
}

/// A transaction's id: cms's number in 1.6, the station's own string in 2.0.1.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TransactionId {
    V16(i64),
    V201(String),
}

/// A transaction running on the connector.
struct Open {
    id: TransactionId,
    tag: String,
    ends: Instant,
}

struct Session<S> {
    ws: WebSocketStream<S>,
    next_id: u64,
    /// The next 2.0.1 TransactionEvent's seqNo (from 0 in each transaction).
    seq_no: u64,
    meter: Meter,
    /// When the call about to be made was due (open loop); `None`: now.
    due: Option<Instant>,
    stats: Arc<Stats>,
    plan: Plan,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Session<S> {
    async fn drive(&mut self) -> Result<(), End> {
        let stats = self.stats.clone();
        let c = &stats.counters;
        let boot = match self.plan.ocpp_version {
            OcppVersion::V16 => ocpp::boot_notification(),
            OcppVersion::V201 => ocpp201::boot_notification(),
        };
        match self.call("BootNotification", boot).await? {
            Reply::Result(p) if ocpp::boot_status(&p).as_deref() == Some("Accepted") => {
                stats.booted()
            }
            _ => Stats::bump(&c.boot_rejected),
        }
        self.status(false).await?;

        // Without transactions the charger draws power all along, so meter values still climb.
        self.meter.charging = self.plan.transaction.is_none();
        let now = Instant::now();
        let mut next_beat = now + self.plan.heartbeat;
        // Readings and transactions wait for the whole fleet to be up (the go signal): a target
        // busy answering the first chargers flat out would be slow to let the last ones in.
        let mut started = false;
        let mut next_meter = None;
        let mut transaction: Option<Open> = None;
        let mut next_start = None;
        let mut cycle = 0u64;
        let mut readings = 0u64;
        loop {
            if !started && let Some(go) = *self.plan.go.borrow() {
                started = true;
                let go = go.max(Instant::now());
                // Each charger at its own phase of the period, or they would all send at once.
                let phase = (self.plan.index as f64 * 0.618_033_988_75).fract();
                next_meter = self.plan.meter_period.map(|p| go + p.mul_f64(phase));
                next_start = self.plan.transaction.map(|_| go);
            }
            let tx_due = match &transaction {
                Some(open) => Some(open.ends),
                None => next_start,
            };
            let due = [Some(next_beat), next_meter, tx_due]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(self.plan.stop_at);
            if due >= self.plan.stop_at {
                self.idle_until(self.plan.stop_at, !started).await?;
                if Instant::now() >= self.plan.stop_at {
                    return Ok(());
                }
                continue;
            }
            self.idle_until(due, !started).await?;
            let now = Instant::now();
            if tx_due.is_some_and(|t| t <= now) {
                match transaction.take() {
                    None => {
                        cycle += 1;
                        let tag = format!("LT{}-{cycle}", self.plan.index + 1);
                        if let Some(id) = self.start_transaction(&tag).await? {
                            Stats::bump(&c.transactions);
                            self.meter.charging = true;
                            let length = self.plan.transaction.unwrap_or_default();
                            let ends = Instant::now() + length;
                            transaction = Some(Open { id, tag, ends });
                            self.status(true).await?;
                        }
                        // Refused: try again a heartbeat later.
                        if transaction.is_none() {
                            next_start = Some(Instant::now() + self.plan.heartbeat);
                        }
                    }
                    Some(open) => {
                        self.stop_transaction(&open).await?;
                        self.status(false).await?;
                        next_start = Some(Instant::now());
                    }
                }
            }
            if let (Some(at), Some(period)) = (next_meter, self.plan.meter_period)
                && at <= Instant::now()
            {
                // Open loop, the wait from when the reading was due counts (no coordinated
                // omission: a slow answer's delay of the next reading is latency too).
                self.due = self.plan.open_loop.then_some(at);
                if self.plan.authorize_tags > 0 {
                    readings += 1;
                    self.authorize(readings).await?;
                } else {
                    self.reading(transaction.as_ref()).await?;
                }
                next_meter = Some(if self.plan.open_loop {
                    // Open loop: the schedule holds; a reading sent late is followed at once
                    // by the next one due, as a fleet's chargers keep reading their meters.
                    at + period
                } else {
                    // Closed loop: when behind, do not burst to catch up.
                    (at + period).max(Instant::now())
                });
            }
            if next_beat <= Instant::now() {
                self.call("Heartbeat", "{}").await?;
                next_beat = (next_beat + self.plan.heartbeat).max(Instant::now());
            }
        }
    }

    /// The connector's status: charging (in a transaction) or available.
    async fn status(&mut self, charging: bool) -> Result<(), End> {
        let now = ocpp::now();
        let payload = match (self.plan.ocpp_version, charging) {
            (OcppVersion::V16, false) => ocpp::status_notification(CONNECTOR, "Available", &now),
            (OcppVersion::V16, true) => ocpp::status_notification(CONNECTOR, "Charging", &now),
            (OcppVersion::V201, false) => {
                ocpp201::status_notification(CONNECTOR, "Available", &now)
            }
            (OcppVersion::V201, true) => ocpp201::status_notification(CONNECTOR, "Occupied", &now),
        };
        self.call("StatusNotification", &payload).await.map(drop)
    }

    /// Starts a transaction for `tag`; its id when the central system accepted it.
    async fn start_transaction(&mut self, tag: &str) -> Result<Option<TransactionId>, End> {
        let now = ocpp::now();
        let reading = self.meter.read();
        match self.plan.ocpp_version {
            OcppVersion::V16 => {
                let start = reading.energy_wh as i64;
                let payload = ocpp::start_transaction(CONNECTOR, tag, start, &now);
                Ok(match self.call("StartTransaction", &payload).await? {
                    Reply::Result(p) => ocpp::transaction_id(&p).map(TransactionId::V16),
                    Reply::Error => None,
                })
            }
            OcppVersion::V201 => {
                // The station names its transactions: this charger's cycle, unique in the run.
                let id = format!("{}-{}", self.plan.identity, self.next_id + 1);
                self.seq_no = 0;
                let started = TransactionEvent::Started;
                let payload = self.transaction_event(started, &id, tag, &now, reading);
                Ok(match self.call("TransactionEvent", &payload).await? {
                    Reply::Result(p)
                        if ocpp201::id_token_status(&p).as_deref() == Some("Accepted") =>
                    {
                        Some(TransactionId::V201(id))
                    }
                    _ => None,
                })
            }
        }
    }

    async fn stop_transaction(&mut self, open: &Open) -> Result<(), End> {
        let now = ocpp::now();
        let reading = self.meter.read();
        self.meter.charging = false;
        match &open.id {
            TransactionId::V16(id) => {
                let stop = reading.energy_wh as i64;
                let payload = ocpp::stop_transaction(*id, &open.tag, stop, &now);
                self.call("StopTransaction", &payload).await.map(drop)
            }
            TransactionId::V201(id) => {
                let ended = TransactionEvent::Ended;
                let payload = self.transaction_event(ended, id, &open.tag, &now, reading);
                self.call("TransactionEvent", &payload).await.map(drop)
            }
        }
    }

    /// One reading: 1.6 MeterValues (with the transaction's id in one); 2.0.1 MeterValues
    /// outside a transaction, TransactionEvent Updated in one.
    async fn reading(&mut self, open: Option<&Open>) -> Result<(), End> {
        let now = ocpp::now();
        let reading = self.meter.read();
        let (action, payload) = match (self.plan.ocpp_version, open.map(|o| &o.id)) {
            (OcppVersion::V16, id) => {
                let id = match id {
                    Some(TransactionId::V16(id)) => Some(*id),
                    _ => None,
                };
                (
                    "MeterValues",
                    ocpp::meter_values(CONNECTOR, id, &now, reading),
                )
            }
            (OcppVersion::V201, Some(TransactionId::V201(id))) => {
                let tag = open.map(|o| o.tag.as_str()).unwrap_or_default();
                let updated = TransactionEvent::Updated;
                let payload = self.transaction_event(updated, id, tag, &now, reading);
                ("TransactionEvent", payload)
            }
            (OcppVersion::V201, _) => (
                "MeterValues",
                ocpp201::meter_values(CONNECTOR, &now, reading),
            ),
        };
        self.call(action, &payload).await.map(drop)
    }

    /// A 2.0.1 TransactionEvent, numbered in the station's sequence.
    fn transaction_event(
        &mut self,
        event: TransactionEvent,
        id: &str,
        tag: &str,
        now: &str,
        reading: Reading,
    ) -> String {
        let seq_no = self.seq_no;
        self.seq_no += 1;
        ocpp201::transaction_event(event, id, seq_no, CONNECTOR, tag, now, reading)
    }

    /// Authorize with the tag for this charger's `n`th reading: scattered over the whole list
    /// (a multiplicative hash of charger and reading), so lookups do not stay in cache.
    async fn authorize(&mut self, n: u64) -> Result<(), End> {
        let spread = (self.plan.index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ n;
        let tag = spread.wrapping_mul(0xBF58_476D_1CE4_E5B9) % self.plan.authorize_tags + 1;
        let tag = format!("LT-TAG-{tag}");
        let (payload, status): (String, fn(&str) -> Option<String>) = match self.plan.ocpp_version {
            OcppVersion::V16 => (format!(r#"{{"idTag":"{tag}"}}"#), ocpp::id_tag_status),
            OcppVersion::V201 => (ocpp201::authorize(&tag), ocpp201::id_token_status),
        };
        if let Reply::Result(answer) = self.call("Authorize", &payload).await?
            && status(&answer).as_deref() != Some("Accepted")
        {
            Stats::bump(&self.stats.counters.authorize_refused);
        }
        Ok(())
    }

    /// Sends a call and waits for its answer, matched by message id.
    async fn call(&mut self, action: &str, payload: &str) -> Result<Reply, End> {
        self.next_id += 1;
        let id = self.next_id.to_string();
        let sent = Instant::now();
        // What the answer's latency counts from: when the call was due, open loop.
        let since = self.due.take().unwrap_or(sent);
        let stats = self.stats.clone();
        let c = &stats.counters;
        if self
            .ws
            .send(Message::text(ocpp::call(&id, action, payload)))
            .await
            .is_err()
        {
            return Err(End::Closed);
        }
        Stats::bump(&c.sent);
        let deadline = sent + self.plan.timeout;
        loop {
            let Ok(next) = timeout_at(deadline, self.ws.next()).await else {
                Stats::bump(&c.timeouts);
                return Err(End::TimedOut);
            };
            let text = match next {
                Some(Ok(Message::Text(text))) => text,
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return Err(End::Closed),
                Some(Ok(_)) => continue,
            };
            match ocpp::parse(text.as_str()) {
                Some(Incoming::Result { id: got, payload }) if got == id => {
                    self.stats.record(self.plan.index, since.elapsed());
                    Stats::bump(&c.answered);
                    return Ok(Reply::Result(payload.to_owned()));
                }
                Some(Incoming::Error { id: got, .. }) if got == id => {
                    self.stats.record(self.plan.index, since.elapsed());
                    Stats::bump(&c.answered);
                    Stats::bump(&c.callerrors);
                    return Ok(Reply::Error);
                }
                // The central system's calls are answered in between: still one call of our own.
                Some(Incoming::Call { id: theirs, action }) => {
                    self.answer(&theirs, &action).await?
                }
                // A late answer to an earlier call, or noise: not ours to wait for.
                _ => {}
            }
        }
    }

    /// Waits until `until` (or the go signal, with `for_go`), answering the central system's
    /// calls meanwhile.
    async fn idle_until(&mut self, until: Instant, for_go: bool) -> Result<(), End> {
        // Flat out (`--meter-rate max`) the next call is always due: no timer to arm.
        if until <= Instant::now() {
            return Ok(());
        }
        loop {
            tokio::select! {
                _ = sleep_until(until) => return Ok(()),
                // An error means the run is over: stop_at is near, the sleep ends the wait.
                Ok(()) = self.plan.go.changed(), if for_go => return Ok(()),
                next = self.ws.next() => match next {
                    Some(Ok(Message::Text(text))) => {
                        if let Some(Incoming::Call { id, action }) = ocpp::parse(text.as_str()) {
                            self.answer(&id, &action).await?;
                        }
                    }
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return Err(End::Closed),
                    Some(Ok(_)) => {}
                },
            }
        }
    }

    /// Answers a call from the central system (see `ocpp::answer`).
    async fn answer(&mut self, id: &str, action: &str) -> Result<(), End> {
        let c = &self.stats.counters;
        Stats::bump(&c.server_calls);
        let (known, reply) = match self.plan.ocpp_version {
            OcppVersion::V16 => (ocpp::answer(action).is_some(), ocpp::reply_to(id, action)),
            OcppVersion::V201 => (
                ocpp201::answer(action).is_some(),
                ocpp201::reply_to(id, action),
            ),
        };
        if known {
            Stats::bump(&c.server_answered);
        }
        self.ws
            .send(Message::text(reply))
            .await
            .map_err(|_| End::Closed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_central::Central;

    /// One charger, closed loop, for a second against a central over `tls` or not.
    async fn one_charger(tls: bool) -> crate::stats::Snapshot {
        play_one(tls, OcppVersion::V16, None).await
    }

    /// One charger of `version`, closed loop, for a second, in transactions of `transaction`.
    async fn play_one(
        tls: bool,
        version: OcppVersion,
        transaction: Option<Duration>,
    ) -> crate::stats::Snapshot {
        let central = Central::start(tls, true).await;
        let stats = Arc::new(Stats::new(1));
        let now = Instant::now();
        let (_go_tx, go) = watch::channel(Some(now));
        let plan = Plan {
            target: central.target,
            tls: central.tls.clone(),
            source: Ipv4Addr::LOCALHOST,
            identity: "CP-1".into(),
            index: 0,
            heartbeat: Duration::from_secs(60),
            meter_period: Some(Duration::ZERO),
            open_loop: false,
            authorize_tags: 0,
            ocpp_version: version,
            transaction,
            timeout: Duration::from_secs(5),
            go,
            stop_at: now + Duration::from_secs(1),
        };
        run(plan, stats.clone()).await;
        stats.snapshot()
    }

    /// The longest answer latency one charger saw reading every 50 ms for a second from a
    /// central that answers each reading 100 ms after it came, open loop or not.
    async fn slowest_answer_ms(open_loop: bool) -> f64 {
        let central = Central::slow(Duration::from_millis(100)).await;
        let stats = Arc::new(Stats::new(1));
        let now = Instant::now();
        let (_go_tx, go) = watch::channel(Some(now));
        let plan = Plan {
            target: central.target,
            tls: None,
            source: Ipv4Addr::LOCALHOST,
            identity: "CP-1".into(),
            index: 0,
            heartbeat: Duration::from_secs(60),
            meter_period: Some(Duration::from_millis(50)),
            open_loop,
            authorize_tags: 0,
            ocpp_version: OcppVersion::V16,
            transaction: None,
            timeout: Duration::from_secs(5),
            go,
            stop_at: now + Duration::from_secs(1),
        };
        run(plan, stats.clone()).await;
        assert!(stats.snapshot().answered >= 5, "{:?}", stats.snapshot());
        crate::stats::Latency::of(&stats.latency()).max
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn open_loop_counts_the_wait_behind_a_slow_answer_as_latency() {
        // Due every 50 ms, answered 100 ms after sending: the 8th reading is sent 350 ms or more
        // after it was due, so open loop reports that; closed loop reports each answer's 100 ms.
        let open = slowest_answer_ms(true).await;
        assert!(open >= 400.0, "open loop's slowest answer {open} ms");
        let closed = slowest_answer_ms(false).await;
        assert!(
            (100.0..400.0).contains(&closed),
            "closed loop's slowest {closed} ms"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_charger_plays_the_same_over_wss_as_over_ws() {
        for tls in [false, true] {
            let s = one_charger(tls).await;
            assert_eq!((s.established, s.failed, s.booted), (1, 0, 1), "{s:?}");
            assert!(s.answered > 20, "{s:?}");
            assert_eq!(s.errors(), 0, "{s:?}");
            assert_eq!(s.open, 0, "closed at the end: {s:?}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_2_0_1_station_runs_transactions_of_events() {
        let tx = Some(Duration::from_millis(200));
        let s = play_one(false, OcppVersion::V201, tx).await;
        assert_eq!((s.established, s.failed, s.booted), (1, 0, 1), "{s:?}");
        assert!(
            s.transactions >= 2,
            "Started, Updated..., Ended, again: {s:?}"
        );
        assert_eq!(s.errors(), 0, "{s:?}");
    }
}
