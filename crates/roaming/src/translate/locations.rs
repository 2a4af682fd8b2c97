//! The locations module's pushes from outbox events (docs/ocpi.md "Locations and tariffs"),
//! for a party whose provider the event's site is published to:
//!
//! - `connector.status_changed`, `charger.connected`, `charger.disconnected`,
//!   `charger.offline`: a `PATCH` of the EVSE's `status` and `last_updated`, when its OCPI
//!   status differs from the one last pushed to the party (`charger.offline` is `UNKNOWN`
//!   whatever the store says: a charger overdue with its heartbeat is still online there);
//! - `charger.registered` (added to the site, or moved to it): a `PUT` of the EVSE;
//! - `charger.removed` (moved away from the site): a `PUT` of the EVSE, `REMOVED`.
//!
//! The status is the charger's as the store has it when the event is read (a second or so
//! later), so a burst of changes is told once, as it ended.

#[cfg(test)]
mod tests;

use cms_ocpi::locations::{EvseStatus, evse};
use cms_store::Store;
use cms_store::ocpi::locations::pushes::{evse_put, evse_status_patch};
use cms_store::ocpi::parties::Party;
use cms_store::ocpi::pushes::{NewPush, OutboxEvent};

/// What an event means for an EVSE.
enum Change {
    Status,
    Offline,
    Registered,
    Removed,
}

/// The pushes `event` makes for `party`.
pub async fn pushes(
    store: &Store,
    event: &OutboxEvent,
    party: &Party,
) -> cms_store::Result<Vec<NewPush>> {
    let change = match event.event_type.as_str() {
        "connector.status_changed" | "charger.connected" | "charger.disconnected" => Change::Status,
        "charger.offline" => Change::Offline,
        "charger.registered" => Change::Registered,
        "charger.removed" => Change::Removed,
        _ => return Ok(Vec::new()),
    };
    let (Some(site_id), Some(charger_id)) = (event.site_id, event.charger_id) else {
        return Ok(Vec::new());
    };
    if party.endpoint("locations", "RECEIVER").is_none() {
        return Ok(Vec::new());
    }
    let Some(publication) = store.ocpi_publication(party.provider_id, site_id).await? else {
        return Ok(Vec::new());
    };
    let Some((now_at, facts)) = store.ocpi_charger_evse(charger_id).await? else {
        return Ok(Vec::new());
    };
    let (provider, cpo, site) = (
        party.provider_id,
        &publication.cpo,
        publication.site_uuid.as_str(),
    );
    let tariff = publication.tariff_uuid.as_deref();
    let mut evse = evse(cpo, &facts, tariff);
    if let Change::Removed = change {
        evse.status = EvseStatus::Removed;
        evse.last_updated = ocpi_time(&event.occurred_at, &evse.last_updated);
        return Ok(vec![evse_put(provider, cpo, site, &evse)]);
    }
    if now_at != site_id {
        // Moved away since: its charger.removed tells this site.
        return Ok(Vec::new());
    }
    if let Change::Registered = change {
        return Ok(vec![evse_put(provider, cpo, site, &evse)]);
    }
    if let Change::Offline = change {
        evse.status = EvseStatus::Unknown;
    }
    let last = (store.ocpi_last_pushed_evse_status(provider, site, &evse.uid)).await?;
    if last.as_deref() == Some(evse.status.as_str()) {
        return Ok(Vec::new());
    }
    let last_updated = ocpi_time(&event.occurred_at, &evse.last_updated);
    Ok(vec![evse_status_patch(
        provider,
        cpo,
        site,
        &evse.uid,
        evse.status,
        &last_updated,
    )])
}

/// The later of the event's time (a record time) and the EVSE's `last_updated` (OCPI's), in
/// OCPI's form.
fn ocpi_time(occurred_at: &str, last_updated: &str) -> String {
    let occurred = cms_ocpi::time::parse(occurred_at);
    let updated = cms_ocpi::time::parse(last_updated);
    match occurred.max(updated) {
        Some(t) => cms_ocpi::time::format(t),
        None => last_updated.to_string(),
    }
}
