use chrono::{TimeZone, Utc};
use serde_json::{Value, json};

use super::*;
use crate::error::ErrorCode;
use crate::v16::test_support::*;
use crate::v16::{Action, Request};

const A: Action = Action::MeterValues;
const SV: &str = "/meterValue/0/sampledValue/0";

fn full() -> Value {
    json!({
        "connectorId": 2,
        "transactionId": 42,
        "meterValue": [{
            "timestamp": "2026-11-21T10:00:00Z",
            "sampledValue": [{
                "value": "1234.5",
                "context": "Sample.Clock",
                "format": "Raw",
                "measurand": "Current.Import",
                "phase": "L2",
                "location": "Inlet",
                "unit": "A"
            }]
        }]
    })
}

fn minimal() -> Value {
    json!({
        "connectorId": 0,
        "meterValue": [{"timestamp": "2026-11-21T10:00:00Z", "sampledValue": [{"value": "7"}]}]
    })
}

fn meter_values(request: Request<'_>) -> MeterValuesRequest<'_> {
    match request {
        Request::MeterValues(m) => m,
        other => panic!("not MeterValues: {other:?}"),
    }
}

#[test]
fn minimal_payload_parses_with_spec_defaults() {
    accept(A, &minimal(), |r| {
        let m = meter_values(r);
        assert_eq!(m.connector_id, 0);
        assert_eq!(m.transaction_id, None);
        assert_eq!(m.meter_value.len(), 1);
        let mv = &m.meter_value[0];
        assert_eq!(
            mv.timestamp,
            Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0).unwrap()
        );
        let sv = &mv.sampled_value[0];
        assert_eq!(sv.value, "7");
        assert_eq!((sv.context, sv.format, sv.measurand), (None, None, None));
        assert_eq!((sv.phase, sv.location, sv.unit), (None, None, None));
        assert_eq!(sv.context(), ReadingContext::SamplePeriodic);
        assert_eq!(sv.format(), ValueFormat::Raw);
        assert_eq!(sv.measurand(), Measurand::EnergyActiveImportRegister);
        assert_eq!(sv.location(), Location::Outlet);
        assert_eq!(sv.unit(), UnitOfMeasure::Wh);
    });
}

#[test]
fn full_payload_parses_every_field() {
    accept(A, &full(), |r| {
        let m = meter_values(r);
        assert_eq!(m.connector_id, 2);
        assert_eq!(m.transaction_id, Some(42));
        let sv = &m.meter_value[0].sampled_value[0];
        assert_eq!(
            *sv,
            SampledValue {
                value: "1234.5".into(),
                context: Some(ReadingContext::SampleClock),
                format: Some(ValueFormat::Raw),
                measurand: Some(Measurand::CurrentImport),
                phase: Some(Phase::L2),
                location: Some(Location::Inlet),
                unit: Some(UnitOfMeasure::A),
            }
        );
        assert_eq!(sv.context(), ReadingContext::SampleClock);
        assert_eq!(sv.unit(), UnitOfMeasure::A);
    });
}

#[test]
fn several_meter_values_and_samples_keep_their_order() {
    let sample = |v: &str| json!({"value": v});
    let payload = json!({
        "connectorId": 1,
        "meterValue": [
            {"timestamp": "2026-11-21T10:00:00Z", "sampledValue": [sample("1"), sample("2")]},
            {"timestamp": "2026-11-21T10:01:00+01:00", "sampledValue": [sample("3")]}
        ]
    });
    accept(A, &payload, |r| {
        let m = meter_values(r);
        let values: Vec<Vec<&str>> = m
            .meter_value
            .iter()
            .map(|mv| mv.sampled_value.iter().map(|s| &*s.value).collect())
            .collect();
        assert_eq!(values, [vec!["1", "2"], vec!["3"]]);
        assert_eq!(
            m.meter_value[1].timestamp,
            Utc.with_ymd_and_hms(2026, 11, 21, 9, 1, 0).unwrap()
        );
    });
}

#[test]
fn required_fields_missing_are_occurrence_violations() {
    let pointers = [
        "/connectorId",
        "/meterValue",
        "/meterValue/0/timestamp",
        "/meterValue/0/sampledValue",
        "/meterValue/0/sampledValue/0/value",
    ];
    check_required(A, &full(), &pointers);
}

#[test]
fn empty_arrays_violate_min_items_as_occurrence() {
    let empty = with(&full(), "/meterValue", json!([]));
    reject(
        A,
        &empty,
        ErrorCode::OccurenceConstraintViolation,
        "meterValue:",
    );
    let empty = with(&full(), "/meterValue/0/sampledValue", json!([]));
    let path = "meterValue[0].sampledValue:";
    reject(A, &empty, ErrorCode::OccurenceConstraintViolation, path);
}

#[test]
fn wrong_json_types_are_type_violations() {
    let cases = [
        ("/connectorId", json!("1")),
        ("/connectorId", json!(1.5)),
        ("/connectorId", json!(1.0)),
        ("/connectorId", json!(null)),
        ("/transactionId", json!("42")),
        ("/transactionId", json!(4.2)),
        ("/transactionId", json!(true)),
        ("/meterValue", json!({})),
        ("/meterValue/0", json!("sample")),
        ("/meterValue/0/timestamp", json!(1_732_183_200)),
        ("/meterValue/0/sampledValue", json!("1")),
        ("/meterValue/0/sampledValue/0", json!([])),
        ("/meterValue/0/sampledValue/0/value", json!(1234.5)),
        ("/meterValue/0/sampledValue/0/value", json!(null)),
        ("/meterValue/0/sampledValue/0/context", json!(1)),
        ("/meterValue/0/sampledValue/0/format", json!(false)),
        ("/meterValue/0/sampledValue/0/measurand", json!(["Voltage"])),
        ("/meterValue/0/sampledValue/0/phase", json!({})),
        ("/meterValue/0/sampledValue/0/location", json!(null)),
        ("/meterValue/0/sampledValue/0/unit", json!(3)),
    ];
    check_wrong_types(A, &full(), &cases);
}

