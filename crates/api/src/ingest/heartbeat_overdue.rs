//! Tells teams' webhooks of chargers still connected but silent past their heartbeat interval
//! (`charger.offline` with `reason: heartbeat_overdue`): a charger whose link died without a
//! close looks connected to its gateway until the websocket's own time-out. Every API process
//! sweeps; the outbox keeps each session's event once however many do (docs/events.md).

use cms_store::Store;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often overdue chargers are looked for, at most.
const SWEEP_EVERY: Duration = Duration::from_secs(15);

/// Every few seconds until `stop`: the online chargers silent for longer than `stale_after`
/// (the heartbeat interval and half of it again, as the fleet overview's stale list).
pub async fn sweep(store: Store, stale_after: Duration, stop: CancellationToken) {
    let every = SWEEP_EVERY
        .min(stale_after / 2)
        .max(Duration::from_millis(100));
    let stale_after = chrono::Duration::from_std(stale_after).unwrap_or(chrono::Duration::MAX);
    while !stop.is_cancelled() {
        if let Err(e) = store
            .tell_overdue_chargers(chrono::Utc::now(), stale_after)
            .await
        {
            tracing::error!(error = %e, "cannot look for chargers overdue with their heartbeat");
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
    }
}
