//! The bytes relayed calls hold while they wait for their upstreams (docs/proxy.md, "Bounded"):
//! a budget per charger (`--relay-charger-bytes`) and one over all the chargers of the gateway
//! process (`--relay-total-bytes`). A call counts its payload's bytes once per upstream queue it
//! waits in, from its queueing until it is written to that upstream or dropped: the queues
//! share one copy, so the count is the worst case, where each upstream lags the others.
//!
//! Each upstream also keeps to its share of its charger's budget (the budget over its
//! upstreams), so that one that never answers cannot crowd the others out; an upstream with
//! nothing queued takes any call the charger's budget has room for, so a call larger than a
//! share still reaches the upstreams that keep up.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The defaults: four of the largest frames per charger, and so 256 such chargers at once.
pub const CHARGER_BYTES: usize = 256 * 1024;
pub const TOTAL_BYTES: usize = 64 * 1024 * 1024;

/// Dropped calls are logged at most this often, with how many there were: a charger whose
/// upstream is down would otherwise log every call.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// What all the relays of a gateway hold.
pub struct GatewayBudget {
    per_charger: usize,
    total: usize,
    held: AtomicUsize,
    /// `cms_proxy_queued_bytes`: registered at start, so it reads 0 before any relaying.
    gauge: metrics::Gauge,
    /// `cms_proxy_frames_dropped_total`, likewise.
    dropped: metrics::Counter,
    /// When drops were last logged, and how many came since.
    warned: Mutex<(Option<Instant>, u64)>,
}

/// Why a call was not queued for an upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// The upstream's 64 calls (`super::QUEUE`).
    Queue,
    /// The upstream's share of its charger's budget.
    Share,
    Charger,
    Gateway,
}

impl GatewayBudget {
    pub fn new(per_charger: usize, total: usize) -> GatewayBudget {
        GatewayBudget {
            per_charger,
            total,
            held: AtomicUsize::new(0),
            gauge: metrics::gauge!("cms_proxy_queued_bytes"),
            dropped: metrics::counter!("cms_proxy_frames_dropped_total"),
            warned: Mutex::new((None, 0)),
        }
    }

    /// Counts a call dropped for one upstream of `identity`, and logs drops once a minute.
    pub fn dropped(&self, identity: &str, why: Over) {
        self.dropped.increment(1);
        let now = Instant::now();
        let mut warned = self.warned.lock().unwrap_or_else(PoisonError::into_inner);
        warned.1 += 1;
        if warned
            .0
            .is_some_and(|at| now.duration_since(at) < WARN_EVERY)
        {
            return;
        }
        let dropped = std::mem::replace(&mut *warned, (Some(now), 0)).1;
        drop(warned);
        // `dropped`: over the gateway's chargers since the last warning; `identity`: the latest.
        tracing::warn!(%identity, reason = ?why, dropped, per_charger_bytes = self.per_charger,
            total_bytes = self.total, "relayed calls dropped: their upstreams are slow or down");
    }
}

/// What the upstreams of one charger hold.
pub struct ChargerBudget {
    gateway: Arc<GatewayBudget>,
    held: AtomicUsize,
}

impl ChargerBudget {
    pub fn new(gateway: Arc<GatewayBudget>) -> Arc<ChargerBudget> {
        Arc::new(ChargerBudget {
            gateway,
            held: AtomicUsize::new(0),
        })
    }

    /// The budget of one of its `upstreams`.
    pub fn upstream(self: &Arc<ChargerBudget>, upstreams: usize) -> Arc<UpstreamBudget> {
        Arc::new(UpstreamBudget {
            share: self.gateway.per_charger / upstreams.max(1),
            charger: self.clone(),
            held: AtomicUsize::new(0),
        })
    }

    pub fn gateway(&self) -> &GatewayBudget {
        &self.gateway
    }
}

/// What one upstream's queue holds.
pub struct UpstreamBudget {
    charger: Arc<ChargerBudget>,
    share: usize,
    held: AtomicUsize,
}

impl UpstreamBudget {
    /// Takes `bytes` for a call to queue, when every budget has room for them.
    pub fn admit(self: &Arc<UpstreamBudget>, bytes: usize) -> Result<Held, Over> {
        let mine = self.held.load(Ordering::Acquire);
        if mine > 0 && mine.saturating_add(bytes) > self.share {
            return Err(Over::Share);
        }
        let charger = &self.charger;
        let gateway = &charger.gateway;
        if !take(&charger.held, bytes, gateway.per_charger) {
            return Err(Over::Charger);
        }
        if !take(&gateway.held, bytes, gateway.total) {
            charger.held.fetch_sub(bytes, Ordering::AcqRel);
            return Err(Over::Gateway);
        }
        self.held.fetch_add(bytes, Ordering::AcqRel);
        gateway.gauge.increment(bytes as f64);
        Ok(Held {
            upstream: self.clone(),
            bytes,
        })
    }
}

/// Adds `bytes` to `held` unless that passes `limit`; whether it did. (A compare-and-swap: the
/// gateway's count is shared by every session of every shard.)
fn take(held: &AtomicUsize, bytes: usize, limit: usize) -> bool {
    held.fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
        now.checked_add(bytes).filter(|after| *after <= limit)
    })
    .is_ok()
}

/// The bytes of one queued call, given back when it is dropped (written, or dropped unsent).
pub struct Held {
    upstream: Arc<UpstreamBudget>,
    bytes: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        let charger = &self.upstream.charger;
        self.upstream.held.fetch_sub(self.bytes, Ordering::AcqRel);
        charger.held.fetch_sub(self.bytes, Ordering::AcqRel);
        charger.gateway.held.fetch_sub(self.bytes, Ordering::AcqRel);
        charger.gateway.gauge.decrement(self.bytes as f64);
    }
}

impl fmt::Debug for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Held({} bytes)", self.bytes)
    }
}

#[cfg(test)]
mod tests;
