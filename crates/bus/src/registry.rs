//! Records of the charger registry topic: key = identity, value = the charger's registration
//! (`{"identity":..,"registered":true,"password_hash":..}`); an empty value is a tombstone.

use crate::{Record, Topics};
use bytes::Bytes;
use std::borrow::Cow;

/// A charger's state in the registry, as gateways need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryState {
    Registered { password_hash: Option<String> },
    Unregistered,
}

/// The registry record of a charger.
pub fn registry_record(topics: &Topics, identity: &str, state: &RegistryState) -> Record {
    let (registered, password_hash) = match state {
        RegistryState::Registered { password_hash } => (true, password_hash.as_deref()),
        RegistryState::Unregistered => (false, None),
    };
    let value = serde_json::json!({
        "identity": identity,
        "registered": registered,
        "password_hash": password_hash,
    });
    Record {
        topic: Cow::Borrowed(topics.registry),
        key: Bytes::copy_from_slice(identity.as_bytes()),
        headers: vec![],
        value: Bytes::from(value.to_string()),
    }
}

/// The state a registry value describes; an empty or unreadable value is `Unregistered`.
pub fn registry_state(value: &[u8]) -> RegistryState {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(value) else {
        return RegistryState::Unregistered;
    };
    if value["registered"].as_bool() == Some(true) {
        RegistryState::Registered {
            password_hash: value["password_hash"].as_str().map(str::to_string),
        }
    } else {
        RegistryState::Unregistered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_records_round_trip() {
        let topics = Topics::with_prefix("t");
        for state in [
            RegistryState::Registered {
                password_hash: None,
            },
            RegistryState::Registered {
                password_hash: Some("sha256$00$11".into()),
            },
            RegistryState::Unregistered,
        ] {
            let record = registry_record(&topics, "CP-1", &state);
            assert_eq!(record.topic, "t.chargers.registry");
            assert_eq!(&record.key[..], b"CP-1");
            assert_eq!(registry_state(&record.value), state);
        }
        assert_eq!(registry_state(b""), RegistryState::Unregistered);
    }
}
