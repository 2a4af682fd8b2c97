//! Chargers' connection attempts in every replica of `cms api` (the Kafka deployment): the
//! gateways put each session that opens (`connected`) and each connection refused before one
//! could (`refused`, with cms's reason) on the connections topic, and every replica follows it
//! outside any group, keeping the last attempts of each identity in memory from its start on.
//! Bounded as a gateway bounds its own (crates/gateway/src/diagnostics/attempts.rs).

use crate::control::diagnostics::ConnectionAttempt;
use chrono::{DateTime, Utc};
use cms_bus::{ConnectionEvent, Subscriber};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Attempts kept per identity.
const PER_IDENTITY: usize = 20;
/// Identities kept per generation (two are kept): the older generation goes whole when the
/// newer fills, so a flood of made-up identities pushes out only the quiet ones.
const IDENTITIES: usize = 20_000;

#[derive(Default)]
pub struct AttemptsFromBus {
    generations: Mutex<[HashMap<String, VecDeque<ConnectionAttempt>>; 2]>,
}

impl AttemptsFromBus {
    fn record(&self, identity: &str, attempt: ConnectionAttempt) {
        let mut maps = self.generations.lock().unwrap_or_else(|e| e.into_inner());
        let [newer, older] = &mut *maps;
        let mut list = match newer.remove(identity) {
            Some(list) => list,
            None => older.remove(identity).unwrap_or_default(),
        };
        if list.len() >= PER_IDENTITY {
            list.pop_front();
        }
        list.push_back(attempt);
        if newer.len() >= IDENTITIES {
            *older = std::mem::take(newer);
        }
        newer.insert(identity.to_string(), list);
    }

    /// The attempt a connections record tells of, if any.
    fn offer(&self, event: ConnectionEvent) {
        let (identity, at, peer, refused) = match event {
            ConnectionEvent::Connected {
                identity,
                at,
                remote_addr,
                ..
            } => (identity, at, remote_addr, None),
            ConnectionEvent::Refused {
                identity,
                at,
                remote_addr,
                reason,
                ..
            } => (identity, at, remote_addr, Some(reason)),
            _ => return,
        };
        let at = DateTime::parse_from_rfc3339(&at).map_or_else(|_| Utc::now(), |t| t.to_utc());
        self.record(&identity, ConnectionAttempt { at, peer, refused });
    }
}

impl AttemptsFromBus {
    /// The charger's last connection attempts, newest first.
    pub fn attempts(&self, identity: &str) -> Vec<ConnectionAttempt> {
        let maps = self.generations.lock().unwrap_or_else(|e| e.into_inner());
        let list = maps[0].get(identity).or_else(|| maps[1].get(identity));
        list.map(|l| l.iter().rev().cloned().collect())
            .unwrap_or_default()
    }
}

/// Follows the connections topic until the bus closes.
pub async fn follow(mut connections: Box<dyn Subscriber>, attempts: Arc<AttemptsFromBus>) {
    let mut batch = Vec::new();
    loop {
        batch.clear();
        match connections.next_batch(&mut batch, 1024).await {
            Ok(0) => return,
            Ok(_) => {
                for message in &batch {
                    if let Some(event) = ConnectionEvent::of(&message.record) {
                        attempts.offer(event);
                    }
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot follow the connection attempts; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}
