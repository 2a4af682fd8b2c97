//! Takes offline the chargers of a gateway that fell silent: one that died and never came back
//! (a pod replaced under a new name) said nothing of its sessions, and no start of it will.
//! Every API process sweeps beside its sweep of overdue actions; the store ends each session
//! once however many sweep at once (docs/decisions.md).

use cms_store::Store;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often silent gateways are looked for, at most: their chargers go offline within the
/// timeout and this (half the timeout, when that is shorter).
const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// Ends, every few seconds until `stop`, the sessions held by gateways silent for longer
/// than `timeout`.
pub async fn sweep_silent_gateways(store: Store, timeout: Duration, stop: CancellationToken) {
    let ended = metrics::counter!("cms_api_gateway_silent_sessions_ended_total");
    let every = SWEEP_EVERY.min(timeout / 2).max(Duration::from_millis(100));
    // A timeout beyond chrono's range judges no one, which is what so long a timeout means.
    let timeout = chrono::Duration::from_std(timeout).unwrap_or(chrono::Duration::MAX);
    while !stop.is_cancelled() {
        match store
            .end_sessions_of_silent_gateways(chrono::Utc::now(), timeout)
            .await
        {
            Ok(silent) => {
                for gateway in silent {
                    tracing::warn!(
                        gateway = %gateway.node_id,
                        chargers = gateway.sessions_ended,
                        last_seen_at = %gateway.last_seen_at,
                        "gateway silent past --gateway-timeout: its chargers' sessions ended"
                    );
                    ended.increment(gateway.sessions_ended);
                }
            }
            Err(e) => tracing::error!(error = %e, "cannot sweep silent gateways"),
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
    }
}
