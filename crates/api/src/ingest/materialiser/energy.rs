//! Thinning the readings: of a batch's MeterValues, which a newer one supersedes as the latest,
//! and which still give pricing an energy register (one a minute per connector), told from the
//! gateway's headers before anything is parsed.

use super::{HashMap, Told};
use cms_store::StateChange;
use cms_store::transaction_readings::minute;
use std::collections::hash_map::Entry;

/// The newest minute an energy reading was kept for pricing in, per charger and connector.
#[derive(Default)]
pub(super) struct EnergyKept {
    by_charger: HashMap<String, HashMap<i64, KeptEnergy>>,
}

impl EnergyKept {
    /// Which MeterValues records give an energy reading to keep for pricing, told from the
    /// gateway's headers before anything is parsed: of each connector's minute (of the
    /// readings' own clock), the batch's earliest reading, unless the store already keeps an
    /// earlier one of that minute (the store keeps a minute's earliest: see
    /// `cms_store::transaction_readings`). A record without the headers is always read. The
    /// headers' times are fixed-width RFC 3339, so text order is time order. A minute is taken
    /// only once a reading gave a register ([`EnergyKept::note`]): a message of
    /// other measurands (power, state of charge) holds it for the rest of its batch, not after.
    pub(super) fn wanted(&self, told: &[Told<'_>]) -> Vec<bool> {
        let mut wanted = vec![false; told.len()];
        // The batch's earliest reading of each connector's minute: (its time, its record).
        let mut earliest: HashMap<(&str, i64, &str), (&str, usize)> = HashMap::default();
        for (i, told) in told.iter().enumerate() {
            let (identity, connector, at) = match *told {
                Told::Other | Told::Event(_) => continue,
                Told::Reading(None) => {
                    wanted[i] = true;
                    continue;
                }
                Told::Reading(Some(key)) => key,
            };
            match earliest.entry((identity, connector, minute(at))) {
                Entry::Vacant(entry) => {
                    entry.insert((at, i));
                }
                // Ties go to the first: the store keeps it too.
                Entry::Occupied(mut entry) => {
                    if at < entry.get().0 {
                        entry.insert((at, i));
                    }
                }
            }
        }
        for ((identity, connector, minute), (at, i)) in earliest {
            let kept = self
                .by_charger
                .get(identity)
                .and_then(|connectors| connectors.get(&connector));
            wanted[i] = match kept {
                // The newest minute kept: only an earlier reading of it is worth a write.
                Some(kept) if minute == kept.minute => at < kept.at.as_str(),
                // A newer minute, or a late reading of an older one (the store decides).
                _ => true,
            };
        }
        wanted
    }

    /// The record gave a register: it is its connector's newest minute's earliest, unless it
    /// was a late one of an older minute.
    pub(super) fn note(&mut self, told: Told<'_>) {
        let Told::Reading(Some((identity, connector, at))) = told else {
            return;
        };
        let connectors = match self.by_charger.get_mut(identity) {
            Some(connectors) => connectors,
            None => self.by_charger.entry(identity.to_string()).or_default(),
        };
        let minute = minute(at);
        match connectors.get_mut(&connector) {
            Some(kept) if minute < kept.minute.as_str() => {}
            Some(kept) if minute == kept.minute.as_str() => {
                if at < kept.at.as_str() {
                    kept.at = at.to_string();
                }
            }
            _ => {
                let kept = KeptEnergy {
                    minute: minute.to_string(),
                    at: at.to_string(),
                };
                connectors.insert(connector, kept);
            }
        }
    }
}

/// Which MeterValues records of the batch a newer reading of the same connector supersedes.
/// Under load a batch holds many readings per connector and only the newest is kept, so the
/// others are skipped before their payloads are parsed: the gateway's `connector_id` and
/// `measured_at` headers tell which is newest (ties go to the later record). Records
/// without those headers are never skipped.
pub(super) fn superseded_readings(told: &[Told<'_>]) -> Vec<bool> {
    let mut superseded = vec![false; told.len()];
    let mut newest: HashMap<(&str, i64), (&str, usize)> = HashMap::default();
    for (i, told) in told.iter().enumerate() {
        let Told::Reading(Some((identity, connector, at))) = *told else {
            continue;
        };
        match newest.entry((identity, connector)) {
            Entry::Vacant(entry) => {
                entry.insert((at, i));
            }
            Entry::Occupied(mut entry) => {
                let (held_at, held) = *entry.get();
                // Same fixed-width RFC 3339 form: text order is time order.
                if at >= held_at {
                    superseded[held] = true;
                    entry.insert((at, i));
                } else {
                    superseded[i] = true;
                }
            }
        }
    }
    superseded
}

/// The newest minute (of the readings' own clock) an energy reading was kept in for a
/// connector, and the earliest reading of it kept (record time form).
struct KeptEnergy {
    minute: String,
    at: String,
}

/// A reading's energy register as a change of its own, if it has one kept for pricing.
pub(super) fn energy_only(change: StateChange) -> Option<StateChange> {
    match change {
        StateChange::MeterValue {
            identity,
            connector_id,
            energy: Some(energy),
            ..
        } => Some(StateChange::TransactionEnergy {
            identity,
            connector_id,
            energy,
        }),
        _ => None,
    }
}
