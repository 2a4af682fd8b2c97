//! OCPI pushes to the teams' providers (docs/ocpi.md "Delivery"): the events outbox
//! (webhook_events) is read past a cursor of its own and each event turned into the pushes it
//! means for each registered party ([`translate`]); running sessions are pushed on a timer
//! ([`running_sessions`]); the pushes are sent in order per (party, object), retried with
//! back-off, by the replica holding the lease ([`dispatcher`]).
#![forbid(unsafe_code)]

mod attempt;
pub mod client;
mod config;
pub mod dispatcher;
mod fan_out;
pub mod running_sessions;
pub mod translate;

pub use dispatcher::{DispatcherConfig, RETRY_DELAYS, run};
