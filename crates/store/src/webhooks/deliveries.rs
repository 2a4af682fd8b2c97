//! Each event's delivery to each subscription that should have it, and its attempts.
//!
//! One dispatcher at a time (across API replicas) holds the lease on the `webhook_dispatcher`
//! row; the writes that decide what is sent (fan-out, an attempt's outcome) are fenced on still
//! holding it, as the smart-charging balancer's (docs/smart-charging.md). Fan-out turns the
//! outbox's events after the cursor into `webhook_deliveries` rows whose body is fixed once;
//! `due` hands out, per (webhook, subject), only the oldest pending delivery, so a subject's
//! events arrive in order while other subjects go on.

mod fan_out;
mod log;
mod sending;

pub use fan_out::FannedOut;
// The OCPI dispatcher reads the outbox by the same rule (crate::ocpi::dispatcher).
pub(crate) use fan_out::settled;
pub use log::{AttemptRecord, DeliveryRecord};
pub use sending::{Attempt, DueDelivery, Outcome};

use crate::lease::LeaseTable;
use crate::{Result, Store};

impl Store {
    /// Takes the dispatcher's lease for `holder` until `until` when it is free, run out at
    /// `now`, or already `holder`'s (a renewal). Whether `holder` holds it now.
    pub async fn take_webhook_lease(&self, holder: &str, now: &str, until: &str) -> Result<bool> {
        self.take_lease(LeaseTable::Webhooks, holder, now, until)
            .await
    }

    /// Lets go of the lease if `holder` has it (at shutdown), so another replica takes it at
    /// once.
    pub async fn release_webhook_lease(&self, holder: &str) -> Result<()> {
        self.release_lease(LeaseTable::Webhooks, holder).await
    }

    /// How many deliveries are pending, and how many webhooks are failing (`failing_since`
    /// set): the dispatcher's gauges.
    pub async fn webhook_delivery_gauges(&self) -> Result<(i64, i64)> {
        let pending: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'pending'")
                .fetch_one(self.db())
                .await?;
        let failing: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM webhooks WHERE failing_since IS NOT NULL")
                .fetch_one(self.db())
                .await?;
        Ok((pending, failing))
    }
}

/// The fence on a write of the dispatcher: `$n` the holder, `$n+1` the current time.
fn lease_held(n: usize) -> String {
    format!(
        "EXISTS (SELECT 1 FROM webhook_dispatcher
                 WHERE id = 1 AND holder = ${n} AND lease_until >= ${})",
        n + 1
    )
}

#[cfg(test)]
mod tests;
