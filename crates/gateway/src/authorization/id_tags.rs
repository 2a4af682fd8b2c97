//! The teams' id tags in memory: what a gateway answers Authorize from. Keys and tags are held
//! inline ([`ShortTag`]), so a tag costs its map entry and nothing on the heap.

use super::short_tag::ShortTag;
use super::{Verdict, effective_status};
use crate::follow::Materialised;
use chrono::{DateTime, Utc};
use cms_bus::{IdTagEntry, IdTagStatus, Message, id_tag_entry};
use dashmap::DashMap;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct TagKey {
    team_id: i64,
    /// The tag in ASCII uppercase.
    tag: ShortTag,
}

#[derive(Clone, Copy)]
struct Tag {
    status: IdTagStatus,
    /// Unix seconds.
    expiry: Option<i64>,
    parent: Option<ShortTag>,
}

#[derive(Default)]
pub struct IdTagDirectory {
    tags: DashMap<TagKey, Tag>,
    /// False until the tags known at start are loaded: a gateway is not ready before.
    caught_up: AtomicBool,
}

impl IdTagDirectory {
    /// Sets the tag `key` (uppercase) of `team_id` as it is now; `None`: deleted. A tag longer
    /// than OCPP allows cannot be presented by a charger and is not held.
    pub fn apply(&self, team_id: i64, key: &str, entry: Option<&IdTagEntry>) {
        let Some(tag) = ShortTag::upper(key) else {
            return;
        };
        let key = TagKey { team_id, tag };
        match entry {
            Some(entry) => {
                let parent = entry.parent_id_tag.as_deref().and_then(ShortTag::new);
                let tag = Tag {
                    status: entry.status,
                    expiry: entry.expiry_date,
                    parent,
                };
                self.tags.insert(key, tag);
            }
            None => {
                self.tags.remove(&key);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.tags.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tags.is_empty()
    }

    pub fn set_caught_up(&self) {
        self.caught_up.store(true, Ordering::Release);
    }

    pub fn is_caught_up(&self) -> bool {
        self.caught_up.load(Ordering::Acquire)
    }

    /// Applies one record of the id-tags topic.
    pub fn apply_record(&self, message: &Message) {
        if let Some((team_id, key, entry)) =
            id_tag_entry(&message.record.key, &message.record.value)
        {
            self.apply(team_id, &key, entry.as_ref());
        }
    }

    /// The verdict on `id_tag` among the tags of `teams` (the site's owner first). A tag
    /// several teams hold: Accepted (and unexpired) by any of them wins, from the lowest team
    /// id; otherwise the owner's word; otherwise the lowest team id's. Unknown: Invalid.
    pub fn verdict(&self, teams: &[i64], id_tag: &str, now: DateTime<Utc>) -> Verdict {
        let Some(tag) = ShortTag::upper(id_tag) else {
            return Verdict::INVALID;
        };
        let found = |team_id: i64| {
            let held = self.tags.get(&TagKey { team_id, tag })?;
            Some((team_id, *held))
        };
        let mut held: Vec<(i64, Tag)> = teams.iter().filter_map(|t| found(*t)).collect();
        held.sort_by_key(|(team, _)| *team);
        let accepted = held
            .iter()
            .find(|(_, t)| effective_status(t.status, t.expiry, now) == "Accepted");
        let owner = teams
            .first()
            .and_then(|o| held.iter().find(|(t, _)| t == o));
        let Some((_, tag)) = accepted.or(owner).or(held.first()) else {
            return Verdict::INVALID;
        };
        Verdict {
            status: effective_status(tag.status, tag.expiry, now),
            expiry_date: tag.expiry.and_then(|e| DateTime::from_timestamp(e, 0)),
            parent_id_tag: tag.parent.map(|p| p.as_str().to_string()),
        }
    }
}

impl Materialised for IdTagDirectory {
    const WHAT: &'static str = "id tags";

    fn apply(&self, message: &Message) {
        self.apply_record(message);
    }

    fn entries(&self) -> usize {
        IdTagDirectory::len(self)
    }

    fn set_caught_up(&self) {
        IdTagDirectory::set_caught_up(self);
    }

    fn is_caught_up(&self) -> bool {
        IdTagDirectory::is_caught_up(self)
    }
}
