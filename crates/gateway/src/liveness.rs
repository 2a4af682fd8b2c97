//! What a gateway says of itself on the connections topic: that it started (so the sessions of
//! its last run are over), then that it is alive, every beacon interval until it shuts down.
//! The API takes a gateway silent for `--gateway-timeout` for dead and its chargers for
//! disconnected: a gateway that never comes back publishes no start to end its sessions.

use crate::events::{self, EventTarget};
use cms_bus::Publisher;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

/// Publishes the gateway's start, then a beacon every `interval` (the first at once), until
/// `stop`. One record at a time: while the bus cannot take one (a broker outage) no more
/// pile up behind it, and the next follows a full interval after it was taken.
pub(crate) async fn announce(
    bus: Arc<dyn Publisher>,
    target: EventTarget,
    interval: Duration,
    stop: CancellationToken,
) {
    let started = events::gateway_started_record(&target, interval, chrono::Utc::now());
    if let Err(e) = bus.publish(started).await {
        tracing::warn!(error = %e, "cannot publish the gateway's start; chargers of its last run may show online");
    }
    let mut beats = tokio::time::interval(interval);
    beats.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = beats.tick() => {}
        }
        let alive = events::gateway_alive_record(&target, interval, chrono::Utc::now());
        tokio::select! {
            _ = stop.cancelled() => return,
            published = bus.publish(alive) => {
                if let Err(e) = published {
                    tracing::warn!(error = %e, "cannot publish the gateway's beacon");
                }
            }
        }
    }
}
