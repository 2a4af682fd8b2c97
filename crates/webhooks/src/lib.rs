//! Webhook delivery (docs/events.md): events signed as the Standard Webhooks specification says
//! (`sign`), sent by a client that does not trust receivers (`client`), by one dispatcher at a
//! time across API replicas, at least once and in order per (webhook, subject) (`dispatcher`).
#![forbid(unsafe_code)]

pub mod client;
pub mod dispatcher;
pub mod sign;

pub use client::{check_url, refused_address};
pub use dispatcher::{DispatcherConfig, run};
