//! Amounts of money: decimal strings, so that no JSON reader on the way makes them floats.

use std::str::FromStr;

use rust_decimal::Decimal;
use serde_json::Value;

use super::problems::{Problems, attribute, string};

/// Fractional digits an amount may have: OCPI's number precision.
const MAX_FRACTION_DIGITS: usize = 4;

/// Amounts stay below this: a typo guard, and far from `Decimal`'s limits in any product.
const LIMIT: Decimal = Decimal::from_parts(1_000_000, 0, 0, false, 0);

/// A price or price limit: "0.30", zero or more, at most 4 fractional digits, below 1,000,000.
pub(crate) fn money(value: &Value, path: &str, problems: &mut Problems) -> Option<Decimal> {
    let shown = attribute(path);
    let not_decimal = format!("The {shown} must be a decimal string such as \"0.30\".");
    if !value.is_string() {
        problems.add(path, not_decimal);
        return None;
    }
    let text = string(value, path, problems)?;
    let Some((whole, fraction)) = split_decimal(text) else {
        problems.add(path, not_decimal);
        return None;
    };
    if fraction.len() > MAX_FRACTION_DIGITS {
        problems.add(
            path,
            format!("The {shown} field must have at most 4 decimal places."),
        );
        return None;
    }
    if text.starts_with('-')
        && !(whole.bytes().all(|b| b == b'0') && fraction.bytes().all(|b| b == b'0'))
    {
        problems.add(path, format!("The {shown} field must be at least 0."));
        return None;
    }
    // Too many digits for a Decimal is too large for the limit as well.
    match Decimal::from_str(text.trim_start_matches('-')) {
        Ok(amount) if amount < LIMIT => Some(amount),
        _ => {
            problems.add(
                path,
                format!("The {shown} field must be less than 1000000."),
            );
            None
        }
    }
}

/// The digits before and after the point of "-?D+(.D+)?", or None for anything else
/// ("1e3", ".5", "5.", " 1", "+1").
fn split_decimal(text: &str) -> Option<(&str, &str)> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((whole, fraction)) if !fraction.is_empty() => (whole, fraction),
        Some(_) => return None,
        None => (unsigned, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    (!whole.is_empty() && digits(whole) && digits(fraction)).then_some((whole, fraction))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: Value) -> Result<String, String> {
        let mut problems = Problems::default();
        match money(&value, "price", &mut problems) {
            Some(amount) => Ok(amount.to_string()),
            None => Err(problems.0.remove(0).1),
        }
    }

    #[test]
    fn takes_decimal_strings_and_keeps_their_scale() {
        assert_eq!(read(json!("0.30")), Ok("0.30".to_owned()));
        assert_eq!(read(json!("12")), Ok("12".to_owned()));
        assert_eq!(read(json!("999999.9999")), Ok("999999.9999".to_owned()));
        assert_eq!(read(json!("-0.00")), Ok("0.00".to_owned()));
    }

    #[test]
    fn refuses_numbers_other_spellings_negatives_and_excess() {
        let not_decimal = "The price must be a decimal string such as \"0.30\".";
        for bad in [
            json!(0.3),
            json!("1e3"),
            json!(".5"),
            json!("5."),
            json!(" 1"),
            json!("+1"),
        ] {
            assert_eq!(read(bad), Err(not_decimal.to_owned()));
        }
        assert_eq!(
            read(json!("-0.01")),
            Err("The price field must be at least 0.".to_owned())
        );
        assert_eq!(
            read(json!("0.12345")),
            Err("The price field must have at most 4 decimal places.".to_owned())
        );
        for big in ["1000000", "99999999999999999999999999999999"] {
            assert_eq!(
                read(json!(big)),
                Err("The price field must be less than 1000000.".to_owned())
            );
        }
        assert_eq!(
            read(json!("1\u{0}")),
            Err("The price field must not contain NUL characters.".to_owned())
        );
    }
}
