//! A tariff's min_price and max_price.

use serde_json::{Map, Value};

use super::money::money;
use super::problems::{Problems, attribute, join, object, present};
use crate::model::PriceLimit;

/// `min_price` or `max_price`: None when absent, Some(None) when refused.
pub(crate) fn limit(
    body: &Map<String, Value>,
    key: &str,
    problems: &mut Problems,
) -> Option<Option<PriceLimit>> {
    let value = present(body, key)?;
    let Some(fields) = object(value, key, problems) else {
        return Some(None);
    };
    let excl_path = join(key, "excl_vat");
    let excl_vat = match present(fields, "excl_vat") {
        Some(v) => money(v, &excl_path, problems),
        None => {
            problems.required(&excl_path);
            None
        }
    };
    let incl_path = join(key, "incl_vat");
    let incl_vat = present(fields, "incl_vat").map(|v| money(v, &incl_path, problems));
    let Some(excl_vat) = excl_vat else {
        return Some(None);
    };
    match incl_vat {
        None => Some(Some(PriceLimit {
            excl_vat,
            incl_vat: None,
        })),
        Some(None) => Some(None),
        Some(Some(incl)) if incl < excl_vat => {
            let shown = attribute(&incl_path);
            problems.add(
                &incl_path,
                format!("The {shown} field must be greater than or equal to excl vat."),
            );
            Some(None)
        }
        Some(incl_vat) => Some(Some(PriceLimit { excl_vat, incl_vat })),
    }
}

/// A minimum above the maximum would leave no possible total.
pub(crate) fn check_order(min: &PriceLimit, max: &PriceLimit, problems: &mut Problems) {
    let incl_above = match (min.incl_vat, max.incl_vat) {
        (Some(min), Some(max)) => min > max,
        _ => false,
    };
    if min.excl_vat > max.excl_vat || incl_above {
        problems.add(
            "min_price",
            "The min price field must be less than or equal to max price.".to_owned(),
        );
    }
}
