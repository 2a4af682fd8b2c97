//! The dispatcher: while it holds the lease (one API replica at a time), it fans the outbox's
//! new events out to deliveries and sends the due ones, concurrently across (webhook, subject)
//! pairs (at most `max_in_flight` at once) and one at a time within a pair, so a subject's
//! events arrive in order while another subject's receiver fails.

use crate::client::{Answer, Client};
use crate::sign::{ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signature_header};
use chrono::Utc;
use cms_store::webhooks::EVENT_TYPES;
use cms_store::webhooks::deliveries::{Attempt, DueDelivery, Outcome};
use cms_store::{Store, format_record_time};
use std::collections::HashSet;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// The waits before each retry (after the first attempt, which is immediate): about 27.5 h in
/// all, each with ±20% jitter; after the last, the delivery has failed.
pub const RETRY_DELAYS: [Duration; 7] = [
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(5 * 3600),
    Duration::from_secs(10 * 3600),
    Duration::from_secs(10 * 3600),
];

/// How the dispatcher runs.
#[derive(Debug, Clone)]
pub struct DispatcherConfig {
    /// Deliveries may reach private addresses (`--webhook-allow-private`).
    pub allow_private: bool,
    /// This process's name as the lease's holder (unique across replicas).
    pub node: String,
    /// An attempt's time-out.
    pub attempt_timeout: Duration,
    /// How long the lease is taken for; renewed once a third of it has passed.
    pub lease: Duration,
    /// How often the outbox and the due deliveries are looked at when nothing else wakes it.
    pub poll: Duration,
    /// Attempts in flight at most (each of a different (webhook, subject)).
    pub max_in_flight: usize,
    /// The waits before each retry; after the last, failed.
    pub retry_delays: Vec<Duration>,
}

impl DispatcherConfig {
    /// The production settings: 10 s per attempt, a 10 s lease, 32 attempts in flight, the
    /// retry schedule of [`RETRY_DELAYS`].
    pub fn new(node: impl Into<String>, allow_private: bool) -> DispatcherConfig {
        DispatcherConfig {
            allow_private,
            node: node.into(),
            attempt_timeout: Duration::from_secs(10),
            lease: Duration::from_secs(10),
            poll: Duration::from_millis(250),
            max_in_flight: 32,
            retry_delays: RETRY_DELAYS.to_vec(),
        }
    }
}

/// Fan-out reads at most this many events a round.
const FAN_OUT_BATCH: i64 = 500;

/// Sets the dispatcher's metrics to 0, so they read before their first event.
pub fn register_metrics() {
    for kind in EVENT_TYPES {
        metrics::counter!("cms_webhook_events_total", "type" => *kind).absolute(0);
    }
    for outcome in ["delivered", "retried", "failed", "gone"] {
        metrics::counter!("cms_webhook_deliveries_total", "outcome" => outcome).absolute(0);
    }
    let _ = metrics::histogram!("cms_webhook_delivery_seconds");
    metrics::gauge!("cms_webhook_pending").set(0.0);
    metrics::gauge!("cms_webhooks_failing").set(0.0);
}

/// Runs the dispatcher until `stop`; lets go of the lease on the way out.
pub async fn run(store: Store, config: DispatcherConfig, stop: CancellationToken) {
    register_metrics();
    let client = Client::new(config.allow_private, config.attempt_timeout);
    let mut sending: JoinSet<Ended> = JoinSet::new();
    let mut busy: HashSet<(i64, String)> = HashSet::new();
    // Attempts that ended, recorded together at the next turn: one store transaction for all
    // the attempts that ended meanwhile, not one each.
    let mut ended: Vec<Ended> = Vec::new();
    let mut renewed: Option<Instant> = None;
    let mut gauges_read: Option<Instant> = None;
    loop {
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(config.poll) => {}
            Some(done) = sending.join_next(), if !sending.is_empty() => {
                ended.extend(done.ok());
                while let Some(done) = sending.try_join_next() {
                    ended.extend(done.ok());
                }
            }
        }
        let now = Utc::now();
        if renewed.is_none_or(|at| at.elapsed() >= config.lease / 3) {
            let until = now + config.lease;
            let took = store
                .take_webhook_lease(
                    &config.node,
                    &format_record_time(now),
                    &format_record_time(until),
                )
                .await;
            renewed = match took {
                Ok(true) => Some(Instant::now()),
                Ok(false) => None,
                Err(error) => {
                    tracing::warn!(%error, "webhook dispatcher: cannot take its lease");
                    None
                }
            };
        }
        if renewed.is_none() {
            // Not recorded: the holder of the lease sends them again (at least once).
            for attempt in ended.drain(..) {
                busy.remove(&attempt.key);
            }
            // Another replica dispatches and reports: this one's gauges would go stale.
            if gauges_read.take().is_some() {
                metrics::gauge!("cms_webhook_pending").set(0.0);
                metrics::gauge!("cms_webhooks_failing").set(0.0);
            }
            continue;
        }
        let now = format_record_time(now);
        record(&store, &config.node, &now, &mut ended, &mut busy).await;
        fan_out(&store, &config.node, &now).await;
        if gauges_read.is_none_or(|at| at.elapsed() >= Duration::from_secs(1)) {
            gauges_read = Some(Instant::now());
            if let Ok((pending, failing)) = store.webhook_delivery_gauges().await {
                metrics::gauge!("cms_webhook_pending").set(pending as f64);
                metrics::gauge!("cms_webhooks_failing").set(failing as f64);
            }
        }
        let room = config.max_in_flight.saturating_sub(sending.len());
        if room == 0 {
            continue;
        }
        let due = match store
            .due_webhook_deliveries(&now, (config.max_in_flight * 4) as i64)
            .await
        {
            Ok(due) => due,
            Err(error) => {
                tracing::warn!(%error, "webhook dispatcher: cannot read due deliveries");
                continue;
            }
        };
        let next: Vec<DueDelivery> = due
            .into_iter()
            .filter(|d| !busy.contains(&(d.webhook_id, d.subject.clone())))
            .take(room)
            .collect();
        for delivery in next {
            let key = (delivery.webhook_id, delivery.subject.clone());
            busy.insert(key.clone());
            let (client, config) = (client.clone(), config.clone());
            sending.spawn(async move { attempt(&client, &config, delivery, key).await });
        }
    }
    // Those that ended are recorded; those cut short are sent again by whoever holds the lease
    // next: at least once.
    let now = format_record_time(Utc::now());
    record(&store, &config.node, &now, &mut ended, &mut busy).await;
    sending.shutdown().await;
    if let Err(error) = store.release_webhook_lease(&config.node).await {
        tracing::warn!(%error, "webhook dispatcher: cannot release its lease");
    }
}

