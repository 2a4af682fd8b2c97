//! Thinning a batch's 2.0.1 TransactionEvent Updated records as energy.rs thins 1.6 readings:
//! a station charging sends one every few seconds, and most of a batch's are superseded by a
//! newer one of the same transaction before the store sees them. Told from the gateway's
//! headers and two substring searches, before anything is parsed.
//!
//! An Updated event changes its transaction's row only through what it carries (assembly.rs):
//! its idToken or reservationId (never thinned: the search finds them), its EVSE (kept by the
//! newest event naming the same EVSE), its energy registers (the batch's earliest of each
//! minute is read, for the start register and pricing; the newest, for the last register and
//! the EVSE's latest reading) and its time (the earliest is read). The rest are skipped, and so
//! is a minute's earliest when an earlier batch read an earlier one of that minute.

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

/// Running transactions remembered at most: past it the memory starts again (a transaction
/// whose Ended never came is forgotten; the cost is a minute read twice).
const REMEMBERED: usize = 200_000;

/// The newest minute whose registers were read, and its earliest reading read (record time
/// form), per station transaction: as `EnergyKept` is per 1.6 connector.
#[derive(Default)]
pub(super) struct MinutesRead {
    by_charger: HashMap<String, HashMap<String, (String, String)>>,
    transactions: usize,
}

impl MinutesRead {
    /// Whether the batch's earliest event of its minute is worth reading for its registers.
    fn wanted(&self, identity: &str, transaction: &str, at: &str) -> bool {
        let read = self
            .by_charger
            .get(identity)
            .and_then(|transactions| transactions.get(transaction));
        match read {
            // The newest minute read: only an earlier reading of it is news.
            Some((minute_read, read_at)) if minute(at) == minute_read => at < read_at.as_str(),
            // A newer minute, or a late event of an older one (the store decides).
            _ => true,
        }
    }

    /// An event of the transaction gave registers, its newest sample at `at`.
    pub(super) fn note(&mut self, identity: &str, transaction: &str, at: &str) {
        if self.transactions >= REMEMBERED {
            *self = MinutesRead::default();
        }
        let transactions = match self.by_charger.get_mut(identity) {
            Some(transactions) => transactions,
            None => self.by_charger.entry(identity.to_string()).or_default(),
        };
        let minute = minute(at);
        match transactions.get_mut(transaction) {
            Some((minute_read, _)) if minute < minute_read.as_str() => {}
            Some((minute_read, read_at)) if minute == minute_read.as_str() => {
                if at < read_at.as_str() {
                    *read_at = at.to_string();
                }
            }
            Some(read) => *read = (minute.to_string(), at.to_string()),
            None => {
                transactions.insert(
                    transaction.to_string(),
                    (minute.to_string(), at.to_string()),
                );
                self.transactions += 1;
            }
        }
    }

    /// The transaction ended: nothing more of it is thinned by memory.
    pub(super) fn forget(&mut self, identity: &str, transaction: &str) {
        let Some(transactions) = self.by_charger.get_mut(identity) else {
            return;
        };
        if transactions.remove(transaction).is_some() {
            self.transactions -= 1;
        }
        if transactions.is_empty() {
            self.by_charger.remove(identity);
        }
    }
}

/// What each record of the batch is read for: `None` for one that thinning does not concern
/// or that must be read whole; `Some(true)` when read only for its energy registers (a newer
/// event of its transaction is the latest); `Some(false)` when skipped.
pub(super) fn thinned_events(told: &[Told<'_>], read: &MinutesRead) -> Vec<Option<bool>> {
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
    // A minute's earliest is read for its registers, unless it is its transaction's newest
    // (read whole anyway) or an earlier batch read an earlier one of the minute.
    for ((identity, transaction, _), (at, i)) in earliest {
        if thinned[i] == Some(false) && read.wanted(identity, transaction, at) {
            thinned[i] = Some(true);
        }
    }
    thinned
}
