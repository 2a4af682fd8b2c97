//! `read_tariff` takes the OCPI 2.2.1 specification's example tariffs, written in cms's shape
//! (money as decimal strings, no CPO identifiers), and shows them back in the same shape.

use cms_tariffs::{ComponentKind, DayOfWeek, Tariff, read_tariff};
use rust_decimal::Decimal;
use serde_json::{Value, json};

fn spec_examples() -> Vec<(&'static str, Value)> {
    let weekdays = json!(["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY"]);
    vec![
        (
            "0.25 per kWh",
            json!({"currency": "EUR", "elements": [{"price_components": [
            {"type": "ENERGY", "price": "0.25", "vat": 10.0, "step_size": 1}]}]}),
        ),
        (
            "0.25 per kWh, start fee, minimum price",
            json!({"currency": "EUR",
            "min_price": {"excl_vat": "0.50", "incl_vat": "0.55"},
            "elements": [{"price_components": [
                {"type": "FLAT", "price": "0.50", "vat": 20.0, "step_size": 1},
                {"type": "ENERGY", "price": "0.25", "vat": 10.0, "step_size": 1}]}]}),
        ),
        (
            "2 per hour",
            json!({"currency": "EUR", "elements": [{"price_components": [
            {"type": "TIME", "price": "2.00", "vat": 10.0, "step_size": 60}]}]}),
        ),
        (
            "3 per hour charging, 5 per hour parking",
            json!({"currency": "EUR", "elements": [{"price_components": [
            {"type": "TIME", "price": "3.00", "vat": 10.0, "step_size": 60},
            {"type": "PARKING_TIME", "price": "5.00", "vat": 20.0, "step_size": 300}]}]}),
        ),
        (
            "start fee, 0.25 per kWh, maximum price",
            json!({"currency": "EUR",
            "max_price": {"excl_vat": "10.00", "incl_vat": "11.00"},
            "elements": [{"price_components": [
                {"type": "FLAT", "price": "0.50", "vat": 20.0, "step_size": 1},
                {"type": "ENERGY", "price": "0.25", "vat": 10.0, "step_size": 1}]}]}),
        ),
        (
            "complex",
            json!({"currency": "EUR", "elements": [
            {"price_components": [{"type": "FLAT", "price": "2.50", "vat": 15.0, "step_size": 1}]},
            {"price_components": [{"type": "TIME", "price": "1.00", "vat": 20.0, "step_size": 900}],
             "restrictions": {"max_current": 32.00}},
            {"price_components": [{"type": "TIME", "price": "2.00", "vat": 20.0, "step_size": 600}],
             "restrictions": {"min_current": 32.00, "day_of_week": weekdays}},
            {"price_components": [{"type": "TIME", "price": "1.25", "vat": 20.0, "step_size": 600}],
             "restrictions": {"min_current": 32.00, "day_of_week": ["SATURDAY", "SUNDAY"]}},
            {"price_components": [{"type": "PARKING_TIME", "price": "5.00", "vat": 10.0, "step_size": 300}],
             "restrictions": {"start_time": "09:00", "end_time": "18:00", "day_of_week": weekdays}},
            {"price_components": [{"type": "PARKING_TIME", "price": "6.00", "vat": 10.0, "step_size": 300}],
             "restrictions": {"start_time": "10:00", "end_time": "17:00", "day_of_week": ["SATURDAY"]}}]}),
        ),
        (
            "first hour and first kWh free",
            json!({"currency": "EUR", "elements": [
            {"price_components": [{"type": "PARKING_TIME", "price": "0.00", "step_size": 60}],
             "restrictions": {"min_duration": 0, "max_duration": 3600}},
            {"price_components": [{"type": "PARKING_TIME", "price": "2.00", "step_size": 60}],
             "restrictions": {"min_duration": 3600, "max_duration": 10800}},
            {"price_components": [{"type": "PARKING_TIME", "price": "3.00", "step_size": 60}],
             "restrictions": {"min_duration": 10800}},
            {"price_components": [{"type": "ENERGY", "price": "0.00", "step_size": 1}], "restrictions": {"max_kwh": 1.00}},
            {"price_components": [{"type": "ENERGY", "price": "0.20", "step_size": 1}], "restrictions": {"min_kwh": 1.00}}]}),
        ),
        (
            "free of charge",
            json!({"currency": "EUR", "elements": [{"price_components": [
            {"type": "FLAT", "price": "0.00", "step_size": 0}]}]}),
        ),
        (
            "by power",
            json!({"currency": "EUR", "elements": [
            {"price_components": [{"type": "ENERGY", "price": "0.20", "vat": 20.0, "step_size": 1}], "restrictions": {"max_power": 16.00}},
            {"price_components": [{"type": "ENERGY", "price": "0.35", "vat": 20.0, "step_size": 1}], "restrictions": {"max_power": 32.00}},
            {"price_components": [{"type": "ENERGY", "price": "0.50", "vat": 20.0, "step_size": 1}]}]}),
        ),
        (
            "a date range",
            json!({"currency": "EUR", "elements": [{"price_components": [
            {"type": "ENERGY", "price": "0.26", "vat": 21.0, "step_size": 1}],
            "restrictions": {"start_time": "09:00", "end_time": "10:00", "start_date": "2025-08-20", "end_date": "2025-08-21"}}]}),
        ),
    ]
}

