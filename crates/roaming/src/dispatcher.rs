//! The OCPI dispatcher: while it holds the lease (one API replica at a time), it turns the
//! outbox's new events into pushes for the registered parties ([`crate::fan_out`]), enqueues
//! the running sessions' updates every session interval, and sends the due pushes,
//! concurrently across (provider, object) pairs (at most `max_in_flight` at once) and one at
//! a time within a pair, so an object's pushes arrive in order while another object's (or
//! another party's) fail.

use crate::attempt::{Ended, attempt};
use crate::client::Client;
use crate::translate;
use chrono::Utc;
use cms_store::ocpi::parties::Party;
use cms_store::ocpi::pushes::{DuePush, NewPush, OutboxEvent, PushAttempt};
use cms_store::{Store, format_record_time};
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// The waits before each retry (after the first attempt, which is immediate), as webhooks':
/// about 27.5 h in all, each with ±20% jitter; after the last, the push has failed.
pub const RETRY_DELAYS: [Duration; 7] = [
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(5 * 3600),
    Duration::from_secs(10 * 3600),
    Duration::from_secs(10 * 3600),
];

/// The modules pushes go to (`url`: a whole address, a command's `response_url`), for the
/// metrics' labels.
pub const MODULES: [&str; 5] = ["locations", "tariffs", "sessions", "cdrs", "url"];

/// How an event becomes pushes for a party: [`translate::pushes`], unless a test gives its own.
pub type Translate =
    for<'a> fn(
        &'a Store,
        &'a OutboxEvent,
        &'a Party,
    ) -> Pin<Box<dyn Future<Output = cms_store::Result<Vec<NewPush>>> + Send + 'a>>;

fn translated<'a>(
    store: &'a Store,
    event: &'a OutboxEvent,
    party: &'a Party,
) -> Pin<Box<dyn Future<Output = cms_store::Result<Vec<NewPush>>> + Send + 'a>> {
    Box::pin(translate::pushes(store, event, party))
}

/// How the dispatcher runs.
#[derive(Debug, Clone)]
pub struct DispatcherConfig {
    /// This process's name as the lease's holder (unique across replicas).
    pub node: String,
    /// Parties' URLs may be `http` and name private addresses (`--ocpi-allow-private`).
    pub allow_private: bool,
    /// An attempt's time-out (`--ocpi-push-timeout`).
    pub push_timeout: Duration,
    /// The waits before each retry (`--ocpi-retry-delays`); after the last, failed.
    pub retry_delays: Vec<Duration>,
    /// How often the running sessions' updates are enqueued (`--ocpi-session-interval`).
    pub session_interval: Duration,
    /// How long the lease is taken for; renewed once a third of it has passed.
    pub lease: Duration,
    /// How often the outbox and the due pushes are looked at when nothing else wakes it.
    pub poll: Duration,
    /// Attempts in flight at most (each of a different (provider, object)).
    pub max_in_flight: usize,
    /// How events become pushes.
    pub translate: Translate,
}

impl DispatcherConfig {
    /// The production settings: 10 s per attempt, [`RETRY_DELAYS`], running sessions every
    /// minute, a 10 s lease, 32 attempts in flight.
    pub fn new(node: impl Into<String>, allow_private: bool) -> DispatcherConfig {
        DispatcherConfig {
            node: node.into(),
            allow_private,
            push_timeout: Duration::from_secs(10),
            retry_delays: RETRY_DELAYS.to_vec(),
            session_interval: Duration::from_secs(60),
            lease: Duration::from_secs(10),
            poll: Duration::from_millis(250),
            max_in_flight: 32,
            translate: translated,
        }
    }
}

/// Sets the dispatcher's metrics to 0, so they read before their first push.
pub fn register_metrics() {
    for module in MODULES {
        for outcome in ["delivered", "retried", "failed"] {
            metrics::counter!("cms_ocpi_pushes_total", "module" => module, "outcome" => outcome)
                .absolute(0);
        }
    }
    metrics::gauge!("cms_ocpi_pushes_pending").set(0.0);
}

