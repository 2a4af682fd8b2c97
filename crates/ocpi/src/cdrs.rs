//! The cdrs module's objects (OCPI 2.2.1 part "cdrs"): the charge detail record of a finished,
//! priced session, and the classes the sessions module shares with it (CdrToken, Price,
//! ChargingPeriod).

mod country;

pub use country::alpha3;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A finished session's record: what the eMSP bills its driver from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cdr {
    /// The CPO's.
    pub country_code: String,
    pub party_id: String,
    pub id: String,
    pub start_date_time: String,
    pub end_date_time: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    pub cdr_token: CdrToken,
    pub auth_method: AuthMethod,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_reference: Option<String>,
    pub cdr_location: CdrLocation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meter_id: Option<String>,
    pub currency: String,
    /// The OCPI Tariff objects that priced it (as the tariffs module writes them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tariffs: Vec<Value>,
    pub charging_periods: Vec<ChargingPeriod>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_data: Option<Value>,
    pub total_cost: Price,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_fixed_cost: Option<Price>,
    /// kWh.
    pub total_energy: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_energy_cost: Option<Price>,
    /// Hours, charging and not.
    pub total_time: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_time_cost: Option<Price>,
    /// Hours plugged in without charging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_parking_time: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_parking_cost: Option<Price>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remark: Option<String>,
    pub last_updated: String,
}

/// The token a session ran on, as the CPO knows it.
/// How the driver was authorised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AuthMethod {
    /// The eMSP was asked (real-time authorisation).
    AuthRequest,
    /// A command (StartSession) started it.
    Command,
    /// The token was known: nobody was asked.
    Whitelist,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CdrToken {
    /// The eMSP's.
    pub country_code: String,
    pub party_id: String,
    pub uid: String,
    /// `AD_HOC_USER`, `APP_USER`, `OTHER` or `RFID`.
    #[serde(rename = "type")]
    pub token_type: String,
    pub contract_id: String,
}

/// An amount of money, excluding and (when known) including VAT.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub excl_vat: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incl_vat: Option<f64>,
}

/// Where a CDR's session took place: the location with only its EVSE and connector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CdrLocation {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// At most 45 characters.
    pub address: String,
    pub city: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    /// ISO 3166-1 alpha-3.
    pub country: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinates: Option<GeoLocation>,
    pub evse_uid: String,
    pub evse_id: String,
    pub connector_id: String,
    pub connector_standard: String,
    pub connector_format: String,
    pub connector_power_type: String,
}

/// Decimal degrees as text (`"52.370216"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeoLocation {
    pub latitude: String,
    pub longitude: String,
}

/// A stretch of a session from `start_date_time` until the next one starts (or the session
/// ends).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChargingPeriod {
    pub start_date_time: String,
    pub dimensions: Vec<CdrDimension>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tariff_id: Option<String>,
}

/// One measured quantity of a charging period.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CdrDimension {
    /// `ENERGY` (kWh), `TIME`, `PARKING_TIME` (hours), `MAX_POWER` (kW), ...
    #[serde(rename = "type")]
    pub dimension: String,
    pub volume: f64,
}

/// The eMI3 EVSE id of a charger: `{country}*{party}*E{identity}`, the identity uppercased with
/// every character outside `[A-Z0-9]` dropped, cut to OCPI's 48 characters.
pub fn evse_id(country_code: &str, party_id: &str, identity: &str) -> String {
    let own: String = identity
        .to_ascii_uppercase()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let mut id = format!("{country_code}*{party_id}*E{own}");
    id.truncate(48);
    id
}

/// `text` cut to at most `max` characters (OCPI's string lengths count characters).
pub fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evse_ids_keep_only_what_emi3_allows_and_fit_48_characters() {
        assert_eq!(evse_id("NL", "CMS", "cp-0042_a"), "NL*CMS*ECP0042A");
        let long = evse_id("NL", "CMS", &"x".repeat(60));
        assert_eq!(long.len(), 48);
        assert!(long.starts_with("NL*CMS*EXXX"));
        assert_eq!(cut("Stationsplein 1ééé", 16), "Stationsplein 1é");
    }

    #[test]
    fn countries_are_written_in_three_letters() {
        assert_eq!(alpha3("NL"), Some("NLD"));
        assert_eq!(alpha3("de"), Some("DEU"));
        assert_eq!(alpha3("ZW"), Some("ZWE"));
        assert_eq!(alpha3("XX"), None);
        assert_eq!(alpha3("NLD"), None);
    }
}
