//! Thinning a batch's 2.0.1 TransactionEvent Updated records as energy.rs thins 1.6 readings:
//! a station charging sends one every few seconds, and most of a batch's are superseded by a
//! newer one of the same transaction before the store sees them. Told from the gateway's
//! headers and two substring searches, before anything is parsed.
//!
//! An Updated event changes its transaction's row only through what it carries (assembly.rs):
//! its idToken or reservationId (never thinned: the search finds them), its EVSE (kept by the
//! newest event naming the same EVSE), its energy registers (the batch's earliest of each
//! minute is read, for the start register and pricing; the newest, for the last register and
//! the EVSE's latest reading) and its time (the earliest is read). The rest are skipped.

use super::{HashMap, Told};
use cms_store::transaction_readings::minute;
use std::collections::hash_map::Entry;

/// An Updated event's place in its batch: its charger, the station's transactionId, the EVSE
/// it names (if any) and the newest sample time of its meter values (record time form).
pub(crate) type EventKey<'a> = (&'a str, &'a str, Option<&'a str>, &'a str);

/// Whether a TransactionEvent's payload carries what thinning must never skip.
pub(super) fn carries_more_than_readings(payload: &[u8]) -> bool {
    memchr::memmem::find(payload, b"\"idToken\"").is_some()
        || memchr::memmem::find(payload, b"\"reservationId\"").is_some()
}

/// What each record of the batch is read for: `None` for one that thinning does not concern
/// or that must be read whole; `Some(true)` when read only for its energy registers (a newer
/// event of its transaction is the latest); `Some(false)` when skipped.
pub(super) fn thinned_events(told: &[Told<'_>]) -> Vec<Option<bool>> {
    let mut thinned = vec![None; told.len()];
    // Per transaction (and EVSE named): the newest event; per minute: the earliest.
    let mut newest: HashMap<(&str, &str, Option<&str>), (&str, usize)> = HashMap::default();
    let mut earliest: HashMap<(&str, &str, &str), (&str, usize)> = HashMap::default();
    for (i, told) in told.iter().enumerate() {
        let Told::Event((identity, transaction, evse, at)) = *told else {
            continue;
        };
        match newest.entry((identity, transaction, evse)) {
            Entry::Vacant(entry) => {
                entry.insert((at, i));
            }
            Entry::Occupied(mut entry) => {
                // Fixed-width record times: text order is time order; ties go to the later.
                let (held_at, held) = *entry.get();
                if at >= held_at {
                    thinned[held] = Some(false);
                    entry.insert((at, i));
                } else {
                    thinned[i] = Some(false);
                }
            }
        }
        match earliest.entry((identity, transaction, minute(at))) {
            Entry::Vacant(entry) => {
                entry.insert((at, i));
            }
            Entry::Occupied(mut entry) => {
                if at < entry.get().0 {
                    entry.insert((at, i));
                }
            }
        }
    }
    // A minute's earliest is read for its registers, unless it is its transaction's newest.
    for (_, i) in earliest.into_values() {
        if thinned[i] == Some(false) {
            thinned[i] = Some(true);
        }
    }
    thinned
}