/// Runs the dispatcher until `stop`; lets go of the lease on the way out.
pub async fn run(store: Store, config: DispatcherConfig, stop: CancellationToken) {
    register_metrics();
    let client = Client::new(config.allow_private, config.push_timeout);
    let config = Arc::new(config);
    let mut sending: JoinSet<Ended> = JoinSet::new();
    let mut busy: HashSet<(i64, String)> = HashSet::new();
    // Attempts that ended, recorded together at the next turn, in one transaction.
    let mut ended: Vec<Ended> = Vec::new();
    let mut renewed: Option<Instant> = None;
    let mut gauge_read: Option<Instant> = None;
    let mut sessions_enqueued: Option<Instant> = None;
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
        if renewed.is_none_or(|at| at.elapsed() >= config.lease / 3) {
            renewed = take_lease(&store, &config).await.then(Instant::now);
        }
        if renewed.is_none() {
            // Not recorded: the holder of the lease sends them again (at least once).
            for attempt in ended.drain(..) {
                busy.remove(&attempt.key);
            }
            // Another replica dispatches and reports: this one's gauge would go stale.
            if gauge_read.take().is_some() {
                metrics::gauge!("cms_ocpi_pushes_pending").set(0.0);
            }
            sessions_enqueued = None;
            continue;
        }
        record(&store, &config.node, &mut ended, &mut busy).await;
        crate::fan_out::fan_out(&store, &config).await;
        if sessions_enqueued.is_none_or(|at| at.elapsed() >= config.session_interval) {
            sessions_enqueued = Some(Instant::now());
            enqueue_running_sessions(&store, &config.node).await;
        }
        if gauge_read.is_none_or(|at| at.elapsed() >= Duration::from_secs(1)) {
            gauge_read = Some(Instant::now());
            if let Ok(pending) = store.ocpi_pushes_pending().await {
                metrics::gauge!("cms_ocpi_pushes_pending").set(pending as f64);
            }
        }
        let room = config.max_in_flight.saturating_sub(sending.len());
        if room == 0 {
            continue;
        }
        let now = format_record_time(Utc::now());
        let due = match store
            .due_ocpi_pushes(&now, (config.max_in_flight * 4) as i64)
            .await
        {
            Ok(due) => due,
            Err(error) => {
                tracing::warn!(%error, "OCPI dispatcher: cannot read the due pushes");
                continue;
            }
        };
        let next: Vec<DuePush> = (due.into_iter())
            .filter(|p| !busy.contains(&(p.provider_id, p.object_key.clone())))
            .take(room)
            .collect();
        for push in next {
            busy.insert((push.provider_id, push.object_key.clone()));
            let (store, client, config) = (store.clone(), client.clone(), config.clone());
            sending
                .spawn(async move { attempt(&store, &client, &config.retry_delays, push).await });
        }
    }
    // Those that ended are recorded; those cut short are sent again by whoever holds the lease
    // next: at least once.
    record(&store, &config.node, &mut ended, &mut busy).await;
    sending.shutdown().await;
    if let Err(error) = store.release_ocpi_lease(&config.node).await {
        tracing::warn!(%error, "OCPI dispatcher: cannot release its lease");
    }
}

/// Takes or renews the lease; whether this process holds it.
async fn take_lease(store: &Store, config: &DispatcherConfig) -> bool {
    let now = Utc::now();
    let (at, until) = (
        format_record_time(now),
        format_record_time(now + config.lease),
    );
    match store.take_ocpi_lease(&config.node, &at, &until).await {
        Ok(held) => held,
        Err(error) => {
            tracing::warn!(%error, "OCPI dispatcher: cannot take its lease");
            false
        }
    }
}

/// The running sessions' updates, into the outbox.
async fn enqueue_running_sessions(store: &Store, node: &str) {
    let pushes = match crate::running_sessions::due(store).await {
        Ok(pushes) => pushes,
        Err(error) => {
            tracing::warn!(%error, "OCPI dispatcher: cannot read the running sessions");
            return;
        }
    };
    if pushes.is_empty() {
        return;
    }
    let now = format_record_time(Utc::now());
    if let Err(error) = store.ocpi_enqueue_holding(node, &now, &pushes).await {
        tracing::warn!(%error, "OCPI dispatcher: cannot enqueue the running sessions");
    }
}

/// Records the attempts that ended, in one transaction, and frees their (provider, object).
async fn record(
    store: &Store,
    node: &str,
    ended: &mut Vec<Ended>,
    busy: &mut HashSet<(i64, String)>,
) {
    let attempts: Vec<PushAttempt> = ended.iter().filter_map(|e| e.attempt.clone()).collect();
    if !attempts.is_empty() {
        let now = format_record_time(Utc::now());
        match store.record_ocpi_push_attempts(node, &now, &attempts).await {
            Ok(true) => {
                for e in ended.iter().filter(|e| e.attempt.is_some()) {
                    metrics::counter!("cms_ocpi_pushes_total",
                        "module" => e.module.clone(), "outcome" => e.counted)
                    .increment(1);
                }
            }
            Ok(false) => tracing::info!(
                attempts = attempts.len(),
                "OCPI dispatcher: lease lost, attempts not recorded"
            ),
            Err(error) => tracing::warn!(
                %error,
                attempts = attempts.len(),
                "OCPI dispatcher: cannot record attempts; they are sent again"
            ),
        }
    }
    for e in ended.drain(..) {
        busy.remove(&e.key);
    }
}

#[cfg(test)]
mod tests;
