//! Records of the id-tags topic: key = `<team id>/<ID TAG>` (the tag in ASCII uppercase, as
//! chargers compare tags), value = the tag's state
//! (`{"team_id":..,"id_tag":..,"status":..,"expiry_date":..,"parent_id_tag":..}`, and for an
//! OCPI token `"ocpi":{"type":..,"whitelist":..}`); an empty value is a tombstone (the tag was
//! deleted). The same topic carries the providers' OCPI party links (`ocpi_parties.rs`).

use crate::{Headers, Record, Topics};
use bytes::Bytes;
use std::borrow::Cow;

/// OCPP 1.6 AuthorizationStatus as a team sets it on a tag (`ConcurrentTx` is the gateway's
/// own answer, never stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdTagStatus {
    Accepted,
    Blocked,
    Expired,
    Invalid,
}

impl IdTagStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            IdTagStatus::Accepted => "Accepted",
            IdTagStatus::Blocked => "Blocked",
            IdTagStatus::Expired => "Expired",
            IdTagStatus::Invalid => "Invalid",
        }
    }

    pub fn parse(text: &str) -> Option<IdTagStatus> {
        Some(match text {
            "Accepted" => IdTagStatus::Accepted,
            "Blocked" => IdTagStatus::Blocked,
            "Expired" => IdTagStatus::Expired,
            "Invalid" => IdTagStatus::Invalid,
            _ => return None,
        })
    }
}

/// A tag as gateways need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdTagEntry {
    pub team_id: i64,
    /// As the team wrote it (the key is its uppercase form).
    pub id_tag: String,
    pub status: IdTagStatus,
    /// Unix seconds; past it an Accepted tag is answered `Expired`.
    pub expiry_date: Option<i64>,
    pub parent_id_tag: Option<String>,
    /// For an OCPI token (docs/ocpi.md, "Tokens"): what tells a gateway whether to ask the
    /// token's eMSP before answering.
    pub ocpi: Option<TokenTerms>,
}

/// An OCPI token's type and whitelist, as the eMSP wrote them (`RFID`, `NEVER`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenTerms {
    pub token_type: String,
    pub whitelist: String,
}

/// The record of a tag of `team_id` whose key is `key` (uppercase); `None`: deleted.
pub fn id_tag_record(
    topics: &Topics,
    team_id: i64,
    key: &str,
    entry: Option<&IdTagEntry>,
) -> Record {
    let value = match entry {
        Some(entry) => {
            let mut value = serde_json::json!({
                "team_id": entry.team_id,
                "id_tag": entry.id_tag,
                "status": entry.status.as_str(),
                "expiry_date": entry.expiry_date,
                "parent_id_tag": entry.parent_id_tag,
            });
            if let Some(terms) = &entry.ocpi {
                value["ocpi"] =
                    serde_json::json!({"type": terms.token_type, "whitelist": terms.whitelist});
            }
            value.to_string()
        }
        None => String::new(),
    };
    Record {
        topic: Cow::Borrowed(topics.id_tags),
        key: Bytes::from(format!("{team_id}/{key}")),
        headers: Headers::new(),
        value: Bytes::from(value),
    }
}

/// The team and key of a record, and the tag's state (`None`: deleted, or unreadable).
pub fn id_tag_entry(key: &[u8], value: &[u8]) -> Option<(i64, String, Option<IdTagEntry>)> {
    let (team, tag) = std::str::from_utf8(key).ok()?.split_once('/')?;
    let team_id: i64 = team.parse().ok()?;
    let entry = (|| {
        let value: serde_json::Value = serde_json::from_slice(value).ok()?;
        Some(IdTagEntry {
            team_id,
            id_tag: value["id_tag"].as_str()?.to_string(),
            status: IdTagStatus::parse(value["status"].as_str()?)?,
            expiry_date: value["expiry_date"].as_i64(),
            parent_id_tag: value["parent_id_tag"].as_str().map(str::to_string),
            ocpi: (|| {
                let terms = &value["ocpi"];
                Some(TokenTerms {
                    token_type: terms["type"].as_str()?.to_string(),
                    whitelist: terms["whitelist"].as_str()?.to_string(),
                })
            })(),
        })
    })();
    Some((team_id, tag.to_string(), entry))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_tag_records_round_trip() {
        let topics = Topics::with_prefix("t");
        let entry = IdTagEntry {
            team_id: 7,
            id_tag: "abc-1".into(),
            status: IdTagStatus::Blocked,
            expiry_date: Some(1_800_000_000),
            parent_id_tag: Some("FLEET".into()),
            ocpi: None,
        };
        let record = id_tag_record(&topics, 7, "ABC-1", Some(&entry));
        assert_eq!(record.topic, "t.id-tags");
        assert_eq!(&record.key[..], b"7/ABC-1");
        assert_eq!(
            id_tag_entry(&record.key, &record.value),
            Some((7, "ABC-1".into(), Some(entry.clone())))
        );
        let deleted = id_tag_record(&topics, 7, "ABC-1", None);
        assert_eq!(
            id_tag_entry(&deleted.key, &deleted.value),
            Some((7, "ABC-1".into(), None))
        );
        assert_eq!(id_tag_entry(b"no-team", b""), None);
        let token = IdTagEntry {
            ocpi: Some(TokenTerms {
                token_type: "APP_USER".into(),
                whitelist: "NEVER".into(),
            }),
            ..entry
        };
        let record = id_tag_record(&topics, 7, "ABC-1", Some(&token));
        assert_eq!(
            id_tag_entry(&record.key, &record.value),
            Some((7, "ABC-1".into(), Some(token)))
        );
    }
}
