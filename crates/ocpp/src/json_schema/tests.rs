use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::error::ErrorCode;

fn schema(schema: Value) -> Node {
    compile(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"))
}

/// The first violation of `payload`, which must break `node`.
fn first(node: &Node, payload: Value) -> SchemaViolation {
    match node.validate(&payload) {
        Ok(()) => panic!("{payload} was accepted"),
        Err(found) => found.first().clone(),
    }
}

fn accepts(node: &Node, payload: Value) {
    if let Err(found) = node.validate(&payload) {
        panic!("{payload} was refused: {found:?}");
    }
}

fn object_of(name: &str, property: Value) -> Node {
    schema(json!({
        "type": "object",
        "properties": {name: property},
        "additionalProperties": false,
        "required": [name]
    }))
}

/// A profile shaped like SetChargingProfile's, small enough to read.
fn profile() -> Node {
    schema(json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "title": "ProfileRequest",
        "type": "object",
        "properties": {
            "connectorId": {"type": "integer"},
            "schedule": {
                "type": "object",
                "properties": {
                    "periods": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "properties": {"limit": {"type": "number", "multipleOf": 0.1}},
                            "additionalProperties": false,
                            "required": ["limit"]
                        }
                    }
                },
                "additionalProperties": false,
                "required": ["periods"]
            }
        },
        "additionalProperties": false,
        "required": ["connectorId", "schedule"]
    }))
}

#[test]
fn a_keyword_the_validator_does_not_implement_refuses_to_compile() {
    for (keyword, value) in [
        ("pattern", json!("^[A-Z]+$")),
        ("minLength", json!(1)),
        ("minimum", json!(0)),
        ("oneOf", json!([])),
        ("$ref", json!("#/definitions/x")),
        (
            "description",
            json!("not an annotation this validator knows"),
        ),
    ] {
        let mut raw = json!({"type": "string"});
        raw[keyword] = value;
        let error = compile(&raw).expect_err(keyword);
        assert_eq!(error.at, "#");
        assert!(error.problem.contains(keyword), "{error}");
    }
}

#[test]
fn the_place_of_an_unimplemented_keyword_is_named() {
    let raw = json!({
        "type": "object",
        "properties": {"list": {"type": "array", "items": {"type": "integer", "maximum": 9}}}
    });
    let error = compile(&raw).unwrap_err();
    assert_eq!(error.at, "#/properties/list/items");
    assert!(error.problem.contains("maximum"), "{error}");
}

#[test]
fn only_the_shapes_the_official_schemas_use_compile() {
    for raw in [
        json!({"type": ["string", "null"]}),
        json!({"type": "null"}),
        json!({"properties": {}}),
        json!({"type": "object", "additionalProperties": true}),
        json!({"type": "object", "additionalProperties": {"type": "string"}}),
        json!({"type": "object", "properties": {}, "required": ["ghost"]}),
        json!({"type": "array"}),
        json!({"type": "array", "items": [{"type": "string"}]}),
        json!({"type": "string", "enum": ["A", 1]}),
        json!({"type": "string", "format": "email"}),
        json!({"type": "number", "multipleOf": 0}),
        json!({"type": "string", "additionalProperties": true}),
        json!({"type": "integer", "enum": ["A"]}),
    ] {
        assert!(compile(&raw).is_err(), "{raw} compiled");
    }
}

#[test]
fn additional_properties_false_on_an_enumeration_means_nothing() {
    let node = object_of(
        "type",
        json!({"type": "string", "additionalProperties": false, "enum": ["Hard", "Soft"]}),
    );
    accepts(&node, json!({"type": "Soft"}));
}

#[test]
fn an_object_without_additional_properties_false_takes_any_other_member() {
    let node = schema(json!({"type": "object", "properties": {"a": {"type": "integer"}}}));
    accepts(&node, json!({"a": 1, "b": "anything"}));
    let v = first(&node, json!({"a": "1"}));
    assert_eq!(v.violation.code, ErrorCode::TypeConstraintViolation);
}

