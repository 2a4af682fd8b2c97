//! The locations module's objects (2.2.1 "Locations"): Location, EVSE and Connector, and how
//! cms's site, chargers and connectors become them (docs/ocpi.md "Locations and tariffs"): a
//! site is a Location (its uuid the id), a charger an EVSE (its uuid the uid), a connector a
//! Connector (its number the id). The store gathers the facts ([`LocationFacts`]); this maps
//! them, without I/O.

mod checks;
pub mod connectors;
mod countries;
pub mod status;
#[cfg(test)]
mod tests;

pub use checks::{FACILITIES, PARKING_TYPES, hours_problems, is_latitude, is_longitude};
pub use status::EvseStatus;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What an EVSE can do, for every charger: cms starts and stops sessions, reserves and unlocks
/// through OCPP on any charger, and a charger takes RFID cards (docs/ocpi.md).
pub const CAPABILITIES: [&str; 4] = [
    "RFID_READER",
    "REMOTE_START_STOP_CAPABLE",
    "RESERVABLE",
    "UNLOCK_CAPABLE",
];

/// A Location as cms publishes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Location {
    pub country_code: String,
    pub party_id: String,
    pub id: String,
    pub publish: bool,
    pub name: String,
    pub address: String,
    pub city: String,
    pub postal_code: String,
    pub country: String,
    pub coordinates: GeoLocation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parking_type: Option<String>,
    #[serde(default)]
    pub evses: Vec<Evse>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<BusinessDetails>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facilities: Vec<String>,
    pub time_zone: String,
    pub opening_times: Value,
    pub last_updated: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeoLocation {
    pub latitude: String,
    pub longitude: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusinessDetails {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website: Option<String>,
}

/// An EVSE: one charger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evse {
    pub uid: String,
    pub evse_id: String,
    pub status: EvseStatus,
    pub capabilities: Vec<String>,
    pub connectors: Vec<Connector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_reference: Option<String>,
    pub last_updated: String,
}

/// A Connector: one connector of a charger (a 2.0.1 station's EVSE).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connector {
    pub id: String,
    pub standard: String,
    pub format: String,
    pub power_type: String,
    pub max_voltage: i64,
    pub max_amperage: i64,
    pub max_electric_power: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tariff_ids: Vec<String>,
    pub last_updated: String,
}

/// The team as a CPO (its `ocpi_cpo` row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpoFacts {
    pub country_code: String,
    pub party_id: String,
    pub name: String,
    pub website: Option<String>,
}

/// A site with its roaming settings, as the store keeps them.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteFacts {
    pub uuid: String,
    pub name: String,
    pub street: String,
    pub house_number: i64,
    pub house_number_addition: Option<String>,
    pub postal_code: String,
    pub city: String,
    /// As cms keeps it: ISO 3166-1 alpha-2.
    pub country: String,
    /// An IANA name.
    pub time_zone: String,
    pub latitude: String,
    pub longitude: String,
    pub parking_type: Option<String>,
    pub facilities: Vec<String>,
    /// An OCPI Hours object; `None`: open 24/7.
    pub opening_times: Option<Value>,
    /// The newest change of anything the Location shows (a record time).
    pub last_updated: String,
}

/// A charger with its connectors, as the store keeps them.
#[derive(Debug, Clone, PartialEq)]
pub struct EvseFacts {
    pub uuid: String,
    pub identity: String,
    pub reference: Option<String>,
    /// `never_seen`, `online` or `offline`.
    pub connection_status: String,
    /// Its charger-wide status (1.6 connector 0).
    pub charger_status: Option<String>,
    /// Its maximum current (A), if set.
    pub max_current: Option<f64>,
    pub connectors: Vec<ConnectorFacts>,
    /// The newest change of the charger or its connectors (a record time).
    pub last_updated: String,
}

/// A connector as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorFacts {
    pub connector_id: i64,
    /// OCPP 1.6's status (a 2.0.1 station's kept mapped into it).
    pub status: String,
    pub standard: Option<String>,
    pub format: Option<String>,
    pub power_type: Option<String>,
    pub max_voltage: Option<i64>,
    pub max_amperage: Option<i64>,
    pub updated_at: String,
}

/// Everything one party's Location of a site is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct LocationFacts {
    pub cpo: CpoFacts,
    pub site: SiteFacts,
    /// The tariff that prices the party's drivers here (the provider's, else the site's).
    pub tariff_uuid: Option<String>,
    pub evses: Vec<EvseFacts>,
}

