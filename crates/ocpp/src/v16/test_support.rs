//! Helpers for the per-message validation tests: build payload variants, check outcomes.

use serde_json::{Value, json};

use super::{Action, Request, parse_request};
use crate::error::{ErrorCode, Violation};

/// Parses `payload` and panics with the violation if it was rejected; runs `check` on the view.
pub(crate) fn accept(action: Action, payload: &Value, check: impl FnOnce(Request<'_>)) {
    let text = payload.to_string();
    match parse_request(action, &text) {
        Ok(request) => check(request),
        Err(v) => panic!("{action} rejected {text}: {v}"),
    }
}

/// Asserts `payload` is rejected with `code`, the description starting with `path`.
pub(crate) fn reject(action: Action, payload: &Value, code: ErrorCode, path: &str) -> Violation {
    let text = payload.to_string();
    let violation = match parse_request(action, &text) {
        Ok(request) => panic!("{action} accepted {text}: {request:?}"),
        Err(v) => v,
    };
    assert_eq!(violation.code, code, "{text}: {violation}");
    assert!(
        violation.description.starts_with(path),
        "{text}: description {:?} should start with {path:?}",
        violation.description
    );
    violation
}

/// `base` with the value at JSON pointer `pointer` set (the parent must exist).
pub(crate) fn with(base: &Value, pointer: &str, value: Value) -> Value {
    let mut out = base.clone();
    let (parent, key) = pointer.rsplit_once('/').expect("pointer starts with /");
    let slot = out.pointer_mut(parent).expect("parent exists");
    match slot {
        Value::Object(map) => {
            map.insert(key.to_owned(), value);
        }
        Value::Array(items) => items[key.parse::<usize>().expect("index")] = value,
        other => panic!("cannot set {key} in {other}"),
    }
    out
}

/// `base` without the member at JSON pointer `pointer`.
pub(crate) fn without(base: &Value, pointer: &str) -> Value {
    let mut out = base.clone();
    let (parent, key) = pointer.rsplit_once('/').expect("pointer starts with /");
    let map = out
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .expect("parent object");
    assert!(map.remove(key).is_some(), "{pointer} not in payload");
    out
}

/// A string of `n` characters, multi-byte ones included so byte and char counts differ.
pub(crate) fn chars(n: usize) -> String {
    "é".repeat(n / 2) + &"x".repeat(n - n / 2)
}

/// The dotted field path a violation names for a JSON pointer, e.g. `/a/0/b` → `a[0].b`.
pub(crate) fn field_path(pointer: &str) -> String {
    let mut out = String::new();
    for part in pointer.split('/').skip(1) {
        if part.parse::<usize>().is_ok() {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(part);
        }
    }
    out
}

/// Checks every maxLength rule: exactly `max` characters is accepted, one more is
/// a PropertyConstraintViolation naming the field.
pub(crate) fn check_max_lengths(action: Action, base: &Value, limits: &[(&str, usize)]) {
    for &(pointer, max) in limits {
        accept(action, &with(base, pointer, json!(chars(max))), |_| ());
        let too_long = with(base, pointer, json!(chars(max + 1)));
        reject(
            action,
            &too_long,
            ErrorCode::PropertyConstraintViolation,
            &field_path(pointer),
        );
    }
}

/// Checks every required field: removing it is an OccurenceConstraintViolation.
pub(crate) fn check_required(action: Action, base: &Value, pointers: &[&str]) {
    for pointer in pointers {
        let missing = without(base, pointer);
        reject(
            action,
            &missing,
            ErrorCode::OccurenceConstraintViolation,
            &field_path(pointer),
        );
    }
}

/// Checks that each field given a value of the wrong JSON type is a TypeConstraintViolation.
pub(crate) fn check_wrong_types(action: Action, base: &Value, cases: &[(&str, Value)]) {
    for (pointer, value) in cases {
        let wrong = with(base, pointer, value.clone());
        reject(
            action,
            &wrong,
            ErrorCode::TypeConstraintViolation,
            &field_path(pointer),
        );
    }
}

/// Checks that each enumerated field rejects a value outside its enumeration, including
/// a case variant of a valid one, and accepts every listed value.
pub(crate) fn check_enum<E: super::SpecEnum>(action: Action, base: &Value, pointer: &str) {
    for value in E::ALL {
        accept(action, &with(base, pointer, json!(value.as_str())), |_| ());
    }
    let path = field_path(pointer);
    let first = E::ALL[0].as_str();
    for bad in [
        "Foo".to_owned(),
        first.to_lowercase(),
        format!("{first} "),
        String::new(),
    ] {
        let v = reject(
            action,
            &with(base, pointer, json!(bad)),
            ErrorCode::PropertyConstraintViolation,
            &path,
        );
        assert!(v.description.contains("unknown value"), "{v}");
    }
}

/// Checks that a property outside the schema is a FormationViolation at every object level.
pub(crate) fn check_unknown_property(action: Action, base: &Value, object_pointers: &[&str]) {
    for parent in object_pointers {
        let extra = with(base, &format!("{parent}/vendorExtension"), json!(1));
        let v = reject(
            action,
            &extra,
            ErrorCode::FormationViolation,
            &field_path(parent),
        );
        assert!(
            v.description
                .contains("unknown property \"vendorExtension\""),
            "{v}"
        );
    }
}

/// Checks that a non-object payload is a FormationViolation.
pub(crate) fn check_not_object(action: Action) {
    for payload in [json!([]), json!("x"), json!(1), json!(null), json!(true)] {
        reject(
            action,
            &payload,
            ErrorCode::FormationViolation,
            "payload must be a JSON object",
        );
    }
}
