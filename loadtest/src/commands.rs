//! The command generator (`--commands-per-s`): from the go signal on, cms's REST API is asked
//! to send every charger an action at a steady rate, as operators would, while the chargers
//! keep up their own load. Open loop: each command is due at its time whatever became of the
//! ones before it; at most `--api-connections` requests are in flight, each on its own
//! kept-alive connection. `?wait=0`: the API answers once the action is taken (202).

use crate::api::{self, ApiClient};
use crate::args::Args;
use crate::command_action::CommandAction;
use crate::stats::{Latency, histogram};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until, timeout_at};

/// When each command is due, and for which charger: command `k` at `start + k / (chargers ×
/// rate)`, for charger `k mod chargers`. The fleet's commands come evenly spaced, each
/// charger's `1 / rate` apart, and no two chargers' at once.
#[derive(Debug, Clone)]
pub struct Schedule {
    start: Instant,
    chargers: u64,
    /// Commands of the whole fleet per second.
    per_s: f64,
}

impl Schedule {
    pub fn new(start: Instant, chargers: usize, per_charger_per_s: f64) -> Self {
        Schedule {
            start,
            chargers: chargers.max(1) as u64,
            per_s: chargers.max(1) as f64 * per_charger_per_s,
        }
    }

    /// Command `k` (from 0): when it is due, and the index of its charger.
    pub fn nth(&self, k: u64) -> (Instant, usize) {
        let due = self.start + Duration::from_secs_f64(k as f64 / self.per_s);
        (due, (k % self.chargers) as usize)
    }
}

/// The generator's counters, shared by its connections.
struct Counters {
    sent: AtomicU64,
    /// 200 or 202.
    accepted: AtomicU64,
    /// No HTTP answer: the connection failed, or no answer within `--timeout`.
    failed: AtomicU64,
    /// Sent 100 ms or more after they were due: too few connections, or a slow API.
    late: AtomicU64,
    /// Any other status, by status code; and the first such answer, to say why.
    refused: Mutex<(BTreeMap<u16, u64>, Option<String>)>,
    /// Request to whole answer, in microseconds.
    latency: Mutex<Histogram<u64>>,
}

/// What the generator did, for the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandsSummary {
    /// The action sent (its path segment), or `read-charger`.
    pub action: String,
    pub per_charger_per_s: f64,
    /// Chargers commanded: those of the run the API lists.
    pub chargers: usize,
    pub sent: u64,
    /// Answered 200 or 202.
    pub accepted: u64,
    /// Answered with any other status, by status code.
    pub refused: BTreeMap<String, u64>,
    /// The first refusal's status and body.
    pub first_refusal: Option<String>,
    /// No HTTP answer.
    pub failed: u64,
    /// Sent 100 ms or more late.
    pub late: u64,
    /// Commands sent per second over the steady window.
    pub sent_per_s: f64,
    /// HTTP latency: request written to answer read.
    pub latency_ms: Latency,
}

/// The generator, ready once it knows its chargers' uuids.
pub struct Commander {
    api: SocketAddrV4,
    token: String,
    action: CommandAction,
    per_charger_per_s: f64,
    connections: usize,
    timeout: Duration,
    /// The uuids of the chargers to command, in the run's order.
    uuids: Arc<Vec<String>>,
    counters: Arc<Counters>,
}

impl Commander {
    /// Finds this run's chargers in the API (before the fleet connects, so the listing does not
    /// weigh on the measured window); `None` without `--commands-per-s`.
    pub async fn prepare(args: &Args, identities: &[String]) -> Result<Option<Commander>, String> {
        let (Some(api), Some(token)) = (args.api, args.token.clone()) else {
            return Ok(None);
        };
        if args.commands_per_s <= 0.0 {
            return Ok(None);
        }
        let mut client = ApiClient::new(api, &token);
        let found = api::charger_uuids(&mut client, identities).await?;
        let uuids: Vec<String> = identities
            .iter()
            .filter_map(|identity| found.get(identity).cloned())
            .collect();
        if uuids.is_empty() {
            return Err(format!(
                "the API at {api} lists none of the {} chargers: are they registered, and \
                 does the token's user see them?",
                identities.len()
            ));
        }
        if uuids.len() < identities.len() {
            eprintln!(
                "cms-loadtest: the API lists {} of the {} chargers; commanding those",
                uuids.len(),
                identities.len()
            );
        }
        Ok(Some(Commander {
            api,
            token,
            action: args.command,
            per_charger_per_s: args.commands_per_s,
            connections: args.api_connections as usize,
            timeout: Duration::from_secs(args.timeout),
            uuids: Arc::new(uuids),
            counters: Arc::default(),
        }))
    }

    /// Sends the commands due from `start` until `end`; a request still unanswered at
    /// `give_up` is counted failed. Returns once the last one ended.
    pub async fn run(&self, start: Instant, end: Instant, give_up: Instant) {
        let schedule = Arc::new(Schedule::new(
            start,
            self.uuids.len(),
            self.per_charger_per_s,
        ));
        let next = Arc::new(AtomicU64::new(0));
        let mut connections = JoinSet::new();
        for _ in 0..self.connections {
            let connection = Connection {
                client: ApiClient::new(self.api, &self.token),
                action: self.action,
                uuids: self.uuids.clone(),
                counters: self.counters.clone(),
                timeout: self.timeout,
            };
            let (schedule, next) = (schedule.clone(), next.clone());
            connections.spawn(connection.run(schedule, next, end, give_up));
        }
        while connections.join_next().await.is_some() {}
    }