/// Fans out every event past the cursor, a batch at a time.
async fn fan_out(store: &Store, node: &str, now: &str) {
    loop {
        match store.fan_out_webhook_events(node, now, FAN_OUT_BATCH).await {
            Ok(Some(done)) => {
                for kind in &done.event_types {
                    metrics::counter!("cms_webhook_events_total", "type" => kind.clone())
                        .increment(1);
                }
                if (done.event_types.len() as i64) < FAN_OUT_BATCH {
                    return;
                }
            }
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "webhook dispatcher: cannot fan events out");
                return;
            }
        }
    }
}

/// An attempt that ended, to be recorded.
struct Ended {
    /// Its (webhook, subject): busy until the attempt is recorded.
    key: (i64, String),
    delivery_id: i64,
    attempt: Attempt,
    outcome: Outcome,
    /// Its outcome as `cms_webhook_deliveries_total` counts it.
    counted: &'static str,
}

/// Records the attempts that ended, in one transaction, and frees their (webhook, subject).
async fn record(
    store: &Store,
    node: &str,
    now: &str,
    ended: &mut Vec<Ended>,
    busy: &mut HashSet<(i64, String)>,
) {
    if ended.is_empty() {
        return;
    }
    let attempts: Vec<(i64, Attempt, Outcome)> = (ended.iter())
        .map(|e| (e.delivery_id, e.attempt.clone(), e.outcome.clone()))
        .collect();
    match store.record_webhook_attempts(node, now, &attempts).await {
        Ok(true) => {
            for e in ended.iter() {
                metrics::counter!("cms_webhook_deliveries_total", "outcome" => e.counted)
                    .increment(1);
            }
        }
        Ok(false) => tracing::info!(
            attempts = ended.len(),
            "webhook dispatcher: lease lost, attempts not recorded"
        ),
        Err(error) => tracing::warn!(
            %error,
            attempts = ended.len(),
            "webhook dispatcher: cannot record attempts; they are sent again"
        ),
    }
    for e in ended.drain(..) {
        busy.remove(&e.key);
    }
}

/// Sends one delivery; what came of it, to be recorded.
async fn attempt(
    client: &Client,
    config: &DispatcherConfig,
    d: DueDelivery,
    key: (i64, String),
) -> Ended {
    let attempted = Utc::now();
    let timestamp = attempted.timestamp();
    let headers = [
        (ID_HEADER, d.event_id.clone()),
        (TIMESTAMP_HEADER, timestamp.to_string()),
        (
            SIGNATURE_HEADER,
            signature_header(&d.secrets, &d.event_id, timestamp, d.body.as_bytes()),
        ),
    ];
    let started = Instant::now();
    let answer = client.post(&d.url, &headers, d.body).await;
    let latency = started.elapsed();
    metrics::histogram!("cms_webhook_delivery_seconds").record(latency.as_secs_f64());
    let (status, error) = match &answer {
        Ok(Answer { status, body }) => (
            Some(i64::from(*status)),
            (!(200..300).contains(status)).then(|| {
                if body.is_empty() {
                    format!("answered {status}")
                } else {
                    body.clone()
                }
            }),
        ),
        Err(error) => (None, Some(error.clone())),
    };
    let (outcome, counted) = match status {
        Some(200..=299) => (Outcome::Delivered, "delivered"),
        Some(410) => (Outcome::Gone, "gone"),
        _ => match config.retry_delays.get(d.attempts as usize) {
            Some(wait) => {
                let at = Utc::now() + jittered(*wait);
                (
                    Outcome::Retry {
                        at: format_record_time(at),
                    },
                    "retried",
                )
            }
            None => (Outcome::Failed, "failed"),
        },
    };
    Ended {
        key,
        delivery_id: d.id,
        attempt: Attempt {
            attempted_at: format_record_time(attempted),
            status_code: status,
            latency_ms: latency.as_millis() as i64,
            error,
        },
        outcome,
        counted,
    }
}

/// `wait` give or take 20%, so that deliveries failing together do not retry together.
fn jittered(wait: Duration) -> Duration {
    let mut byte = [0u8; 4];
    let random = match getrandom::fill(&mut byte) {
        Ok(()) => u32::from_le_bytes(byte) as f64 / u32::MAX as f64,
        Err(_) => 0.5,
    };
    wait.mul_f64(0.8 + 0.4 * random)
}

#[cfg(test)]
mod tests;
