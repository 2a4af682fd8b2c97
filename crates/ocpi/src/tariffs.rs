//! The tariffs module's object (2.2.1 "Tariffs"): a cms tariff (docs/tariffs.md, already
//! OCPI's model without the CPO's identifiers) as an OCPI Tariff: the CPO's country code and
//! party id, the tariff's uuid as id, its name as the alternative text, and its money written
//! as JSON numbers (cms keeps prices as decimal strings).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use std::str::FromStr;

/// A Tariff as cms publishes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tariff {
    pub country_code: String,
    pub party_id: String,
    pub id: String,
    pub currency: String,
    /// The tariff's name, in English (cms keeps one name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tariff_alt_text: Vec<DisplayText>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_price: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_price: Option<Value>,
    pub elements: Vec<Value>,
    pub last_updated: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisplayText {
    pub language: String,
    pub text: String,
}

/// A tariff as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct TariffFacts {
    pub uuid: String,
    pub name: String,
    pub currency: String,
    /// The rules as cms keeps them: `{currency, elements, min_price, max_price}`.
    pub rules: Value,
    /// A record time.
    pub last_updated: String,
}

/// The Tariff of `facts`, published by the CPO `country_code`/`party_id`.
pub fn tariff(country_code: &str, party_id: &str, facts: &TariffFacts) -> Tariff {
    let elements = (facts.rules["elements"].as_array())
        .map(|elements| elements.iter().map(element).collect())
        .unwrap_or_default();
    let limit = |key: &str| match &facts.rules[key] {
        Value::Object(fields) => Some(price(fields)),
        _ => None,
    };
    let name = facts.name.trim();
    Tariff {
        country_code: country_code.into(),
        party_id: party_id.into(),
        id: facts.uuid.clone(),
        currency: facts.currency.clone(),
        tariff_alt_text: (!name.is_empty())
            .then(|| DisplayText {
                language: "en".into(),
                text: name.chars().take(512).collect(),
            })
            .into_iter()
            .collect(),
        min_price: limit("min_price"),
        max_price: limit("max_price"),
        elements,
        last_updated: crate::locations::ocpi_time(&facts.last_updated),
    }
}

/// An element with each component's `price` (and `vat`) a number; restrictions as they are
/// (cms keeps OCPI's).
fn element(element: &Value) -> Value {
    let mut out = Map::new();
    let components: Vec<Value> = (element["price_components"].as_array())
        .map(|components| {
            (components.iter())
                .map(|c| {
                    let mut fields = Map::new();
                    fields.insert("type".into(), c["type"].clone());
                    fields.insert("price".into(), number(&c["price"]));
                    if !c["vat"].is_null() {
                        fields.insert("vat".into(), number(&c["vat"]));
                    }
                    let step = c["step_size"].as_u64().unwrap_or(1);
                    fields.insert("step_size".into(), step.into());
                    Value::Object(fields)
                })
                .collect()
        })
        .unwrap_or_default();
    out.insert("price_components".into(), components.into());
    if let Value::Object(restrictions) = &element["restrictions"]
        && !restrictions.is_empty()
    {
        let kept: Map<String, Value> = (restrictions.iter())
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        out.insert("restrictions".into(), Value::Object(kept));
    }
    Value::Object(out)
}

/// A Price: `excl_vat` and, when known, `incl_vat`, as numbers.
fn price(fields: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    out.insert("excl_vat".into(), number(&fields["excl_vat"]));
    if let Some(incl) = fields.get("incl_vat").filter(|v| !v.is_null()) {
        out.insert("incl_vat".into(), number(incl));
    }
    Value::Object(out)
}

/// A decimal string as a JSON number (its digits as they are where serde_json keeps number
/// text); anything else as it is.
fn number(value: &Value) -> Value {
    match value {
        Value::String(text) => Number::from_str(text.trim())
            .map(Value::Number)
            .unwrap_or_else(|_| value.clone()),
        _ => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cms_tariff_becomes_an_ocpi_tariff_with_numbers_for_money() {
        let rules = json!({
            "currency": "EUR",
            "elements": [
                {"price_components": [
                    {"type": "ENERGY", "price": "0.30", "vat": 21, "step_size": 1},
                    {"type": "FLAT", "price": "0.50", "vat": null, "step_size": 1}]},
                {"price_components": [{"type": "PARKING_TIME", "price": "5.00", "vat": 21,
                                       "step_size": 300}],
                 "restrictions": {"start_time": "22:00", "end_time": "07:00", "min_kwh": null}}
            ],
            "min_price": {"excl_vat": "1.00", "incl_vat": "1.21"},
            "max_price": null
        });
        let facts = TariffFacts {
            uuid: "t-1".into(),
            name: "Standard".into(),
            currency: "EUR".into(),
            rules,
            last_updated: "2026-11-21T10:00:00.123456Z".into(),
        };
        let tariff = serde_json::to_value(tariff("NL", "CMS", &facts)).unwrap();
        assert_eq!(tariff["country_code"], "NL");
        assert_eq!(tariff["party_id"], "CMS");
        assert_eq!(tariff["id"], "t-1");
        assert_eq!(tariff["currency"], "EUR");
        assert_eq!(
            tariff["tariff_alt_text"],
            json!([{"language": "en", "text": "Standard"}])
        );
        assert_eq!(tariff["last_updated"], "2026-11-21T10:00:00Z");
        let energy = &tariff["elements"][0]["price_components"][0];
        assert!(energy["price"].is_number(), "{energy}");
        assert_eq!(energy["price"].as_f64(), Some(0.30));
        assert_eq!(energy["vat"].as_f64(), Some(21.0));
        let flat = &tariff["elements"][0]["price_components"][1];
        assert!(flat.get("vat").is_none(), "no VAT is left out: {flat}");
        assert_eq!(
            tariff["elements"][1]["restrictions"],
            json!({"start_time": "22:00", "end_time": "07:00"})
        );
        assert_eq!(tariff["min_price"]["excl_vat"].as_f64(), Some(1.0));
        assert_eq!(tariff["min_price"]["incl_vat"].as_f64(), Some(1.21));
        assert!(tariff.get("max_price").is_none());
    }
}
