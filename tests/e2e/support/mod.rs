//! What every end-to-end test shares: a running `cms` ([`Cms`]), a charger speaking OCPP-J over
//! a real websocket ([`Charger`]), a REST client ([`Api`]), and small helpers to wait for the
//! eventually consistent state and to read timestamps and Prometheus text.

mod api;
pub mod broker;
pub mod central_system;
mod charger;
mod cms;
pub mod commanded;
pub mod fleet;
mod metrics;
pub mod monitoring;
pub mod ocpi;
pub mod ocpi_emsp;
pub mod payloads201;
pub mod peer;
mod process;
pub mod python;
pub mod python_script;
pub mod rest;
pub mod station;
pub mod station201;
mod time;
pub mod topic;
pub mod webhook_receiver;

pub use api::Api;
pub use charger::{Charger, Handshake};
pub use cms::{Backend, CliOutput, Cms, is_uuid};
pub use metrics::Metrics;
pub use process::run_cli;
pub use time::{assert_ocpp_time, assert_recent, assert_record_time};

use std::time::Duration;

/// Declares a test that runs against `cms up` on each store backend, as `NAME::sqlite` and
/// `NAME::postgres`: `on_both_stores!(name, |cms| { ... });` (`cms` is a mutable [`Cms`]).
macro_rules! on_both_stores {
    ($name:ident, |$cms:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test]
            async fn sqlite() {
                #[allow(unused_mut)]
                let mut $cms = $crate::support::Cms::up_on($crate::support::Backend::Sqlite)
                    .await
                    .expect("SQLite is always there");
                $body
            }

            #[tokio::test]
            async fn postgres() {
                #[allow(unused_mut)]
                let Some(mut $cms) =
                    $crate::support::Cms::up_on($crate::support::Backend::Postgres).await
                else {
                    return;
                };
                $body
            }
        }
    };
}
pub(crate) use on_both_stores;

/// How long a single answer (a CALLRESULT, an HTTP response, a close frame) may take.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the materialised state may lag behind what a charger sent.
pub const EVENTUALLY: Duration = Duration::from_secs(5);
/// How often the REST API is polled while waiting for it to catch up.
pub const POLL_EVERY: Duration = Duration::from_millis(50);

/// Polls `probe` every [`POLL_EVERY`] until it returns `Ok`, for at most [`EVENTUALLY`]; on
/// time-out the test fails with `what` and the last thing the probe saw.
pub async fn eventually<T>(what: &str, probe: impl AsyncFnMut() -> Result<T, String>) -> T {
    eventually_within(EVENTUALLY, what, probe).await
}

/// [`eventually`] with a bound of `limit` instead of [`EVENTUALLY`].
pub async fn eventually_within<T>(
    limit: Duration,
    what: &str,
    mut probe: impl AsyncFnMut() -> Result<T, String>,
) -> T {
    let deadline = tokio::time::Instant::now() + limit;
    let mut last = String::new();
    loop {
        // A probe the deadline cuts short tells nothing new: the last one that finished does.
        last = match tokio::time::timeout_at(deadline, probe()).await {
            Ok(Ok(value)) => return value,
            Ok(Err(seen)) => seen,
            Err(_) if last.is_empty() => "the probe itself did not finish".to_string(),
            Err(_) => last,
        };
        if tokio::time::Instant::now() >= deadline {
            panic!("waited {limit:?} for {what}; last seen: {last}");
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
}

/// Checks for `window` that `probe` keeps holding (it returns `Err` with what it saw when not).
pub async fn throughout(
    window: Duration,
    what: &str,
    mut probe: impl AsyncFnMut() -> Result<(), String>,
) {
    let end = tokio::time::Instant::now() + window;
    while tokio::time::Instant::now() < end {
        if let Err(seen) = probe().await {
            panic!("expected {what} to keep holding, but saw: {seen}");
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
}

/// A BootNotification payload as a real charger sends it.
pub fn boot_payload(firmware: &str) -> serde_json::Value {
    serde_json::json!({
        "chargePointVendor": "Alfen BV",
        "chargePointModel": "NG920-61001",
        "chargePointSerialNumber": "ACE0001234",
        "firmwareVersion": firmware,
    })
}
