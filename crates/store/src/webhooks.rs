//! Webhooks (docs/events.md): a team's subscriptions (`subscriptions`), the outbox of events
//! written in the same transaction as the change that caused them (`outbox`), and each event's
//! delivery to each subscription that should have it, with its attempts (`deliveries`).

pub mod deliveries;
pub mod outbox;
pub mod subscriptions;

/// The event types a subscription may ask for (docs/events.md), version 1 of each payload.
pub const EVENT_TYPES: &[&str] = &[
    "charger.connected",
    "charger.disconnected",
    "charger.offline",
    "charger.booted",
    "charger.faulted",
    "connector.status_changed",
    "transaction.started",
    "transaction.ended",
    "action.finished",
    "id_tag.refused",
    "site.limit_exceeded",
    "charger.registered",
    "charger.removed",
];

/// The version of the events' payloads (`version` in each event).
pub const EVENTS_VERSION: u32 = 1;
