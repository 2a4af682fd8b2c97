//! How the OCPI dispatcher runs: its settings, the retry schedule, and how events become
//! pushes.

use crate::translate;
use cms_store::Store;
use cms_store::ocpi::parties::Party;
use cms_store::ocpi::pushes::{NewPush, OutboxEvent};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// The waits before each retry: the webhooks' schedule (about 27.5 h in all, each with ±20%
/// jitter); after the last, the push has failed.
pub const RETRY_DELAYS: [Duration; 7] = cms_webhooks::dispatcher::RETRY_DELAYS;

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
