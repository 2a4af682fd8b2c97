use chrono::{TimeZone, Utc};
use serde_json::{Value, json};

use super::*;
use crate::error::ErrorCode;
use crate::v16::test_support::*;
use crate::v16::{Action, Request};

mod status_notification {
    use super::*;

    const A: Action = Action::StatusNotification;

    fn minimal() -> Value {
        json!({"connectorId": 0, "errorCode": "NoError", "status": "Available"})
    }

    fn full() -> Value {
        json!({
            "connectorId": 1,
            "errorCode": "GroundFailure",
            "info": "RCD tripped",
            "status": "Faulted",
            "timestamp": "2026-11-21T10:00:00.000Z",
            "vendorId": "com.example",
            "vendorErrorCode": "E-17"
        })
    }

    fn status(r: Request<'_>) -> StatusNotificationRequest<'_> {
        match r {
            Request::StatusNotification(s) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn minimal_payload_parses() {
        accept(A, &minimal(), |r| {
            let s = status(r);
            assert_eq!(s.connector_id, 0);
            assert_eq!(s.error_code, ChargePointErrorCode::NoError);
            assert_eq!(s.status, ChargePointStatus::Available);
            assert_eq!((s.info, s.timestamp), (None, None));
            assert_eq!((s.vendor_id, s.vendor_error_code), (None, None));
        });
    }

    #[test]
    fn full_payload_parses() {
        accept(A, &full(), |r| {
            let s = status(r);
            assert_eq!(s.connector_id, 1);
            assert_eq!(s.error_code, ChargePointErrorCode::GroundFailure);
            assert_eq!(s.info.as_deref(), Some("RCD tripped"));
            assert_eq!(s.status, ChargePointStatus::Faulted);
            let t = Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0).unwrap();
            assert_eq!(s.timestamp, Some(t));
            assert_eq!(s.vendor_id.as_deref(), Some("com.example"));
            assert_eq!(s.vendor_error_code.as_deref(), Some("E-17"));
        });
    }

    #[test]
    fn required_fields_missing_are_occurrence_violations() {
        check_required(A, &full(), &["/connectorId", "/errorCode", "/status"]);
    }

    #[test]
    fn wrong_json_types_are_type_violations() {
        let cases = [
            ("/connectorId", json!("1")),
            ("/connectorId", json!(0.5)),
            ("/errorCode", json!(0)),
            ("/info", json!(["x"])),
            ("/status", json!(null)),
            ("/timestamp", json!(1_732_183_200)),
            ("/vendorId", json!(false)),
            ("/vendorErrorCode", json!(17)),
        ];
        check_wrong_types(A, &full(), &cases);
    }

    #[test]
    fn bad_enumeration_values_are_property_violations() {
        check_enum::<ChargePointErrorCode>(A, &full(), "/errorCode");
        check_enum::<ChargePointStatus>(A, &full(), "/status");
    }

    #[test]
    fn string_lengths_follow_the_schema() {
        let limits = [("/info", 50), ("/vendorId", 255), ("/vendorErrorCode", 50)];
        check_max_lengths(A, &full(), &limits);
    }

    #[test]
    fn negative_connector_id_is_a_property_violation() {
        let payload = with(&full(), "/connectorId", json!(-1));
        reject(
            A,
            &payload,
            ErrorCode::PropertyConstraintViolation,
            "connectorId:",
        );
    }

    #[test]
    fn bad_timestamp_is_a_property_violation() {
        let payload = with(&full(), "/timestamp", json!("2026-11-21 10:00"));
        reject(
            A,
            &payload,
            ErrorCode::PropertyConstraintViolation,
            "timestamp:",
        );
    }

    #[test]
    fn unknown_property_is_a_formation_violation() {
        check_unknown_property(A, &full(), &[""]);
    }

    #[test]
    fn non_object_payload_is_a_formation_violation() {
        check_not_object(A);
    }
}

mod diagnostics {
    use super::*;

    const A: Action = Action::DiagnosticsStatusNotification;

    #[test]
    fn valid_payload_parses() {
        accept(A, &json!({"status": "Uploading"}), |r| {
            let Request::DiagnosticsStatusNotification(d) = r else {
                panic!("{r:?}")
            };
            assert_eq!(d.status, DiagnosticsStatus::Uploading);
        });
    }

    #[test]
    fn status_is_required() {
        check_required(A, &json!({"status": "Idle"}), &["/status"]);
    }

    #[test]
    fn status_must_be_a_string() {
        check_wrong_types(A, &json!({"status": "Idle"}), &[("/status", json!(1))]);
    }

    #[test]
    fn bad_status_is_a_property_violation() {
        check_enum::<DiagnosticsStatus>(A, &json!({"status": "Idle"}), "/status");
    }

    #[test]
    fn unknown_property_is_a_formation_violation() {
        check_unknown_property(A, &json!({"status": "Idle"}), &[""]);
    }

    #[test]
    fn non_object_payload_is_a_formation_violation() {
        check_not_object(A);
    }
}

mod firmware {
    use super::*;

    const A: Action = Action::FirmwareStatusNotification;

    #[test]
    fn valid_payload_parses() {
        accept(A, &json!({"status": "InstallationFailed"}), |r| {
            let Request::FirmwareStatusNotification(f) = r else {
                panic!("{r:?}")
            };
            assert_eq!(f.status, FirmwareStatus::InstallationFailed);
        });
    }

    #[test]
    fn status_is_required() {
        check_required(A, &json!({"status": "Idle"}), &["/status"]);
    }

    #[test]
    fn status_must_be_a_string() {
        check_wrong_types(A, &json!({"status": "Idle"}), &[("/status", json!({}))]);
    }

    #[test]
    fn bad_status_is_a_property_violation() {
        check_enum::<FirmwareStatus>(A, &json!({"status": "Idle"}), "/status");
    }

    #[test]
    fn unknown_property_is_a_formation_violation() {
        check_unknown_property(A, &json!({"status": "Idle"}), &[""]);
    }

    #[test]
    fn non_object_payload_is_a_formation_violation() {
        check_not_object(A);
    }
}
