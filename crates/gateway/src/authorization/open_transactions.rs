//! The transactions this gateway saw start and not yet stop, by tag: enough to answer
//! ConcurrentTx for a tag that is charging at another charger. A gateway knows only its own
//! chargers; a tag charging behind another gateway is not seen (documented).

use super::short_tag::ShortTag;
use dashmap::DashMap;
use std::time::{Duration, Instant};

/// How long a transaction counts as open without a StopTransaction seen here: its stop may have
/// gone to another gateway (the charger moved) or been lost, and a tag must not be refused as
/// concurrent forever for it. Longer than any charging session.
const OPEN_AT_MOST: Duration = Duration::from_secs(24 * 3600);

#[derive(Default)]
pub struct OpenTransactions {
    /// Per charger: (connector, transactionId, tag) of each open transaction. A charger has a
    /// handful of connectors, so a small vector.
    by_charger: DashMap<Box<str>, Vec<(u32, i32, ShortTag)>>,
    /// Per tag: the chargers it is charging at, since when.
    by_tag: DashMap<ShortTag, Vec<(Box<str>, Instant)>>,
}

impl OpenTransactions {
    /// A transaction started; one still noted on the same connector ended unseen (its
    /// StopTransaction went to another gateway, or was lost) and is forgotten.
    pub fn started(&self, tag: ShortTag, identity: &str, connector: u32, transaction_id: i32) {
        let replaced = {
            let mut open = self.by_charger.entry(identity.into()).or_default();
            let replaced = open.iter().position(|(c, _, _)| *c == connector);
            let replaced = replaced.map(|i| open.swap_remove(i).2);
            open.push((connector, transaction_id, tag));
            replaced
        };
        if let Some(old) = replaced {
            self.forget(old, identity);
        }
        let at = Instant::now();
        self.by_tag
            .entry(tag)
            .or_default()
            .push((identity.into(), at));
    }

    pub fn stopped(&self, identity: &str, transaction_id: i32) {
        let stopped = self.by_charger.get_mut(identity).and_then(|mut open| {
            let i = open.iter().position(|(_, t, _)| *t == transaction_id)?;
            Some(open.swap_remove(i).2)
        });
        self.by_charger
            .remove_if(identity, |_, open| open.is_empty());
        if let Some(tag) = stopped {
            self.forget(tag, identity);
        }
    }

    /// The transaction `from` of `identity` is known to the charger as `to` (its leader proxy
    /// server numbered it).
    pub fn renumber(&self, identity: &str, from: i32, to: i32) {
        if let Some(mut open) = self.by_charger.get_mut(identity)
            && let Some(entry) = open.iter_mut().find(|(_, t, _)| *t == from)
        {
            entry.1 = to;
        }
    }

    /// Whether `tag` is charging at a charger other than `identity`.
    pub fn elsewhere(&self, tag: ShortTag, identity: &str) -> bool {
        self.by_tag.get(&tag).is_some_and(|at| {
            at.iter()
                .any(|(i, since)| &**i != identity && since.elapsed() < OPEN_AT_MOST)
        })
    }

    fn forget(&self, tag: ShortTag, identity: &str) {
        if let Some(mut at) = self.by_tag.get_mut(&tag)
            && let Some(i) = at.iter().position(|(i, _)| &**i == identity)
        {
            at.swap_remove(i);
        }
        self.by_tag.remove_if(&tag, |_, at| at.is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(text: &str) -> ShortTag {
        ShortTag::upper(text).unwrap()
    }

    #[test]
    fn a_tag_is_elsewhere_until_its_transaction_stops() {
        let open = OpenTransactions::default();
        open.started(tag("card"), "CP-1", 1, 100);
        assert!(open.elsewhere(tag("CARD"), "CP-2"));
        assert!(!open.elsewhere(tag("card"), "CP-1"), "its own charger");
        assert!(!open.elsewhere(tag("other"), "CP-2"));
        open.stopped("CP-1", 100);
        assert!(!open.elsewhere(tag("card"), "CP-2"));
        assert!(open.by_charger.is_empty() && open.by_tag.is_empty());
    }

    #[test]
    fn a_new_start_on_a_connector_ends_the_one_never_stopped() {
        let open = OpenTransactions::default();
        open.started(tag("first"), "CP-1", 1, 100);
        open.started(tag("second"), "CP-1", 1, 101);
        assert!(!open.elsewhere(tag("first"), "CP-2"));
        assert!(open.elsewhere(tag("second"), "CP-2"));
        open.stopped("CP-1", 999);
        assert!(
            open.elsewhere(tag("second"), "CP-2"),
            "an unknown stop changes nothing"
        );
    }

    #[test]
    fn a_transaction_renumbered_by_the_leader_stops_under_its_new_number() {
        let open = OpenTransactions::default();
        open.started(tag("card"), "CP-1", 1, 100);
        open.renumber("CP-1", 100, 9001);
        open.stopped("CP-1", 100);
        assert!(
            open.elsewhere(tag("card"), "CP-2"),
            "100 is no longer its number"
        );
        open.stopped("CP-1", 9001);
        assert!(!open.elsewhere(tag("card"), "CP-2"));
    }
}
