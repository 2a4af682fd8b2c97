//! Breaking one field of a valid tariff at a time.

use cms_tariffs::read_tariff;
use serde_json::{Value, json};

/// A valid tariff with one field set (Some) or removed (None) at a dotted path.
pub fn edited(path: &str, value: Option<Value>) -> Value {
    let mut body = json!({"currency": "EUR", "min_price": {"excl_vat": "1.00"}, "elements": [{
        "price_components": [{"type": "ENERGY", "price": "0.30", "vat": 21, "step_size": 1}],
        "restrictions": {"start_time": "08:00"}}]});
    let (parent, key) = path.rsplit_once('.').unwrap_or(("", path));
    let pointer = format!("/{}", parent.replace('.', "/"))
        .trim_end_matches('/')
        .to_owned();
    let target = body.pointer_mut(&pointer).unwrap();
    match (target, value) {
        (Value::Array(items), Some(v)) => items[key.parse::<usize>().unwrap()] = v,
        (Value::Object(fields), Some(v)) => drop(fields.insert(key.to_owned(), v)),
        (Value::Object(fields), None) => drop(fields.remove(key)),
        _ => panic!("cannot edit {path}"),
    }
    body
}

/// Sets `path` to `value` and expects exactly one problem, at `path`.
pub fn refused(path: &str, value: Value, message: &str) {
    refused_at(path, value, path, message);
}

/// Sets `path` to `value` and expects exactly one problem, at `at`.
pub fn refused_at(path: &str, value: Value, at: &str, message: &str) {
    assert_eq!(
        read_tariff(&edited(path, Some(value.clone()))),
        Err(vec![(at.to_owned(), message.to_owned())]),
        "{path} = {value}"
    );
}