#[test]
fn a_payload_that_is_not_an_object_is_a_formation_violation() {
    let node = profile();
    for payload in [json!([]), json!("x"), json!(1), json!(null), json!(true)] {
        let v = first(&node, payload.clone());
        assert_eq!(v.violation.code, ErrorCode::FormationViolation, "{payload}");
        assert!(
            v.violation
                .description
                .starts_with("payload must be a JSON object, got "),
            "{v}"
        );
        assert_eq!(v.field, "");
    }
}

#[test]
fn a_nested_value_of_the_wrong_type_is_a_type_violation_naming_its_path() {
    let payload = json!({"connectorId": 1, "schedule": {"periods": [{"limit": 6.0}, "7"]}});
    let v = first(&profile(), payload);
    assert_eq!(v.violation.code, ErrorCode::TypeConstraintViolation);
    assert_eq!(
        v.violation.description,
        "schedule.periods[1]: expected object, got string"
    );
    assert_eq!(v.field, "schedule.periods.1");
}

#[test]
fn a_missing_required_field_is_an_occurrence_violation() {
    let payload = json!({"connectorId": 1, "schedule": {"periods": [{}]}});
    let v = first(&profile(), payload);
    assert_eq!(v.violation.code, ErrorCode::OccurenceConstraintViolation);
    assert_eq!(
        v.violation.description,
        "schedule.periods[0].limit: required property is missing"
    );
    assert_eq!(v.field, "schedule.periods.0.limit");
}

#[test]
fn too_few_items_is_an_occurrence_violation() {
    let v = first(
        &profile(),
        json!({"connectorId": 1, "schedule": {"periods": []}}),
    );
    assert_eq!(v.violation.code, ErrorCode::OccurenceConstraintViolation);
    assert_eq!(
        v.violation.description,
        "schedule.periods: needs at least 1 item(s)"
    );
}

#[test]
fn an_unknown_property_is_a_formation_violation_named_by_its_object_and_itself() {
    let nested = json!({"connectorId": 1, "schedule": {"periods": [{"limit": 1}], "x": 1}});
    let v = first(&profile(), nested);
    assert_eq!(v.violation.code, ErrorCode::FormationViolation);
    assert_eq!(v.violation.description, "schedule: unknown property \"x\"");
    assert_eq!(v.field, "schedule.x");

    let top = json!({"connectorId": 1, "schedule": {"periods": [{"limit": 1}]}, "y": 1});
    let v = first(&profile(), top);
    assert_eq!(v.violation.description, "unknown property \"y\"");
    assert_eq!(v.field, "y");
}

#[test]
fn integers_fit_32_bits_and_have_no_fraction() {
    let node = object_of("n", json!({"type": "integer"}));
    for fits in [i64::from(i32::MIN), 0, i64::from(i32::MAX)] {
        accepts(&node, json!({ "n": fits }));
    }
    for beyond in [
        json!(2_147_483_648_u64),
        json!(-2_147_483_649_i64),
        json!(u64::MAX),
    ] {
        let v = first(&node, json!({ "n": beyond }));
        assert_eq!(v.violation.code, ErrorCode::PropertyConstraintViolation);
        let expected = format!("n: {beyond} is out of range for a 32-bit integer");
        assert_eq!(v.violation.description, expected);
    }
    for text in [r#"{"n":1.5}"#, r#"{"n":1.0}"#, r#"{"n":1e3}"#] {
        let payload: Value = serde_json::from_str(text).unwrap();
        let v = first(&node, payload);
        assert_eq!(
            v.violation.code,
            ErrorCode::TypeConstraintViolation,
            "{text}"
        );
        assert_eq!(v.violation.description, "n: expected integer, got number");
    }
}

#[test]
fn a_multiple_of_a_tenth_allows_for_binary_float_error_but_not_for_hundredths() {
    let node = object_of("limit", json!({"type": "number", "multipleOf": 0.1}));
    for fine in [
        json!(16.1),
        json!(0.3),
        json!(16),
        json!(-7.7),
        json!(1_000_000.1),
    ] {
        accepts(&node, json!({ "limit": fine }));
    }
    for bad in [json!(16.05), json!(0.01), json!(7.15)] {
        let v = first(&node, json!({ "limit": bad }));
        assert_eq!(v.violation.code, ErrorCode::PropertyConstraintViolation);
        let expected = format!("limit: {bad} is not a multiple of 0.1");
        assert_eq!(v.violation.description, expected);
    }
}