#[test]
fn the_specification_s_examples_are_accepted_and_read_back_the_same() {
    for (name, body) in spec_examples() {
        let tariff = read_tariff(&body).unwrap_or_else(|p| panic!("{name}: {p:?}"));
        // What the API shows, it takes back unchanged.
        let shown = serde_json::to_value(&tariff).unwrap();
        assert_eq!(read_tariff(&shown), Ok(tariff.clone()), "{name}");
        let stored: Tariff = serde_json::from_str(&shown.to_string()).unwrap();
        assert_eq!(stored, tariff, "{name}");
    }
}

#[test]
fn the_shape_shown_keeps_money_as_strings_and_numbers_exactly() {
    let body = json!({"currency": "EUR", "min_price": {"excl_vat": "1.50"}, "elements": [{"price_components": [
        {"type": "PARKING_TIME", "price": "0.30", "vat": 20.5}],
        "restrictions": {"min_kwh": 0.1, "day_of_week": ["SUNDAY"]}}]});
    let tariff = read_tariff(&body).unwrap();
    let component = &tariff.elements[0].price_components[0];
    assert_eq!(
        (component.kind, component.step_size),
        (ComponentKind::ParkingTime, 1)
    );
    assert_eq!(component.vat, Some(Decimal::new(205, 1)));
    let restrictions = tariff.elements[0].restrictions.as_ref().unwrap();
    assert_eq!(restrictions.day_of_week, Some(vec![DayOfWeek::Sunday]));
    assert_eq!(
        serde_json::to_string(&tariff).unwrap(),
        r#"{"currency":"EUR","elements":[{"price_components":[{"type":"PARKING_TIME","price":"0.30","vat":20.5,"step_size":1}],"restrictions":{"min_kwh":0.1,"day_of_week":["SUNDAY"]}}],"min_price":{"excl_vat":"1.50","incl_vat":null},"max_price":null}"#
    );
}

#[test]
fn nulls_are_absent_and_other_keys_are_ignored() {
    let body = json!({"name": "Night", "currency": "EUR", "min_price": null, "max_price": null,
        "tariff_alt_text": [{"language": "en", "text": "cheap"}],
        "elements": [{"restrictions": null, "price_components": [
            {"type": "ENERGY", "price": "0.30", "vat": null, "step_size": null, "extra": true}]},
            {"price_components": [{"type": "TIME", "price": "1.00"}], "restrictions": {"reservation": "RESERVATION", "min_kwh": null}}]});
    let tariff = read_tariff(&body).unwrap();
    assert_eq!((tariff.min_price, tariff.max_price), (None, None));
    assert_eq!(tariff.elements[0].restrictions, None);
    assert_eq!(tariff.elements[0].price_components[0].vat, None);
    assert_eq!(tariff.elements[0].price_components[0].step_size, 1);
    assert_eq!(tariff.elements[1].restrictions, Some(Default::default()));
}
