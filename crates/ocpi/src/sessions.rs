//! The sessions module's objects (OCPI 2.2.1 part "sessions"): the Session a CPO serves and
//! pushes for a charging session, and the charging preferences an eMSP may send for one.

pub use crate::cdrs::AuthMethod;
use crate::cdrs::{CdrToken, Price};
use serde::{Deserialize, Serialize};

/// A charging session as the CPO tells it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// The CPO's.
    pub country_code: String,
    pub party_id: String,
    pub id: String,
    pub start_date_time: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_date_time: Option<String>,
    pub kwh: f64,
    pub cdr_token: CdrToken,
    pub auth_method: AuthMethod,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_reference: Option<String>,
    pub location_id: String,
    pub evse_uid: String,
    pub connector_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meter_id: Option<String>,
    pub currency: String,
    /// Absent: no price known (which does not mean free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cost: Option<Price>,
    pub status: SessionStatus,
    pub last_updated: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SessionStatus {
    Active,
    Completed,
    Invalid,
    Pending,
    Reservation,
}

/// What the driver wants of a session (the eMSP's PUT on `charging_preferences`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChargingPreferences {
    pub profile_type: ProfileType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub departure_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_need: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discharge_allowed: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ProfileType {
    Cheap,
    Fast,
    Green,
    Regular,
}

/// The CPO's answer to charging preferences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ChargingPreferencesResponse {
    Accepted,
    DepartureRequired,
    EnergyNeedRequired,
    NotPossible,
    ProfileTypeNotSupported,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_session_leaves_out_what_it_does_not_know_and_preferences_are_read() {
        let session = Session {
            country_code: "NL".into(),
            party_id: "CMS".into(),
            id: "0b9f".into(),
            start_date_time: "2026-11-29T10:00:00Z".into(),
            end_date_time: None,
            kwh: 1.5,
            cdr_token: CdrToken {
                country_code: "NL".into(),
                party_id: "EMP".into(),
                uid: "TAG-1".into(),
                token_type: "RFID".into(),
                contract_id: "TAG-1".into(),
            },
            auth_method: AuthMethod::Whitelist,
            authorization_reference: None,
            location_id: "site".into(),
            evse_uid: "charger".into(),
            connector_id: "1".into(),
            meter_id: None,
            currency: "EUR".into(),
            total_cost: None,
            status: SessionStatus::Active,
            last_updated: "2026-11-29T10:00:00Z".into(),
        };
        let json = serde_json::to_value(&session).unwrap();
        assert_eq!(json["status"], "ACTIVE");
        assert_eq!(json["auth_method"], "WHITELIST");
        assert_eq!(json["cdr_token"]["type"], "RFID");
        for absent in ["end_date_time", "total_cost", "meter_id"] {
            assert!(json.get(absent).is_none(), "{absent}: {json}");
        }
        let read: ChargingPreferences =
            serde_json::from_value(json!({"profile_type": "FAST", "energy_need": 20})).unwrap();
        assert_eq!(read.profile_type, ProfileType::Fast);
        assert!(serde_json::from_value::<ChargingPreferences>(json!({"profile": 1})).is_err());
        assert_eq!(
            serde_json::to_value(ChargingPreferencesResponse::NotPossible).unwrap(),
            "NOT_POSSIBLE"
        );
    }
}
