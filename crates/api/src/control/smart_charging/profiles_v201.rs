//! A limit in a 2.0.1 station's words: the same plan as 1.6's, sent per EVSE (the store's
//! connector of a 2.0.1 station is its EVSE) as 2.0.1's SetChargingProfile and
//! ClearChargingProfile (docs/smart-charging.md, "2.0.1 stations and mixed sites").

use super::plan::{PROFILE_ID_BASE, TX_DEFAULT};
use cms_store::smart_charging::balancer::SentLimit;
use serde_json::{Value, json};

/// The SetChargingProfile of a limit for EVSE `limit.connector_id` (0: the station's default,
/// which 2.0.1 applies to every EVSE, as 1.6 does a connector-0 default). One schedule, one
/// period from the start, in amps; Relative, so that a station whose clock is off applies it at
/// once. A TxProfile names the station's own `transactionId`.
pub(super) fn set_charging_profile(
    limit: &SentLimit,
    station_transaction_id: Option<&str>,
) -> Value {
    let id = PROFILE_ID_BASE + limit.connector_id;
    let mut profile = json!({
        "id": id,
        // One stack level per EVSE, as for 1.6's connectors: a station refuses a second
        // profile of the same stack level and purpose on an EVSE under another id.
        "stackLevel": if limit.purpose == TX_DEFAULT { 0 } else { limit.connector_id },
        "chargingProfilePurpose": limit.purpose,
        "chargingProfileKind": "Relative",
        "chargingSchedule": [{
            "id": id,
            "chargingRateUnit": "A",
            "chargingSchedulePeriod": [{"startPeriod": 0, "limit": limit.limit_amps}],
        }],
    });
    if let Some(transaction_id) = station_transaction_id {
        profile["transactionId"] = json!(transaction_id);
    }
    json!({"evseId": limit.connector_id, "chargingProfile": profile})
}

/// The ClearChargingProfile of the profile a limit set: by its id.
pub(super) fn clear_charging_profile(limit: &SentLimit) -> Value {
    json!({"chargingProfileId": PROFILE_ID_BASE + limit.connector_id})
}

#[cfg(test)]
mod tests {
    use super::super::plan::TX_PROFILE;
    use super::*;
    use cms_ocpp::v201::Command;

    fn limit(connector_id: i64, purpose: &str, amps: f64) -> SentLimit {
        SentLimit {
            charger_id: 1,
            connector_id,
            limit_amps: amps,
            applied_amps: None,
            purpose: purpose.into(),
            transaction_id: (purpose == TX_PROFILE).then_some(-7),
            session: "s".into(),
            action_uuid: "u".into(),
            status: "pending".into(),
            sent_at: "t".into(),
            answered_at: None,
            measured_amps: None,
            paused_since: None,
        }
    }

    #[test]
    fn a_tx_profile_names_the_evse_and_the_stations_transaction_and_meets_the_schema() {
        let request = set_charging_profile(&limit(2, TX_PROFILE, 12.5), Some("tx-201"));
        assert_eq!(
            request,
            json!({"evseId": 2, "chargingProfile": {
                "id": 1002, "stackLevel": 2, "transactionId": "tx-201",
                "chargingProfilePurpose": "TxProfile", "chargingProfileKind": "Relative",
                "chargingSchedule": [{"id": 1002, "chargingRateUnit": "A",
                  "chargingSchedulePeriod": [{"startPeriod": 0, "limit": 12.5}]}]}})
        );
        Command::SetChargingProfile
            .validate_request(&request)
            .expect("the 2.0.1 schema takes it");
        // A pause is a limit of 0 A, which the schema takes too.
        let pause = set_charging_profile(&limit(1, TX_PROFILE, 0.0), Some("tx-201"));
        Command::SetChargingProfile
            .validate_request(&pause)
            .unwrap();
    }

    #[test]
    fn the_fail_safe_default_goes_to_evse_0_without_a_transaction_and_meets_the_schema() {
        let request = set_charging_profile(&limit(0, TX_DEFAULT, 6.0), None);
        assert_eq!(request["evseId"], 0);
        let profile = &request["chargingProfile"];
        assert_eq!(
            (&profile["id"], &profile["stackLevel"]),
            (&json!(1000), &json!(0))
        );
        assert_eq!(profile["chargingProfilePurpose"], "TxDefaultProfile");
        assert!(profile.get("transactionId").is_none());
        Command::SetChargingProfile
            .validate_request(&request)
            .unwrap();
    }

    #[test]
    fn a_clear_names_the_profile_by_its_id_and_meets_the_schema() {
        let request = clear_charging_profile(&limit(3, TX_PROFILE, 10.0));
        assert_eq!(request, json!({"chargingProfileId": 1003}));
        Command::ClearChargingProfile
            .validate_request(&request)
            .unwrap();
    }
}
