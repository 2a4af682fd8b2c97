//! Reading a tariff from a REST body, with every problem named by its field path.

mod limits;
mod money;
mod problems;
mod restrictions;

use rust_decimal::Decimal;
use serde_json::{Map, Value};

use crate::currency::is_currency;
use crate::model::{ComponentKind, PriceComponent, Tariff, TariffElement};
use problems::{Problems, array, join, number, object, present, string, whole};

pub(crate) use restrictions::parse_time;

const MAX_ELEMENTS: usize = 100;
const MAX_COMPONENTS: usize = 10;

/// Reads and checks a tariff from the REST body's JSON value. On failure: every problem, as
/// (field path, message) with Laravel-style messages, e.g.
/// ("currency", "The currency field must be an ISO 4217 code."),
/// ("elements.0.price_components.1.price", "The price must be a decimal string such as \"0.30\"."),
/// ("elements", "The elements field must have at least 1 item.").
///
/// Keys other than currency, elements, min_price and max_price (a name, ...) are the caller's
/// and are ignored, as are unknown keys inside (OCPI's texts, `reservation`, ...).
pub fn read_tariff(body: &Value) -> Result<Tariff, Vec<(String, String)>> {
    // Anything but an object lacks every field, and is told so field by field.
    let empty = Map::new();
    let body = body.as_object().unwrap_or(&empty);
    let mut problems = Problems::default();
    let currency = currency(body, &mut problems);
    let elements = match present(body, "elements") {
        Some(value) => elements(value, &mut problems),
        None => {
            problems.required("elements");
            None
        }
    };
    let min_price = limits::limit(body, "min_price", &mut problems);
    let max_price = limits::limit(body, "max_price", &mut problems);
    if let (Some(Some(min)), Some(Some(max))) = (&min_price, &max_price) {
        limits::check_order(min, max, &mut problems);
    }
    match (
        currency,
        elements,
        min_price.unwrap_or(None),
        max_price.unwrap_or(None),
    ) {
        (Some(currency), Some(elements), min_price, max_price) if problems.is_empty() => {
            Ok(Tariff {
                currency,
                elements,
                min_price,
                max_price,
            })
        }
        _ => Err(problems.0),
    }
}

fn currency(body: &Map<String, Value>, problems: &mut Problems) -> Option<String> {
    let Some(value) = present(body, "currency") else {
        problems.required("currency");
        return None;
    };
    let code = string(value, "currency", problems)?;
    if !is_currency(code) {
        problems.add(
            "currency",
            "The currency field must be an ISO 4217 code.".to_owned(),
        );
        return None;
    }
    Some(code.to_owned())
}

fn elements(value: &Value, problems: &mut Problems) -> Option<Vec<TariffElement>> {
    let items = array(value, "elements", 1, MAX_ELEMENTS, problems)?;
    let read: Vec<_> = items
        .iter()
        .enumerate()
        .map(|(i, item)| element(item, &join("elements", i), problems))
        .collect();
    read.into_iter().collect()
}

fn element(value: &Value, path: &str, problems: &mut Problems) -> Option<TariffElement> {
    let fields = object(value, path, problems)?;
    let components_path = join(path, "price_components");
    let components = match present(fields, "price_components") {
        Some(value) => array(value, &components_path, 1, MAX_COMPONENTS, problems).map(|items| {
            let read: Vec<_> = items
                .iter()
                .enumerate()
                .map(|(i, item)| component(item, &join(&components_path, i), problems))
                .collect();
            read.into_iter().collect::<Option<Vec<_>>>()
        }),
        None => {
            problems.required(&components_path);
            None
        }
    };
    let restrictions = present(fields, "restrictions")
        .map(|value| restrictions::restrictions(value, &join(path, "restrictions"), problems));
    Some(TariffElement {
        price_components: components.flatten()?,
        // Absent restrictions are fine; refused ones leave the element unread.
        restrictions: match restrictions {
            None => None,
            Some(read) => Some(read?),
        },
    })
}

fn component(value: &Value, path: &str, problems: &mut Problems) -> Option<PriceComponent> {
    let fields = object(value, path, problems)?;
    let kind = required(fields, path, "type", problems).and_then(|(v, p)| kind(v, &p, problems));
    let price =
        required(fields, path, "price", problems).and_then(|(v, p)| money::money(v, &p, problems));
    let vat = present(fields, "vat").map(|v| {
        let field = join(path, "vat");
        let vat = number(v, &field, problems)?;
        if vat < Decimal::ZERO || vat > Decimal::ONE_HUNDRED {
            problems.add(
                &field,
                "The vat field must be between 0 and 100.".to_owned(),
            );
            return None;
        }
        Some(vat)
    });
    let step_size = match present(fields, "step_size") {
        Some(v) => {
            whole(v, &join(path, "step_size"), u64::from(u32::MAX), problems).map(|n| n as u32)
        }
        None => Some(1),
    };
    Some(PriceComponent {
        kind: kind?,
        price: price?,
        vat: match vat {
            None => None,
            Some(read) => Some(read?),
        },
        step_size: step_size?,
    })
}

/// A required field's value and path, or the "is required" problem.
fn required<'a>(
    fields: &'a Map<String, Value>,
    path: &str,
    key: &str,
    problems: &mut Problems,
) -> Option<(&'a Value, String)> {
    let field = join(path, key);
    match present(fields, key) {
        Some(value) => Some((value, field)),
        None => {
            problems.required(&field);
            None
        }
    }
}

fn kind(value: &Value, path: &str, problems: &mut Problems) -> Option<ComponentKind> {
    let name = string(value, path, problems)?;
    let found = ComponentKind::ALL.into_iter().find(|k| k.name() == name);
    if found.is_none() {
        problems.add(
            path,
            "The type field must be one of ENERGY, TIME, FLAT, PARKING_TIME.".to_owned(),
        );
    }
    found
}
