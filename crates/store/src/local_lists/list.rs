//! A local authorization list as values: its entries, which team's tag wins a key, what a
//! charger can hold, and the next update from what it holds to what it should.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One entry of a charger's local list: OCPP's AuthorizationData, with the key it is known by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListEntry {
    /// As the owning team wrote it.
    pub id_tag: String,
    /// ASCII uppercase: chargers compare tags case-insensitively, so one key is one entry.
    pub key: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry_date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id_tag: Option<String>,
}

/// A tag of one of the teams whose tags apply to a charger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamTag {
    pub team_id: i64,
    pub entry: ListEntry,
}

/// One change of a differential update: the entry to add or replace, or the tag to remove
/// (sent without idTagInfo).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListChange {
    Upsert(ListEntry),
    Remove { id_tag: String, key: String },
}

/// A full update replaces the charger's list; a differential one changes some entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateType {
    Full,
    Differential,
}

impl UpdateType {
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateType::Full => "Full",
            UpdateType::Differential => "Differential",
        }
    }
}

/// One SendLocalList to make: what it sends, and what the charger holds once it accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListUpdate {
    pub update_type: UpdateType,
    pub version: i64,
    /// For a full update every entry is an upsert.
    pub changes: Vec<ListChange>,
    pub result: Vec<ListEntry>,
}

/// Whether `entry` lets its holder charge at `now`: Accepted and not past its expiry date (a
/// date that does not parse is taken as no date; the API accepts none such).
pub fn accepted_at(entry: &ListEntry, now: DateTime<Utc>) -> bool {
    entry.status == "Accepted"
        && entry
            .expiry_date
            .as_deref()
            .and_then(|d| DateTime::parse_from_rfc3339(d).ok())
            .is_none_or(|expiry| expiry.with_timezone(&Utc) > now)
}

/// The tags that apply to a charger, one per key, by key, from the tags of every team whose
/// tags apply (`owner_team` owns the site). Where teams share a key: the entry that is
/// Accepted and unexpired (of the lowest team id, if several), else the owner's, else the
/// lowest team id's. The gateways answer Authorize by the same rule.
pub fn resolve(mut tags: Vec<TeamTag>, owner_team: i64, now: DateTime<Utc>) -> Vec<ListEntry> {
    tags.sort_by(|a, b| (&a.entry.key, a.team_id).cmp(&(&b.entry.key, b.team_id)));
    let mut list: Vec<ListEntry> = Vec::new();
    let mut start = 0;
    while start < tags.len() {
        let key = &tags[start].entry.key;
        let end = start
            + tags[start..]
                .iter()
                .take_while(|t| &t.entry.key == key)
                .count();
        let same_key = &tags[start..end];
        let winner = same_key
            .iter()
            .find(|t| accepted_at(&t.entry, now))
            .or_else(|| same_key.iter().find(|t| t.team_id == owner_team))
            .unwrap_or(&same_key[0]);
        list.push(winner.entry.clone());
        start = end;
    }
    list
}

/// What a charger that holds at most `max_entries` can be given of `desired` (by key): when
/// it is too long, Accepted entries go first, then the others, each by key. The second value
/// says whether anything was left out.
pub fn fit(desired: Vec<ListEntry>, max_entries: Option<usize>) -> (Vec<ListEntry>, bool) {
    let Some(max) = max_entries.filter(|max| desired.len() > *max) else {
        return (desired, false);
    };
    let (mut kept, others): (Vec<ListEntry>, Vec<ListEntry>) =
        desired.into_iter().partition(|e| e.status == "Accepted");
    kept.extend(others);
    kept.truncate(max);
    kept.sort_by(|a, b| a.key.cmp(&b.key));
    (kept, true)
}

/// The changes from `held` to `desired` (both by key): removals first, so that a list sent in
/// several parts never holds more than the larger of the two, then additions and changes.
pub fn diff(held: &[ListEntry], desired: &[ListEntry]) -> Vec<ListChange> {
    let mut removals = Vec::new();
    let mut upserts = Vec::new();
    let (mut h, mut d) = (0, 0);
    while h < held.len() || d < desired.len() {
        let order = match (held.get(h), desired.get(d)) {
            (Some(a), Some(b)) => a.key.cmp(&b.key),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Less => {
                removals.push(ListChange::Remove {
                    id_tag: held[h].id_tag.clone(),
                    key: held[h].key.clone(),
                });
                h += 1;
            }
            std::cmp::Ordering::Greater => {
                upserts.push(ListChange::Upsert(desired[d].clone()));
                d += 1;
            }
            std::cmp::Ordering::Equal => {
                if held[h] != desired[d] {
                    upserts.push(ListChange::Upsert(desired[d].clone()));
                }
                h += 1;
                d += 1;
            }
        }
    }
    removals.extend(upserts);
    removals
}

/// `held` with `changes` made, by key.
pub fn apply(held: &[ListEntry], changes: &[ListChange]) -> Vec<ListEntry> {
    let mut list: std::collections::BTreeMap<String, ListEntry> =
        held.iter().map(|e| (e.key.clone(), e.clone())).collect();
    for change in changes {
        match change {
            ListChange::Upsert(entry) => {
                list.insert(entry.key.clone(), entry.clone());
            }
            ListChange::Remove { key, .. } => {
                list.remove(key);
            }
        }
    }
    list.into_values().collect()
}

/// The next SendLocalList to bring a charger holding `held` (at `version`) to `desired`, in
/// parts of at most `max_send` entries; `None` when it holds it already. A full update sends
/// the first part of `desired` (the rest follow as differential updates).
pub fn next_update(
    held: &[ListEntry],
    version: i64,
    needs_full: bool,
    desired: &[ListEntry],
    max_send: Option<usize>,
) -> Option<ListUpdate> {
    let part = max_send.unwrap_or(usize::MAX).max(1);
    if needs_full {
        let result: Vec<ListEntry> = desired.iter().take(part).cloned().collect();
        return Some(ListUpdate {
            update_type: UpdateType::Full,
            version: version + 1,
            changes: result.iter().cloned().map(ListChange::Upsert).collect(),
            result,
        });
    }
    let mut changes = diff(held, desired);
    if changes.is_empty() {
        return None;
    }
    changes.truncate(part);
    Some(ListUpdate {
        update_type: UpdateType::Differential,
        version: version + 1,
        result: apply(held, &changes),
        changes,
    })
}
