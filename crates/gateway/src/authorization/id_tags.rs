//! The teams' id tags in memory: what a gateway answers Authorize from. Keys and tags are held
//! inline ([`ShortTag`]), so a tag costs its map entry and nothing on the heap. OCPI tokens
//! whose whitelist asks their eMSP in real time (docs/ocpi.md, "Tokens") are noted apart, with
//! the providers' party links: few, and no cost to the other tags.

use super::short_tag::ShortTag;
use super::{Verdict, effective_status};
use crate::follow::Materialised;
use chrono::{DateTime, Utc};
use cms_bus::{
    IdTagEntry, IdTagStatus, Message, PartyLinkEntry, SecretsKey, id_tag_entry, party_link_entry,
};
use cms_ocpi::tokens::{TokenType, WhitelistType};
use dashmap::DashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct TagKey {
    team_id: i64,
    /// The tag in ASCII uppercase.
    tag: ShortTag,
}

/// 32 bytes, so that a key and its tag fill 64: no `Option`s, which would cost 16 more.
#[derive(Clone, Copy)]
struct Tag {
    /// Unix seconds; [`NEVER`] when the tag does not expire.
    expiry: i64,
    /// Empty when the tag has none (an OCPP tag has at least one character).
    parent: ShortTag,
    status: IdTagStatus,
}

const NEVER: i64 = i64::MAX;

impl Tag {
    fn expiry(&self) -> Option<i64> {
        (self.expiry != NEVER).then_some(self.expiry)
    }

    fn parent(&self) -> Option<&str> {
        Some(self.parent.as_str()).filter(|p| !p.is_empty())
    }

    fn status_at(&self, now: DateTime<Utc>) -> &'static str {
        effective_status(self.status, self.expiry(), now)
    }
}

#[derive(Default)]
pub struct IdTagDirectory {
    tags: DashMap<TagKey, Tag>,
    /// The tags that are OCPI tokens whose eMSP is asked before each Authorize.
    real_time: DashMap<TagKey, RealTimeToken>,
    /// The party links of the teams holding providers' tags: where and how to ask.
    parties: DashMap<i64, Arc<PartyLinkEntry>>,
    /// Opens the party links' tokens on the id-tags topic (`cms gateway`'s `--secrets-key`).
    secrets: Option<SecretsKey>,
    /// False until the tags known at start are loaded: a gateway is not ready before.
    caught_up: AtomicBool,
}

/// An OCPI token asked about in real time: its uid as the eMSP wrote it, type and whitelist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealTimeToken {
    pub uid: Box<str>,
    pub token_type: TokenType,
    pub whitelist: WhitelistType,
}

/// The tag a verdict came from, when its eMSP is to be asked: the token and its party's link
/// (`None` when the gateway knows none it can use).
#[derive(Debug, Clone)]
pub struct TokenToAsk {
    pub token: RealTimeToken,
    pub party: Option<Arc<PartyLinkEntry>>,
}

impl IdTagDirectory {
    /// A directory that opens the party links' tokens with `secrets` (`cms gateway`: they
    /// arrive sealed on the id-tags topic).
    pub fn opening_with(secrets: Option<SecretsKey>) -> IdTagDirectory {
        IdTagDirectory {
            secrets,
            ..IdTagDirectory::default()
        }
    }

    /// Sets the tag `key` (uppercase) of `team_id` as it is now; `None`: deleted. A tag longer
    /// than OCPP allows cannot be presented by a charger and is not held.
    pub fn apply(&self, team_id: i64, key: &str, entry: Option<&IdTagEntry>) {
        let Some(tag) = ShortTag::upper(key) else {
            return;
        };
        let key = TagKey { team_id, tag };
        match real_time_token(entry) {
            Some(token) => {
                self.real_time.insert(key, token);
            }
            None => {
                self.real_time.remove(&key);
            }
        }
        match entry {
            Some(entry) => {
                let parent = entry.parent_id_tag.as_deref().and_then(ShortTag::new);
                let tag = Tag {
                    status: entry.status,
                    expiry: entry.expiry_date.unwrap_or(NEVER),
                    parent: parent.unwrap_or(ShortTag::EMPTY),
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

    /// Sets the party link of the provider whose tags `team_id` holds; `None`: none.
    pub fn apply_party(&self, team_id: i64, link: Option<PartyLinkEntry>) {
        match link {
            Some(link) => {
                self.parties.insert(team_id, Arc::new(link));
            }
            None => {
                self.parties.remove(&team_id);
            }
        }
    }

    /// Applies one record of the id-tags topic: a tag, or a party link.
    pub fn apply_record(&self, message: &Message) {
        let (key, value) = (&message.record.key, &message.record.value);
        if let Some((team_id, link)) = party_link_entry(key, value, self.secrets.as_ref()) {
            return self.apply_party(team_id, link);
        }
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
        self.decide(teams, id_tag, now).0
    }

    /// [`IdTagDirectory::verdict`], and the token to ask its eMSP about when the tag the verdict
    /// came from is an OCPI token whose whitelist asks in real time.
    pub fn decide(
        &self,
        teams: &[i64],
        id_tag: &str,
        now: DateTime<Utc>,
    ) -> (Verdict, Option<TokenToAsk>) {
        let Some(tag) = ShortTag::upper(id_tag) else {
            return (Verdict::INVALID, None);
        };
        let mut accepted: Option<(i64, Tag)> = None;
        let mut owners: Option<Tag> = None;
        let mut lowest: Option<(i64, Tag)> = None;
        for &team_id in teams {
            let Some(held) = self.tags.get(&TagKey { team_id, tag }).map(|t| *t) else {
                continue;
            };
            let lower = |best: &Option<(i64, Tag)>| best.is_none_or(|(t, _)| team_id < t);
            if held.status_at(now) == "Accepted" && lower(&accepted) {
                accepted = Some((team_id, held));
            }
            if lower(&lowest) {
                lowest = Some((team_id, held));
            }
            if Some(&team_id) == teams.first() {
                owners = Some(held);
            }
        }
        let chosen = accepted.or(owners.map(|t| (teams[0], t))).or(lowest);
        let Some((team_id, held)) = chosen else {
            return (Verdict::INVALID, None);
        };
        let verdict = Verdict {
            status: held.status_at(now),
            expiry_date: held.expiry().and_then(|e| DateTime::from_timestamp(e, 0)),
            parent_id_tag: held.parent().map(str::to_string),
        };
        let ask = (self.real_time.get(&TagKey { team_id, tag })).map(|token| TokenToAsk {
            token: token.clone(),
            party: self.parties.get(&team_id).map(|p| p.clone()),
        });
        (verdict, ask)
    }
}

/// The token an entry is, when its whitelist asks its eMSP in real time.
fn real_time_token(entry: Option<&IdTagEntry>) -> Option<RealTimeToken> {
    let entry = entry?;
    let terms = entry.ocpi.as_ref()?;
    let whitelist = WhitelistType::parse(&terms.whitelist)?;
    whitelist.asks_in_real_time().then(|| RealTimeToken {
        uid: entry.id_tag.as_str().into(),
        // A type this gateway does not know is asked about as the spec's default.
        token_type: TokenType::parse(&terms.token_type).unwrap_or(TokenType::Rfid),
        whitelist,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_and_its_key_fill_64_bytes() {
        // What a million tags cost a gateway rests on this (docs/performance.md).
        assert_eq!(std::mem::size_of::<(TagKey, Tag)>(), 64);
    }
}
