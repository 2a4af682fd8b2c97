//! What an outbox event means for a party: the pushes it makes, by event type.

pub mod commands;
pub mod locations;
pub mod sessions;

use cms_store::Store;
use cms_store::ocpi::parties::Party;
use cms_store::ocpi::pushes::{NewPush, OutboxEvent};

/// The pushes `event` makes for `party` (a registered party of the event's team).
pub async fn pushes(
    store: &Store,
    event: &OutboxEvent,
    party: &Party,
) -> cms_store::Result<Vec<NewPush>> {
    let mut pushes = locations::pushes(store, event, party).await?;
    pushes.extend(sessions::pushes(store, event, party).await?);
    pushes.extend(commands::pushes(store, event, party).await?);
    Ok(pushes)
}