    pub fn summary(&self, window_s: f64) -> CommandsSummary {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let (refused, first_refusal) = c
            .refused
            .lock()
            .map(|r| (r.0.clone(), r.1.clone()))
            .unwrap_or_default();
        let latency = c
            .latency
            .lock()
            .map(|h| Latency::of(&h))
            .unwrap_or_default();
        let sent = get(&c.sent);
        CommandsSummary {
            action: self.action.name().into(),
            per_charger_per_s: self.per_charger_per_s,
            chargers: self.uuids.len(),
            sent,
            accepted: get(&c.accepted),
            refused: refused
                .into_iter()
                .map(|(code, n)| (code.to_string(), n))
                .collect(),
            first_refusal,
            failed: get(&c.failed),
            late: get(&c.late),
            sent_per_s: if window_s > 0.0 {
                sent as f64 / window_s
            } else {
                0.0
            },
            latency_ms: latency,
        }
    }
}

/// One kept-alive connection to the API, taking the next command due whenever it is free.
struct Connection {
    client: ApiClient,
    action: CommandAction,
    uuids: Arc<Vec<String>>,
    counters: Arc<Counters>,
    timeout: Duration,
}

impl Connection {
    async fn run(
        mut self,
        schedule: Arc<Schedule>,
        next: Arc<AtomicU64>,
        end: Instant,
        give_up: Instant,
    ) {
        let c = self.counters.clone();
        loop {
            let (due, charger) = schedule.nth(next.fetch_add(1, Ordering::Relaxed));
            if due >= end {
                return;
            }
            sleep_until(due).await;
            let (method, path, body) = self.action.request(&self.uuids[charger]);
            let sent = Instant::now();
            c.sent.fetch_add(1, Ordering::Relaxed);
            if sent.duration_since(due) >= Duration::from_millis(100) {
                c.late.fetch_add(1, Ordering::Relaxed);
            }
            let deadline = (sent + self.timeout).min(give_up);
            let request = self.client.request(method, &path, body);
            match timeout_at(deadline, request).await {
                Ok(Ok((status, body))) => {
                    let micros = (sent.elapsed().as_micros() as u64).max(1);
                    if let Ok(mut h) = c.latency.lock() {
                        h.saturating_record(micros);
                    }
                    if matches!(status, 200 | 202) {
                        c.accepted.fetch_add(1, Ordering::Relaxed);
                    } else if let Ok(mut refused) = c.refused.lock() {
                        *refused.0.entry(status).or_default() += 1;
                        refused.1.get_or_insert_with(|| {
                            format!("{status} {}", String::from_utf8_lossy(&body))
                        });
                    }
                }
                // Dropped halfway, the request took its connection with it: the next opens one.
                Ok(Err(_)) | Err(_) => {
                    c.failed.fetch_add(1, Ordering::Relaxed);
                }
            }
            if Instant::now() >= give_up {
                return;
            }
        }
    }
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            sent: AtomicU64::default(),
            accepted: AtomicU64::default(),
            failed: AtomicU64::default(),
            late: AtomicU64::default(),
            refused: Mutex::default(),
            latency: Mutex::new(histogram()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_charger_gets_its_rate_and_the_fleet_is_evenly_spaced() {
        let start = Instant::now();
        // 4 chargers at 0.5 a second: the fleet sends 2 a second, one every 500 ms.
        let s = Schedule::new(start, 4, 0.5);
        let due: Vec<(Duration, usize)> = (0..8)
            .map(|k| s.nth(k))
            .map(|(at, charger)| (at - start, charger))
            .collect();
        for (k, (at, _)) in due.iter().enumerate() {
            assert_eq!(at.as_millis(), 500 * k as u128, "command {k}");
        }
        // Over the first 4 s, each charger twice and 2 s apart.
        for charger in 0..4 {
            let own: Vec<Duration> = due
                .iter()
                .filter(|(_, c)| *c == charger)
                .map(|(at, _)| *at)
                .collect();
            assert_eq!(own.len(), 2, "charger {charger}");
            assert_eq!((own[1] - own[0]).as_millis(), 2000, "charger {charger}");
        }
    }

    #[test]
    fn a_thousand_chargers_at_one_a_second_are_a_thousand_a_second() {
        let start = Instant::now();
        let s = Schedule::new(start, 1000, 1.0);
        let (at, charger) = s.nth(1000);
        assert_eq!((at - start, charger), (Duration::from_secs(1), 0));
        let in_ten_s = (0..)
            .take_while(|&k| s.nth(k).0 < start + Duration::from_secs(10))
            .count();
        assert_eq!(in_ten_s, 10_000);
        // A fractional rate: one command per charger every 4 s.
        let slow = Schedule::new(start, 10, 0.25);
        assert_eq!(slow.nth(10).0 - start, Duration::from_secs(4));
    }
}