/// The Location of `facts`.
pub fn location(facts: &LocationFacts) -> Location {
    let site = &facts.site;
    let tariff = facts.tariff_uuid.as_deref();
    let addition = site.house_number_addition.as_deref().unwrap_or("");
    Location {
        country_code: facts.cpo.country_code.clone(),
        party_id: facts.cpo.party_id.clone(),
        id: site.uuid.clone(),
        publish: true,
        name: cut(&site.name, 255),
        address: cut(
            &format!("{} {}{addition}", site.street, site.house_number),
            45,
        ),
        city: cut(&site.city, 45),
        postal_code: cut(&site.postal_code, 10),
        country: alpha_3(&site.country),
        coordinates: GeoLocation {
            latitude: site.latitude.clone(),
            longitude: site.longitude.clone(),
        },
        parking_type: site.parking_type.clone(),
        evses: (facts.evses.iter())
            .map(|e| evse(&facts.cpo, e, tariff))
            .collect(),
        operator: Some(BusinessDetails {
            name: cut(&facts.cpo.name, 100),
            website: facts.cpo.website.clone(),
        }),
        facilities: site.facilities.clone(),
        time_zone: site.time_zone.clone(),
        opening_times: (site.opening_times.clone())
            .unwrap_or_else(|| serde_json::json!({"twentyfourseven": true})),
        last_updated: ocpi_time(&site.last_updated),
    }
}

/// The EVSE of a charger, its connectors priced by `tariff`.
pub fn evse(cpo: &CpoFacts, facts: &EvseFacts, tariff: Option<&str>) -> Evse {
    let statuses: Vec<&str> = (facts.connectors.iter())
        .filter(|c| c.connector_id > 0)
        .map(|c| c.status.as_str())
        .collect();
    let status = status::of_charger(
        &facts.connection_status,
        facts.charger_status.as_deref(),
        &statuses,
    );
    let mut connectors: Vec<Connector> = (facts.connectors.iter())
        .filter(|c| c.connector_id > 0)
        .map(|c| connector(c, facts.max_current, tariff))
        .collect();
    if connectors.is_empty() {
        // OCPI wants one connector at least: a charger that has not told its connectors yet
        // shows one of the defaults until it does.
        let unknown = ConnectorFacts {
            connector_id: 1,
            status: String::new(),
            standard: None,
            format: None,
            power_type: None,
            max_voltage: None,
            max_amperage: None,
            updated_at: facts.last_updated.clone(),
        };
        connectors.push(connector(&unknown, facts.max_current, tariff));
    }
    Evse {
        uid: facts.uuid.clone(),
        evse_id: evse_id(
            &cpo.country_code,
            &cpo.party_id,
            &facts.identity,
            &facts.uuid,
        ),
        status,
        capabilities: CAPABILITIES.iter().map(|c| c.to_string()).collect(),
        connectors,
        physical_reference: (facts.reference.as_deref())
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(|r| cut(r, 16)),
        last_updated: ocpi_time(&facts.last_updated),
    }
}

fn connector(facts: &ConnectorFacts, charger_max: Option<f64>, tariff: Option<&str>) -> Connector {
    let power_type = connectors::power_type(facts.power_type.as_deref());
    let max_voltage = connectors::max_voltage(facts.max_voltage, power_type);
    let max_amperage = connectors::max_amperage(facts.max_amperage, charger_max, power_type);
    Connector {
        id: facts.connector_id.to_string(),
        standard: connectors::standard(facts.standard.as_deref(), power_type).into(),
        format: connectors::format(facts.format.as_deref(), power_type).into(),
        power_type: power_type.into(),
        max_voltage,
        max_amperage,
        max_electric_power: connectors::max_electric_power(max_voltage, max_amperage, power_type),
        tariff_ids: tariff.map(str::to_string).into_iter().collect(),
        last_updated: ocpi_time(&facts.updated_at),
    }
}

/// The EVSE's eMI3 id: `{country}*{party}*E{identity}`, the identity in capitals with every
/// character outside A-Z and 0-9 dropped (the charger's uuid's when none is left), cut so
/// that the whole is at most 48 characters (OCPI's limit).
pub fn evse_id(country_code: &str, party_id: &str, identity: &str, uuid: &str) -> String {
    let keep = |text: &str| -> String {
        (text.chars())
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_uppercase())
            .collect()
    };
    let mut id = keep(identity);
    if id.is_empty() {
        id = keep(uuid);
    }
    let prefix = format!("{country_code}*{party_id}*E");
    let room = 48usize.saturating_sub(prefix.len());
    format!("{prefix}{}", &id[..id.len().min(room)])
}

/// The ISO 3166-1 alpha-3 code of an alpha-2 `country` (any case); a code it does not know
/// is given back in capitals.
pub fn alpha_3(country: &str) -> String {
    let code = country.trim().to_ascii_uppercase();
    match countries::CODES.binary_search_by(|(two, _)| (*two).cmp(code.as_str())) {
        Ok(found) => countries::CODES[found].1.to_string(),
        Err(_) => code,
    }
}

/// Whether `country` is an ISO 3166-1 alpha-2 code (any case).
pub fn is_alpha_2(country: &str) -> bool {
    let code = country.trim().to_ascii_uppercase();
    (countries::CODES)
        .binary_search_by(|(two, _)| (*two).cmp(code.as_str()))
        .is_ok()
}

/// A record time (`2026-11-21T10:00:00.000000Z`) as OCPI writes it; as is if unreadable.
pub fn ocpi_time(record: &str) -> String {
    crate::time::parse(record).map_or_else(|| record.to_string(), crate::time::format)
}

/// At most `max` characters of `text`.
fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}