#[test]
fn max_length_counts_characters_not_bytes() {
    let node = object_of("idTag", json!({"type": "string", "maxLength": 20}));
    accepts(&node, json!({"idTag": "é".repeat(20)}));
    let v = first(&node, json!({"idTag": "é".repeat(21)}));
    assert_eq!(v.violation.code, ErrorCode::PropertyConstraintViolation);
    assert_eq!(
        v.violation.description,
        "idTag: longer than 20 characters (21)"
    );
}

#[test]
fn no_string_holds_a_nul_even_where_the_schema_sets_no_rule() {
    let node = object_of("data", json!({"type": "string"}));
    accepts(&node, json!({"data": "tab\there"}));
    let v = first(&node, json!({"data": "a\u{0}b"}));
    assert_eq!(v.violation.code, ErrorCode::PropertyConstraintViolation);
    assert_eq!(
        v.violation.description,
        "data: must not contain NUL characters (\\u0000)"
    );
}

#[test]
fn a_value_outside_the_enumeration_is_a_property_violation() {
    let node = object_of("type", json!({"type": "string", "enum": ["Hard", "Soft"]}));
    for bad in ["Hard!", "hard", "", "Soft "] {
        let v = first(&node, json!({ "type": bad }));
        assert_eq!(v.violation.code, ErrorCode::PropertyConstraintViolation);
        assert_eq!(
            v.violation.description,
            format!("type: unknown value {bad:?}")
        );
    }
}

#[test]
fn date_times_follow_the_crates_timestamp_rules() {
    let node = object_of("at", json!({"type": "string", "format": "date-time"}));
    for fine in [
        "2026-11-21T10:00:00Z",
        "2026-11-21T10:00:00.250+01:00",
        "2026-11-21T10:00:00",
    ] {
        accepts(&node, json!({ "at": fine }));
    }
    for bad in ["2026-11-21", "21/11/2026 10:00", "2026-13-01T00:00:00Z", ""] {
        let v = first(&node, json!({ "at": bad }));
        assert_eq!(v.violation.code, ErrorCode::PropertyConstraintViolation);
        let expected = format!("at: not an RFC 3339 date-time: {bad:?}");
        assert_eq!(v.violation.description, expected);
    }
}

#[test]
fn a_uri_is_absolute_and_holds_only_uri_characters() {
    let node = object_of("location", json!({"type": "string", "format": "uri"}));
    for fine in [
        "ftp://user:secret@diag.example.com/upload/",
        "https://fw.example.com/wallbox%201.5.bin?sig=a+b&x=%7E",
        "sftp://10.0.0.7:2222/in",
        "urn:isbn:0451450523",
    ] {
        accepts(&node, json!({ "location": fine }));
    }
    for bad in [
        "/firmware.bin",
        "fw.example.com/firmware.bin",
        "https://fw.example.com/wall box.bin",
        "https://ü.example.com/",
        "https://fw.example.com/%zz",
        "1http://fw.example.com/",
        "http:",
        "",
    ] {
        let v = first(&node, json!({ "location": bad }));
        assert_eq!(
            v.violation.code,
            ErrorCode::PropertyConstraintViolation,
            "{bad}"
        );
        let expected = format!("location: not an absolute URI: {bad:?}");
        assert_eq!(v.violation.description, expected);
    }
}

#[test]
fn every_violation_is_reported_in_document_order() {
    let payload = json!({
        "connectorId": "1",
        "schedule": {"periods": [{"limit": 1.05}, {}, {"limit": 2}]},
        "extra": true
    });
    let found = profile().validate(&payload).unwrap_err();
    let fields: Vec<&str> = found.iter().map(|v| v.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "extra",
            "connectorId",
            "schedule.periods.0.limit",
            "schedule.periods.1.limit"
        ]
    );
}