#[test]
fn bad_enumeration_values_are_property_violations() {
    check_enum::<ReadingContext>(A, &full(), &format!("{SV}/context"));
    check_enum::<ValueFormat>(A, &full(), &format!("{SV}/format"));
    check_enum::<Measurand>(A, &full(), &format!("{SV}/measurand"));
    check_enum::<Phase>(A, &full(), &format!("{SV}/phase"));
    check_enum::<Location>(A, &full(), &format!("{SV}/location"));
    check_enum::<UnitOfMeasure>(A, &full(), &format!("{SV}/unit"));
}

#[test]
fn violation_names_the_full_field_path() {
    let mut payload = full();
    let samples = payload.pointer_mut("/meterValue/0/sampledValue").unwrap();
    let good = samples[0].clone();
    *samples = json!([good.clone(), good.clone(), good]);
    let bad = with(
        &payload,
        "/meterValue/0/sampledValue/2/measurand",
        json!("Foo"),
    );
    let v = reject(A, &bad, ErrorCode::PropertyConstraintViolation, "");
    assert_eq!(
        v.description,
        "meterValue[0].sampledValue[2].measurand: unknown value \"Foo\""
    );
}

#[test]
fn bad_timestamps_are_property_violations() {
    for bad in [
        "",
        "2026-11-21",
        "21/11/2026 10:00",
        "2026-11-21T10:00:00+25:00",
    ] {
        let payload = with(&full(), "/meterValue/0/timestamp", json!(bad));
        reject(
            A,
            &payload,
            ErrorCode::PropertyConstraintViolation,
            "meterValue[0].timestamp:",
        );
    }
}

#[test]
fn timestamp_without_offset_is_utc() {
    let payload = with(
        &full(),
        "/meterValue/0/timestamp",
        json!("2026-11-21T10:00:00"),
    );
    accept(A, &payload, |r| {
        let t = meter_values(r).meter_value[0].timestamp;
        assert_eq!(t, Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0).unwrap());
    });
}

#[test]
fn integers_out_of_range_are_property_violations() {
    for (pointer, value) in [
        ("/connectorId", json!(-1)),
        ("/connectorId", json!(2_147_483_648_u64)),
        ("/connectorId", json!(i32::MAX)),
        ("/connectorId", json!(crate::v16::MAX_CONNECTOR_ID + 1)),
        ("/transactionId", json!(2_147_483_648_u64)),
        ("/transactionId", json!(-2_147_483_649_i64)),
        ("/transactionId", json!(u64::MAX)),
    ] {
        let payload = with(&full(), pointer, value);
        reject(
            A,
            &payload,
            ErrorCode::PropertyConstraintViolation,
            &field_path(pointer),
        );
    }
    let extremes = with(&full(), "/transactionId", json!(i32::MIN));
    accept(A, &extremes, |r| {
        assert_eq!(meter_values(r).transaction_id, Some(i32::MIN))
    });
    let extremes = with(&full(), "/connectorId", json!(crate::v16::MAX_CONNECTOR_ID));
    accept(A, &extremes, |r| {
        assert_eq!(meter_values(r).connector_id, crate::v16::MAX_CONNECTOR_ID)
    });
}

#[test]
fn value_has_no_length_limit() {
    let signed = with(&full(), &format!("{SV}/value"), json!("A".repeat(5000)));
    let signed = with(&signed, &format!("{SV}/format"), json!("SignedData"));
    accept(A, &signed, |r| {
        let sv = &meter_values(r).meter_value[0].sampled_value[0];
        assert_eq!(sv.value.len(), 5000);
        assert_eq!(sv.format(), ValueFormat::SignedData);
    });
}

#[test]
fn unknown_properties_are_formation_violations() {
    check_unknown_property(A, &full(), &["", "/meterValue/0", SV]);
}

#[test]
fn non_object_payload_is_a_formation_violation() {
    check_not_object(A);
}

#[test]
fn celcius_and_celsius_are_distinct_valid_units() {
    for unit in ["Celcius", "Celsius"] {
        let payload = with(&full(), &format!("{SV}/unit"), json!(unit));
        accept(A, &payload, |r| {
            let sv = &meter_values(r).meter_value[0].sampled_value[0];
            assert_eq!(sv.unit().as_str(), unit);
        });
    }
}

#[test]
fn properties_in_any_order_are_accepted() {
    let text = r#"{"meterValue":[{"sampledValue":[{"unit":"V","phase":"L3-N","value":"229.8","measurand":"Voltage","location":"Outlet","format":"Raw","context":"Trigger"}],"timestamp":"2026-11-21T10:00:00Z"}],"transactionId":3,"connectorId":1}"#;
    let m = meter_values(crate::v16::parse_request(A, text).unwrap());
    assert_eq!((m.connector_id, m.transaction_id), (1, Some(3)));
    let sv = &m.meter_value[0].sampled_value[0];
    assert_eq!(sv.value, "229.8");
    assert_eq!(sv.context, Some(ReadingContext::Trigger));
    assert_eq!(sv.format, Some(ValueFormat::Raw));
    assert_eq!(sv.measurand, Some(Measurand::Voltage));
    assert_eq!(sv.phase, Some(Phase::L3N));
    assert_eq!(sv.location, Some(Location::Outlet));
    assert_eq!(sv.unit, Some(UnitOfMeasure::V));
}
