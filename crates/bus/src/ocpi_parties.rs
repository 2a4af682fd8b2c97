//! Records of the providers' OCPI party links on the id-tags topic (docs/ocpi.md, "Tokens"):
//! what a gateway needs to ask a party about its tokens in real time. Key `ocpi/<team id>`
//! (the team holding the provider's tags: never a tag's key, which starts with a team's
//! number), value `{"team_id":..,"tokens_url":..,"token_sealed":..}`; an empty value: the
//! team has no party a gateway can ask. The token cms calls the party with is sealed with the
//! deployment's secrets key (`sealing.rs`, bound to the record's key); without a key it is not
//! published at all, and no gateway can ask the party.

use crate::{Headers, Record, SecretsKey, Topics};
use bytes::Bytes;
use std::borrow::Cow;

/// A party's tokens SENDER endpoint and the token to call it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartyLinkEntry {
    pub tokens_url: String,
    pub token: String,
}

const PREFIX: &str = "ocpi/";

/// The record of the party of the provider whose tags `team_id` holds; `None`: none to ask.
/// `secrets`: the key the token is sealed with (without one the token is left out).
pub fn party_link_record(
    topics: &Topics,
    team_id: i64,
    link: Option<&PartyLinkEntry>,
    secrets: Option<&SecretsKey>,
) -> Record {
    let key = format!("{PREFIX}{team_id}");
    let value = match link {
        Some(link) => serde_json::json!({
            "team_id": team_id,
            "tokens_url": link.tokens_url,
            "token_sealed": secrets.map(|s| s.seal(&key, link.token.as_bytes())),
        })
        .to_string(),
        None => String::new(),
    };
    Record {
        topic: Cow::Borrowed(topics.id_tags),
        key: Bytes::from(key),
        headers: Headers::new(),
        value: Bytes::from(value),
    }
}

/// The team of a party link record and its link (`None`: none, or one whose token this
/// gateway cannot open); `None` when the record is not a party link.
pub fn party_link_entry(
    key: &[u8],
    value: &[u8],
    secrets: Option<&SecretsKey>,
) -> Option<(i64, Option<PartyLinkEntry>)> {
    let key = std::str::from_utf8(key).ok()?;
    let team_id: i64 = key.strip_prefix(PREFIX)?.parse().ok()?;
    let link = (|| {
        let value: serde_json::Value = serde_json::from_slice(value).ok()?;
        let sealed = value["token_sealed"].as_str()?;
        let token = String::from_utf8(secrets?.open(key, sealed)?).ok()?;
        Some(PartyLinkEntry {
            tokens_url: value["tokens_url"].as_str()?.to_string(),
            token,
        })
    })();
    Some((team_id, link))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id_tag_entry;

    #[test]
    fn a_party_link_opens_only_with_the_deployments_key() {
        let topics = Topics::with_prefix("t");
        let key = SecretsKey::random();
        let link = PartyLinkEntry {
            tokens_url: "https://emsp.example/ocpi/2.2.1/tokens".into(),
            token: "s3cret-token".into(),
        };
        let record = party_link_record(&topics, 7, Some(&link), Some(&key));
        assert_eq!(record.topic, "t.id-tags");
        assert_eq!(&record.key[..], b"ocpi/7");
        assert!(!String::from_utf8_lossy(&record.value).contains("s3cret"));
        let read = |secrets| party_link_entry(&record.key, &record.value, secrets);
        assert_eq!(read(Some(&key)), Some((7, Some(link.clone()))));
        let other = SecretsKey::random();
        assert_eq!(read(Some(&other)), Some((7, None)));
        assert_eq!(read(None), Some((7, None)));
        // Sealed for team 7, it does not open as another team's.
        let moved = party_link_entry(b"ocpi/8", &record.value, Some(&key));
        assert_eq!(moved, Some((8, None)));
        // Without a key the token is not published.
        let unsealed = party_link_record(&topics, 7, Some(&link), None);
        assert!(!String::from_utf8_lossy(&unsealed.value).contains("s3cret"));
        let gone = party_link_record(&topics, 7, None, Some(&key));
        assert_eq!(
            party_link_entry(&gone.key, &gone.value, Some(&key)),
            Some((7, None))
        );
        // A tag's record is no party link, and a party link no tag (what older gateways see).
        assert_eq!(party_link_entry(b"7/ABC", b"{}", Some(&key)), None);
        assert_eq!(id_tag_entry(&record.key, &record.value), None);
    }
}
