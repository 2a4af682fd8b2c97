//! Records of the charger registry topic: key = identity, value = the charger's registration
//! (`{"identity":..,"registered":true,"password_hash":..,"security_profile":..,
//! "authorization":{"mode":"id_tags","teams":[..]},"proxy":{"vendor_role":..,"servers":[..]}}`);
//! an empty value is a tombstone.

use crate::{Headers, Record, Topics};
use bytes::Bytes;
use std::borrow::Cow;

/// What a gateway needs to know of a registered charger to let it in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// Salted hash of its Basic-auth password (security profiles 1 and 2).
    pub password_hash: Option<String>,
    /// OCPP security profile: 0 no credentials, 1 Basic auth, 2 Basic auth over TLS, 3 a
    /// client certificate over TLS.
    pub security_profile: u8,
    /// Who may charge at the charger: what Authorize and StartTransaction are answered from.
    pub authorization: SiteAuthorization,
    /// The other central systems its traffic is relayed to; `None`: none.
    pub proxy: Option<crate::ProxySetup>,
    /// The driver's price at a 2.0.1 station whose site shows prices on it
    /// (`0.36 EUR/kWh, ...`): the idTokenInfo's `personalMessage` of an accepted token.
    pub price_text: Option<String>,
    /// Where a charger of an `id_tags` site is as OCPI names it: what a real-time
    /// authorisation of a token asks about (docs/ocpi.md, "Tokens"). Boxed: most chargers
    /// have none, and every registration holds the field.
    pub ocpi_location: Option<Box<OcpiLocation>>,
}

/// A charger as OCPI names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OcpiLocation {
    /// The Location's id: the site's uuid.
    pub location_id: String,
    /// The EVSE's uid: the charger's uuid.
    pub evse_uid: String,
}

/// The authorization of a charger's site.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SiteAuthorization {
    /// Every id tag is Accepted.
    #[default]
    Open,
    /// Only the tags of these teams: the site's owner first, then the teams with access to the
    /// charger.
    IdTags { teams: std::sync::Arc<[i64]> },
}

/// A charger's state in the registry, as gateways need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryState {
    Registered(Registration),
    Unregistered,
}

/// The registry record of a charger.
pub fn registry_record(topics: &Topics, identity: &str, state: &RegistryState) -> Record {
    let value = match state {
        RegistryState::Registered(registration) => serde_json::json!({
            "identity": identity,
            "registered": true,
            "password_hash": registration.password_hash,
            "security_profile": registration.security_profile,
            "proxy": registration.proxy.as_ref().map(crate::ProxySetup::to_json),
            "price_text": registration.price_text,
            "ocpi_location": registration.ocpi_location.as_ref().map(|l| serde_json::json!({
                "location_id": l.location_id, "evse_uid": l.evse_uid,
            })),
            "authorization": match &registration.authorization {
                SiteAuthorization::Open => serde_json::json!({"mode": "open"}),
                SiteAuthorization::IdTags { teams } => {
                    serde_json::json!({"mode": "id_tags", "teams": &teams[..]})
                }
            },
        }),
        RegistryState::Unregistered => serde_json::json!({
            "identity": identity,
            "registered": false,
            "password_hash": null,
        }),
    };
    Record {
        topic: Cow::Borrowed(topics.registry),
        key: Bytes::copy_from_slice(identity.as_bytes()),
        headers: Headers::new(),
        value: Bytes::from(value.to_string()),
    }
}

/// The state a registry value describes; an empty or unreadable value is `Unregistered`. A
/// record without `security_profile` (written before profiles were recorded) has profile 1 when
/// it has a password and 0 when not, which is what it meant then.
pub fn registry_state(value: &[u8]) -> RegistryState {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(value) else {
        return RegistryState::Unregistered;
    };
    if value["registered"].as_bool() != Some(true) {
        return RegistryState::Unregistered;
    }
    let password_hash = value["password_hash"].as_str().map(str::to_string);
    let security_profile = value["security_profile"]
        .as_u64()
        .and_then(|p| u8::try_from(p).ok())
        .unwrap_or(u8::from(password_hash.is_some()));
    // Before sites had an authorization every charger was open.
    let authorization = match value["authorization"]["mode"].as_str() {
        Some("id_tags") => SiteAuthorization::IdTags {
            teams: value["authorization"]["teams"]
                .as_array()
                .map(|teams| teams.iter().filter_map(|t| t.as_i64()).collect())
                .unwrap_or_default(),
        },
        _ => SiteAuthorization::Open,
    };
    RegistryState::Registered(Registration {
        password_hash,
        security_profile,
        authorization,
        proxy: crate::ProxySetup::from_json(&value["proxy"]),
        // A record from before prices were shown on 2.0.1 stations has none.
        price_text: value["price_text"].as_str().map(str::to_string),
        ocpi_location: (|| {
            let location = &value["ocpi_location"];
            Some(Box::new(OcpiLocation {
                location_id: location["location_id"].as_str()?.to_string(),
                evse_uid: location["evse_uid"].as_str()?.to_string(),
            }))
        })(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered(password_hash: Option<&str>, security_profile: u8) -> RegistryState {
        RegistryState::Registered(Registration {
            password_hash: password_hash.map(str::to_string),
            security_profile,
            authorization: SiteAuthorization::Open,
            proxy: None,
            price_text: None,
            ocpi_location: None,
        })
    }

    #[test]
    fn registry_records_round_trip() {
        let topics = Topics::with_prefix("t");
        for state in [
            registered(None, 0),
            registered(Some("sha256$00$11"), 1),
            registered(Some("sha256$00$11"), 2),
            registered(None, 3),
            RegistryState::Registered(Registration {
                password_hash: None,
                security_profile: 0,
                authorization: SiteAuthorization::IdTags {
                    teams: vec![3, 1, 9].into(),
                },
                proxy: crate::ProxySetup::new(
                    Some("ROLE_FOLLOWER"),
                    &[("wss://up.example/ocpp".into(), "leader".into())],
                ),
                price_text: Some("0.36 EUR/kWh, 0.61 EUR per session".into()),
                ocpi_location: Some(Box::new(OcpiLocation {
                    location_id: "site-uuid".into(),
                    evse_uid: "charger-uuid".into(),
                })),
            }),
            RegistryState::Unregistered,
        ] {
            let record = registry_record(&topics, "CP-1", &state);
            assert_eq!(record.topic, "t.chargers.registry");
            assert_eq!(&record.key[..], b"CP-1");
            assert_eq!(registry_state(&record.value), state);
        }
        assert_eq!(registry_state(b""), RegistryState::Unregistered);
    }

    #[test]
    fn a_record_from_before_profiles_keeps_its_meaning() {
        let old = br#"{"identity":"CP-1","registered":true,"password_hash":"sha256$00$11"}"#;
        assert_eq!(registry_state(old), registered(Some("sha256$00$11"), 1));
        let open = br#"{"identity":"CP-1","registered":true,"password_hash":null}"#;
        assert_eq!(registry_state(open), registered(None, 0));
    }
}
