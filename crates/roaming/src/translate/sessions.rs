//! The sessions module's pushes from outbox events.

use cms_store::Store;
use cms_store::ocpi::parties::Party;
use cms_store::ocpi::pushes::{NewPush, OutboxEvent};

/// The pushes `event` makes for `party`.
pub async fn pushes(
    _store: &Store,
    _event: &OutboxEvent,
    _party: &Party,
) -> cms_store::Result<Vec<NewPush>> {
    Ok(Vec::new())
}
