//! The problems found in a tariff body, worded like Laravel's validation messages (the
//! reference API cms follows is a Laravel application, and its clients show these texts).

use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::Value;

/// Every problem found, as (field path, message), in the order found.
#[derive(Default)]
pub(crate) struct Problems(pub(crate) Vec<(String, String)>);

impl Problems {
    pub(crate) fn add(&mut self, path: &str, message: String) {
        self.0.push((path.to_owned(), message));
    }

    /// "The {attribute} field is required."
    pub(crate) fn required(&mut self, path: &str) {
        self.add(path, format!("The {} field is required.", attribute(path)));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// `parent.child` joined, or `child` at the top.
pub(crate) fn join(parent: &str, child: impl std::fmt::Display) -> String {
    if parent.is_empty() {
        child.to_string()
    } else {
        format!("{parent}.{child}")
    }
}

/// How a path reads in a message, as Laravel writes it: the last name with spaces for
/// underscores, keeping the index of an array item ("price components.1").
pub(crate) fn attribute(path: &str) -> String {
    let mut segments = path.rsplit('.');
    let last = segments.next().unwrap_or_default();
    let shown = match segments.next() {
        Some(parent) if last.bytes().all(|b| b.is_ascii_digit()) => format!("{parent}.{last}"),
        _ => last.to_owned(),
    };
    shown.replace('_', " ")
}

/// The field's value, with JSON null taken as absent (OCPI's optional fields may be null).
pub(crate) fn present<'a>(
    object: &'a serde_json::Map<String, Value>,
    key: &str,
) -> Option<&'a Value> {
    object.get(key).filter(|v| !v.is_null())
}

/// A string field, refusing other types and NUL characters (which some stores cannot keep).
pub(crate) fn string<'a>(value: &'a Value, path: &str, problems: &mut Problems) -> Option<&'a str> {
    let Some(text) = value.as_str() else {
        problems.add(
            path,
            format!("The {} field must be a string.", attribute(path)),
        );
        return None;
    };
    if text.contains('\0') {
        problems.add(
            path,
            format!(
                "The {} field must not contain NUL characters.",
                attribute(path)
            ),
        );
        return None;
    }
    Some(text)
}

/// A JSON number as an exact decimal: serde_json keeps the number's text here
/// (arbitrary_precision), so "20.5" is 20.5 and never a nearby float.
pub(crate) fn number(value: &Value, path: &str, problems: &mut Problems) -> Option<Decimal> {
    let parsed = value.as_number().and_then(|n| {
        let text = n.to_string();
        Decimal::from_str(&text)
            .or_else(|_| Decimal::from_scientific(&text))
            .ok()
    });
    if parsed.is_none() {
        problems.add(
            path,
            format!("The {} field must be a number.", attribute(path)),
        );
    }
    parsed
}

/// A JSON number that is zero or more.
pub(crate) fn non_negative(value: &Value, path: &str, problems: &mut Problems) -> Option<Decimal> {
    let n = number(value, path, problems)?;
    if n < Decimal::ZERO {
        problems.add(
            path,
            format!("The {} field must be at least 0.", attribute(path)),
        );
        return None;
    }
    // kWh, A and kW: far beyond any charger, and far from the arithmetic's limits (a kWh
    // threshold is turned into Wh).
    if n > MAX_AMOUNT {
        problems.add(
            path,
            format!(
                "The {} field must not be greater than {MAX_AMOUNT}.",
                attribute(path)
            ),
        );
        return None;
    }
    Some(n)
}

/// The largest restriction amount a tariff may give.
const MAX_AMOUNT: Decimal = Decimal::from_parts(1_000_000_000, 0, 0, false, 0);

/// A whole JSON number from 0 to `max`.
pub(crate) fn whole(value: &Value, path: &str, max: u64, problems: &mut Problems) -> Option<u64> {
    let shown = attribute(path);
    match (value.as_u64(), value.as_i64()) {
        (Some(n), _) if n <= max => Some(n),
        (Some(_), _) => {
            problems.add(
                path,
                format!("The {shown} field must not be greater than {max}."),
            );
            None
        }
        (None, Some(_)) => {
            problems.add(path, format!("The {shown} field must be at least 0."));
            None
        }
        (None, None) => {
            problems.add(path, format!("The {shown} field must be an integer."));
            None
        }
    }
}

/// An array with `min..=max` items.
pub(crate) fn array<'a>(
    value: &'a Value,
    path: &str,
    min: usize,
    max: usize,
    problems: &mut Problems,
) -> Option<&'a Vec<Value>> {
    let shown = attribute(path);
    let Some(items) = value.as_array() else {
        problems.add(path, format!("The {shown} field must be an array."));
        return None;
    };
    if items.len() < min {
        let noun = if min == 1 { "item" } else { "items" };
        problems.add(
            path,
            format!("The {shown} field must have at least {min} {noun}."),
        );
        return None;
    }
    if items.len() > max {
        problems.add(
            path,
            format!("The {shown} field must not have more than {max} items."),
        );
        return None;
    }
    Some(items)
}

/// An object.
pub(crate) fn object<'a>(
    value: &'a Value,
    path: &str,
    problems: &mut Problems,
) -> Option<&'a serde_json::Map<String, Value>> {
    let found = value.as_object();
    if found.is_none() {
        problems.add(
            path,
            format!("The {} field must be an object.", attribute(path)),
        );
    }
    found
}

#[cfg(test)]
mod tests {
    use super::attribute;

    #[test]
    fn attributes_read_like_laravel_ones() {
        assert_eq!(attribute("currency"), "currency");
        assert_eq!(
            attribute("elements.0.price_components.1.step_size"),
            "step size"
        );
        assert_eq!(
            attribute("elements.0.price_components.1"),
            "price components.1"
        );
        assert_eq!(
            attribute("elements.3.restrictions.day_of_week.2"),
            "day of week.2"
        );
    }
}
