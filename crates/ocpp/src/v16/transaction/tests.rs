use chrono::{TimeZone, Utc};
use serde_json::{Value, json};

use super::*;
use crate::error::ErrorCode;
use crate::v16::test_support::*;
use crate::v16::{Action, Measurand, ReadingContext, Request, UnitOfMeasure};

mod authorize {
    use super::*;

    const A: Action = Action::Authorize;

    #[test]
    fn valid_payload_parses() {
        accept(A, &json!({"idTag": "04A2B3C4D5E6F7"}), |r| {
            let Request::Authorize(a) = r else {
                panic!("{r:?}")
            };
            assert_eq!(a.id_tag, "04A2B3C4D5E6F7");
        });
    }

    #[test]
    fn id_tag_is_required() {
        check_required(A, &json!({"idTag": "x"}), &["/idTag"]);
    }

    #[test]
    fn id_tag_must_be_a_string() {
        let cases = [("/idTag", json!(1234)), ("/idTag", json!(null))];
        check_wrong_types(A, &json!({"idTag": "x"}), &cases);
    }

    #[test]
    fn id_tag_is_at_most_20_characters() {
        check_max_lengths(A, &json!({"idTag": "x"}), &[("/idTag", 20)]);
    }

    #[test]
    fn unknown_property_is_a_formation_violation() {
        check_unknown_property(A, &json!({"idTag": "x"}), &[""]);
    }

    #[test]
    fn non_object_payload_is_a_formation_violation() {
        check_not_object(A);
    }
}

mod start {
    use super::*;

    const A: Action = Action::StartTransaction;

    fn minimal() -> Value {
        json!({
            "connectorId": 1,
            "idTag": "TAG-1",
            "meterStart": 0,
            "timestamp": "2026-11-21T10:00:00Z"
        })
    }

    fn full() -> Value {
        with(&minimal(), "/reservationId", json!(77))
    }

