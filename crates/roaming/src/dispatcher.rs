//! The OCPI dispatcher: while it holds the lease (one API replica at a time), it turns the
//! outbox's new events into pushes for the registered parties ([`crate::fan_out`]), enqueues
//! the running sessions' updates every session interval, and sends the due pushes,
//! concurrently across (provider, object) pairs (at most `max_in_flight` at once) and one at
//! a time within a pair, so an object's pushes arrive in order while another object's (or
//! another party's) fail.

use crate::attempt::{Ended, attempt};
use crate::client::Client;
use chrono::Utc;
use cms_store::ocpi::pushes::{DuePush, PushAttempt};
use cms_store::{Store, format_record_time};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

pub use crate::config::{DispatcherConfig, MODULES, RETRY_DELAYS, Translate};

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