#[test]
fn a_payload_breaking_a_rule_everywhere_reports_a_bounded_number_of_violations() {
    let node = object_of(
        "keys",
        json!({"type": "array", "items": {"type": "string"}}),
    );
    let found = node
        .validate(&json!({"keys": vec![1; 10_000]}))
        .unwrap_err();
    assert_eq!(found.iter().len(), MAX_REPORTED_VIOLATIONS);
    assert_eq!(found.first().field, "keys.0");
}

#[test]
fn a_huge_bad_value_is_cut_short_in_the_description() {
    let node = object_of("type", json!({"type": "string", "enum": ["Hard"]}));
    let v = first(&node, json!({"type": "X".repeat(10_000)}));
    assert!(v.violation.description.len() < 100, "{v}");
}

#[test]
fn the_first_violation_is_what_a_charger_or_an_actions_error_is_told() {
    let payload = json!({"connectorId": "1", "schedule": {"periods": []}});
    let found = profile().validate(&payload).unwrap_err();
    assert_eq!(
        found.to_string(),
        "TypeConstraintViolation: connectorId: expected integer, got string (and 1 more)"
    );
    let violation = Violation::from(found);
    assert_eq!(violation.code, ErrorCode::TypeConstraintViolation);
    assert_eq!(
        violation.description,
        "connectorId: expected integer, got string"
    );
}

// OCPP 2.0.1's draft-06 keywords.

fn schema06(schema: Value) -> Node {
    compile_draft06(&schema).unwrap_or_else(|e| panic!("{schema}: {e}"))
}

/// Shaped like a 2.0.1 request: definitions, `$ref`s, annotations, an open CustomDataType.
fn request06() -> Node {
    schema06(json!({
        "$schema": "http://json-schema.org/draft-06/schema#",
        "$id": "urn:OCPP:Cp:2:2020:3:TestRequest",
        "comment": "OCPP 2.0.1 FINAL",
        "description": "A request",
        "definitions": {
            "CustomDataType": {
                "description": "extensible",
                "javaType": "CustomData",
                "type": "object",
                "properties": {"vendorId": {"type": "string", "maxLength": 255}},
                "required": ["vendorId"]
            },
            "PhaseEnumType": {
                "javaType": "PhaseEnum",
                "type": "string",
                "default": "L1",
                "additionalProperties": false,
                "enum": ["L1", "L2", "L3"]
            },
            "SampleType": {
                "javaType": "Sample",
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "customData": {"$ref": "#/definitions/CustomDataType"},
                    "phase": {"$ref": "#/definitions/PhaseEnumType"},
                    "soc": {"type": "integer", "minimum": 0.0, "maximum": 100.0}
                },
                "required": ["phase"]
            }
        },
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "customData": {"$ref": "#/definitions/CustomDataType"},
            "samples": {
                "type": "array",
                "additionalItems": false,
                "items": {"$ref": "#/definitions/SampleType"},
                "minItems": 1,
                "maxItems": 3
            }
        },
        "required": ["samples"]
    }))
}

#[test]
fn a_ref_reads_its_definition_and_annotations_are_ignored() {
    let node = request06();
    accepts(
        &node,
        json!({"customData": {"vendorId": "v", "extra": [1, {"deep": true}]},
               "samples": [{"phase": "L2", "soc": 0}, {"phase": "L3", "soc": 100,
                            "customData": {"vendorId": "w"}}]}),
    );
    let v = first(&node, json!({"samples": [{"phase": "L4"}]}));
    assert_eq!(v.violation.code, ErrorCode::PropertyConstraintViolation);
    assert_eq!(
        v.violation.description,
        "samples[0].phase: unknown value \"L4\""
    );
    let v = first(&node, json!({"samples": [{"phase": "L1", "colour": 1}]}));
    assert_eq!(v.violation.code, ErrorCode::FormationViolation);
    assert_eq!(v.field, "samples.0.colour");
    let v = first(
        &node,
        json!({"customData": {}, "samples": [{"phase": "L1"}]}),
    );
    assert_eq!(v.violation.code, ErrorCode::OccurenceConstraintViolation);
    assert_eq!(v.field, "customData.vendorId");
}

