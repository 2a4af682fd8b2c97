//! Fan-out: each event past the cursor becomes, for each registered party of the event's team,
//! the pushes the translators make of it; they are written with the cursor moved past the
//! events in one transaction, fenced on the lease and on the cursor not having moved.

use crate::config::DispatcherConfig;
use chrono::Utc;
use cms_store::{Store, format_record_time};

/// Fan-out reads at most this many events a round.
const BATCH: i64 = 500;

/// Fans out every settled event past the cursor, a batch at a time. A translation the store
/// fails leaves the cursor where it was: the batch is read again at the next turn.
pub(crate) async fn fan_out(store: &Store, config: &DispatcherConfig) {
    loop {
        let now = format_record_time(Utc::now());
        let read = match store
            .ocpi_events_past_cursor(&config.node, &now, BATCH)
            .await
        {
            Ok(Some(read)) => read,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "OCPI dispatcher: cannot read the outbox");
                return;
            }
        };
        if read.events.is_empty() {
            return;
        }
        let parties = match store.ocpi_registered_parties().await {
            Ok(parties) => parties,
            Err(error) => {
                tracing::warn!(%error, "OCPI dispatcher: cannot read the parties");
                return;
            }
        };
        let mut pushes = Vec::new();
        for event in &read.events {
            let recipients = parties.iter().filter(|p| event.team_id == Some(p.team_id));
            for party in recipients {
                match (config.translate)(store, event, party).await {
                    Ok(made) => pushes.extend(made),
                    Err(error) => {
                        tracing::warn!(%error, seq = event.seq, provider = %party.provider_uuid,
                            "OCPI dispatcher: cannot translate an event; tried again");
                        return;
                    }
                }
            }
        }
        match store.ocpi_fan_out(&config.node, &now, &read, &pushes).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(error) => {
                tracing::warn!(%error, "OCPI dispatcher: cannot write the events' pushes");
                return;
            }
        }
        if read.read < BATCH as usize {
            return;
        }
    }
}