    fn start(r: Request<'_>) -> StartTransactionRequest<'_> {
        match r {
            Request::StartTransaction(s) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn minimal_payload_parses() {
        accept(A, &minimal(), |r| {
            let s = start(r);
            assert_eq!(s.connector_id, 1);
            assert_eq!(s.id_tag, "TAG-1");
            assert_eq!(s.meter_start, 0);
            assert_eq!(s.reservation_id, None);
            assert_eq!(
                s.timestamp,
                Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0).unwrap()
            );
        });
    }

    #[test]
    fn full_payload_parses() {
        let payload = with(&full(), "/meterStart", json!(-15));
        accept(A, &payload, |r| {
            let s = start(r);
            assert_eq!(s.reservation_id, Some(77));
            assert_eq!(s.meter_start, -15);
        });
    }

    #[test]
    fn required_fields_missing_are_occurrence_violations() {
        let pointers = ["/connectorId", "/idTag", "/meterStart", "/timestamp"];
        check_required(A, &full(), &pointers);
    }

    #[test]
    fn wrong_json_types_are_type_violations() {
        let cases = [
            ("/connectorId", json!("1")),
            ("/connectorId", json!(1.5)),
            ("/idTag", json!(42)),
            ("/meterStart", json!("0")),
            ("/meterStart", json!(10.25)),
            ("/reservationId", json!("77")),
            ("/reservationId", json!(null)),
            ("/timestamp", json!(0)),
        ];
        check_wrong_types(A, &full(), &cases);
    }

    #[test]
    fn id_tag_is_at_most_20_characters() {
        check_max_lengths(A, &full(), &[("/idTag", 20)]);
    }

    #[test]
    fn connector_id_must_be_positive() {
        for id in [0, -1] {
            let payload = with(&full(), "/connectorId", json!(id));
            reject(
                A,
                &payload,
                ErrorCode::PropertyConstraintViolation,
                "connectorId:",
            );
        }
    }

    #[test]
    fn integers_beyond_32_bits_are_property_violations() {
        let payload = with(&full(), "/meterStart", json!(3_000_000_000_u64));
        reject(
            A,
            &payload,
            ErrorCode::PropertyConstraintViolation,
            "meterStart:",
        );
    }

    #[test]
    fn bad_timestamp_is_a_property_violation() {
        let payload = with(&full(), "/timestamp", json!("now"));
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

mod stop {
    use super::*;

    const A: Action = Action::StopTransaction;
    const SV: &str = "/transactionData/0/sampledValue/0";

    fn minimal() -> Value {
        json!({"meterStop": 12000, "timestamp": "2026-11-21T11:00:00Z", "transactionId": 9})
    }

    fn full() -> Value {
        let mut payload = minimal();
        let extra = json!({
            "idTag": "TAG-1",
            "reason": "EVDisconnected",
            "transactionData": [{
                "timestamp": "2026-11-21T11:00:00Z",
                "sampledValue": [{
                    "value": "12000",
                    "context": "Transaction.End",
                    "format": "Raw",
                    "measurand": "Energy.Active.Import.Register",
                    "phase": "L1",
                    "location": "Outlet",
                    "unit": "Wh"
                }]
            }]
        });
        payload
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        payload
    }

    fn stop(r: Request<'_>) -> StopTransactionRequest<'_> {
        match r {
            Request::StopTransaction(s) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn minimal_payload_parses_with_defaults() {
        accept(A, &minimal(), |r| {
            let s = stop(r);
            assert_eq!((s.meter_stop, s.transaction_id), (12000, 9));
            assert_eq!(
                s.timestamp,
                Utc.with_ymd_and_hms(2026, 11, 21, 11, 0, 0).unwrap()
            );
            assert_eq!(s.id_tag, None);
            assert_eq!(s.reason, None);
            assert_eq!(s.reason(), StopReason::Local);
            assert!(s.transaction_data.is_empty());
        });
    }

    #[test]
    fn full_payload_parses() {
        accept(A, &full(), |r| {
            let s = stop(r);
            assert_eq!(s.id_tag.as_deref(), Some("TAG-1"));
            assert_eq!(s.reason, Some(StopReason::EvDisconnected));
            let sv = &s.transaction_data[0].sampled_value[0];
            assert_eq!(sv.value, "12000");
            assert_eq!(sv.context, Some(ReadingContext::TransactionEnd));
            assert_eq!(sv.measurand, Some(Measurand::EnergyActiveImportRegister));
        });
    }

    #[test]
    fn transaction_data_arrays_may_be_empty() {
        let payload = with(&minimal(), "/transactionData", json!([]));
        accept(A, &payload, |r| {
            assert!(stop(r).transaction_data.is_empty())
        });
        let payload = with(&full(), "/transactionData/0/sampledValue", json!([]));
        accept(A, &payload, |r| {
            assert!(stop(r).transaction_data[0].sampled_value.is_empty())
        });
    }

    #[test]
    fn required_fields_missing_are_occurrence_violations() {
        let pointers = [
            "/meterStop",
            "/timestamp",
            "/transactionId",
            "/transactionData/0/timestamp",
            "/transactionData/0/sampledValue",
            "/transactionData/0/sampledValue/0/value",
        ];
        check_required(A, &full(), &pointers);
    }

    #[test]
    fn wrong_json_types_are_type_violations() {
        let cases = [
            ("/idTag", json!(1)),
            ("/meterStop", json!("12000")),
            ("/meterStop", json!(12000.5)),
            ("/timestamp", json!(null)),
            ("/transactionId", json!("9")),
            ("/transactionId", json!(9.9)),
            ("/reason", json!(0)),
            ("/transactionData", json!({})),
            ("/transactionData/0", json!(1)),
            ("/transactionData/0/timestamp", json!(false)),
            ("/transactionData/0/sampledValue", json!({})),
            ("/transactionData/0/sampledValue/0", json!("12000")),
            ("/transactionData/0/sampledValue/0/value", json!(12000)),
            ("/transactionData/0/sampledValue/0/unit", json!(1)),
            ("/transactionData/0/sampledValue/0/measurand", json!(1)),
        ];
        check_wrong_types(A, &full(), &cases);
    }

    #[test]
    fn id_tag_is_at_most_20_characters() {
        check_max_lengths(A, &full(), &[("/idTag", 20)]);
    }

    #[test]
    fn bad_enumeration_values_are_property_violations() {
        check_enum::<StopReason>(A, &full(), "/reason");
        check_enum::<ReadingContext>(A, &full(), &format!("{SV}/context"));
        check_enum::<crate::v16::ValueFormat>(A, &full(), &format!("{SV}/format"));
        check_enum::<Measurand>(A, &full(), &format!("{SV}/measurand"));
        check_enum::<crate::v16::Phase>(A, &full(), &format!("{SV}/phase"));
        check_enum::<crate::v16::Location>(A, &full(), &format!("{SV}/location"));
    }

    #[test]
    fn units_follow_the_stop_transaction_schema_which_lacks_hertz() {
        let pointer = format!("{SV}/unit");
        for unit in UnitOfMeasure::ALL
            .iter()
            .filter(|u| **u != UnitOfMeasure::Hertz)
        {
            accept(A, &with(&full(), &pointer, json!(unit.as_str())), |_| ());
        }
        let path = "transactionData[0].sampledValue[0].unit: unknown value";
        for bad in ["Hertz", "Foo", "wh"] {
            let payload = with(&full(), &pointer, json!(bad));
            reject(A, &payload, ErrorCode::PropertyConstraintViolation, path);
        }
    }

    #[test]
    fn bad_timestamps_are_property_violations() {
        let payload = with(&full(), "/timestamp", json!("11:00"));
        reject(
            A,
            &payload,
            ErrorCode::PropertyConstraintViolation,
            "timestamp:",
        );
        let payload = with(&full(), "/transactionData/0/timestamp", json!("x"));
        let path = "transactionData[0].timestamp:";
        reject(A, &payload, ErrorCode::PropertyConstraintViolation, path);
    }

    #[test]
    fn unknown_properties_are_formation_violations() {
        check_unknown_property(A, &full(), &["", "/transactionData/0", SV]);
    }

    #[test]
    fn non_object_payload_is_a_formation_violation() {
        check_not_object(A);
    }
}
