//! TLS handshakes under way per source address, so that one stranger cannot take the wss
//! listener's turns from the chargers: an IPv4 address counts alone, an IPv6 one with its /64
//! (what one host or subscriber is usually given, and can pick addresses from at will).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

/// Who a limit counts a connection against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Source {
    V4(u32),
    /// The first 64 bits.
    V6(u64),
}

impl Source {
    fn of(address: IpAddr) -> Self {
        // A dual-stack listener sees IPv4 clients as ::ffff:a.b.c.d.
        match address.to_canonical() {
            IpAddr::V4(v4) => Source::V4(v4.into()),
            IpAddr::V6(v6) => Source::V6((u128::from(v6) >> 64) as u64),
        }
    }
}

/// The handshakes of each source under way, at most `limit` each (0: no limit).
pub struct Sources {
    limit: usize,
    under_way: Mutex<HashMap<Source, usize>>,
}

/// One handshake's place under its source's limit, given back when dropped.
pub struct SourceTurn {
    sources: Arc<Sources>,
    /// `None` when there is no limit to count against.
    source: Option<Source>,
}

impl Sources {
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(Sources {
            limit,
            under_way: Mutex::new(HashMap::new()),
        })
    }

    /// A turn for a handshake from `peer`, or `None` when its source has `limit` under way.
    pub fn take(self: &Arc<Self>, peer: IpAddr) -> Option<SourceTurn> {
        if self.limit == 0 {
            return Some(SourceTurn {
                sources: self.clone(),
                source: None,
            });
        }
        let source = Source::of(peer);
        let mut under_way = self.lock();
        let count = under_way.entry(source).or_insert(0);
        if *count >= self.limit {
            return None;
        }
        *count += 1;
        Some(SourceTurn {
            sources: self.clone(),
            source: Some(source),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Source, usize>> {
        self.under_way
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for SourceTurn {
    fn drop(&mut self) {
        let Some(source) = self.source else { return };
        let mut under_way = self.sources.lock();
        // Sources with nothing under way are forgotten: the map holds only live handshakes.
        if let Some(count) = under_way.get_mut(&source) {
            *count -= 1;
            if *count == 0 {
                under_way.remove(&source);
            }
        }
    }
}

#[cfg(test)]
mod tests;