#[test]
fn too_many_items_is_an_occurrence_violation() {
    let v = first(
        &request06(),
        json!({"samples": [{"phase": "L1"}, {"phase": "L2"}, {"phase": "L3"}, {"phase": "L1"}]}),
    );
    assert_eq!(v.violation.code, ErrorCode::OccurenceConstraintViolation);
    assert_eq!(
        v.violation.description,
        "samples: holds more than 3 item(s) (4)"
    );
}

#[test]
fn an_integer_outside_its_minimum_or_maximum_is_a_property_violation() {
    for (soc, expected) in [
        (-1, "samples[0].soc: -1 is below the minimum 0"),
        (101, "samples[0].soc: 101 is above the maximum 100"),
    ] {
        let v = first(
            &request06(),
            json!({"samples": [{"phase": "L1", "soc": soc}]}),
        );
        assert_eq!(v.violation.code, ErrorCode::PropertyConstraintViolation);
        assert_eq!(v.violation.description, expected);
    }
}

#[test]
fn a_definition_is_compiled_once_and_shared() {
    let node = request06();
    let Node::Object { properties, .. } = &node else {
        panic!("not an object")
    };
    let Node::Array { items, .. } = &*properties[1].node else {
        panic!("not an array")
    };
    let Node::Object {
        properties: inner, ..
    } = &**items
    else {
        panic!("not an object")
    };
    assert!(Arc::ptr_eq(&properties[0].node, &inner[0].node));
}

#[test]
fn a_ref_that_cannot_be_resolved_refuses_to_compile() {
    for (definitions, reference, problem) in [
        (
            json!({}),
            "#/definitions/Missing",
            "no definition \"Missing\"",
        ),
        (
            json!({"A": {"type": "object", "properties": {"b": {"$ref": "#/definitions/B"}}},
                   "B": {"type": "object", "properties": {"a": {"$ref": "#/definitions/A"}}}}),
            "#/definitions/A",
            "refers to itself",
        ),
        (json!({}), "other.json#/x", "is not implemented"),
    ] {
        let raw = json!({
            "definitions": definitions,
            "type": "object",
            "properties": {"x": {"$ref": reference}}
        });
        let error = compile_draft06(&raw).expect_err(reference);
        assert!(error.problem.contains(problem), "{error}");
    }
}

#[test]
fn draft06_still_refuses_what_it_does_not_implement() {
    for raw in [
        json!({"type": "string", "pattern": "^A$"}),
        json!({"type": "string", "minLength": 1}),
        json!({"type": "array", "items": {"type": "string"}, "additionalItems": true}),
        json!({"type": "array", "items": [{"type": "string"}], "additionalItems": false}),
        json!({"type": "object", "properties": {"x": {"$ref": "#/definitions/A", "maxLength": 3}},
               "definitions": {"A": {"type": "string"}}}),
        json!({"type": "object", "properties": {"x": {"type": "object", "definitions": {}}}}),
        json!({"type": "object", "definitions": {"Unused": {"type": "string", "pattern": "x"}}}),
        json!({"type": "boolean", "minimum": 0}),
    ] {
        assert!(compile_draft06(&raw).is_err(), "{raw} compiled");
    }
}

#[test]
fn a_schema_of_annotations_only_takes_any_value_but_no_nul() {
    let node = schema06(json!({
        "type": "object",
        "properties": {"data": {"description": "Data without specified length or format."}}
    }));
    for data in [json!(null), json!(1.5), json!("x"), json!([{"a": [true]}])] {
        accepts(&node, json!({ "data": data }));
    }
    // A typed schema with a description is no "any value".
    let typed = schema06(json!({
        "type": "object",
        "properties": {"n": {"description": "a count", "type": "integer"}}
    }));
    let v = first(&typed, json!({"n": "1"}));
    assert_eq!(v.violation.code, ErrorCode::TypeConstraintViolation);
    let v = first(&node, json!({"data": {"a": ["ok", "a\u{0}b"]}}));
    assert_eq!(v.violation.code, ErrorCode::PropertyConstraintViolation);
    assert_eq!(
        v.violation.description,
        "data.a[1]: must not contain NUL characters (\\u0000)"
    );
}
