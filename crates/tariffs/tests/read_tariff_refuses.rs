//! `read_tariff` refuses each broken field with its path and a Laravel-style message: the
//! tariff's own fields and its price components.

mod refusals;

use cms_tariffs::read_tariff;
use refusals::{edited, refused};
use serde_json::json;

#[test]
fn currency() {
    assert_eq!(
        read_tariff(&edited("currency", None)),
        Err(vec![(
            "currency".into(),
            "The currency field is required.".into()
        )])
    );
    for code in ["EURO", "eur", "XXX", "BGN", ""] {
        refused(
            "currency",
            json!(code),
            "The currency field must be an ISO 4217 code.",
        );
    }
    refused(
        "currency",
        json!(978),
        "The currency field must be a string.",
    );
    refused(
        "currency",
        json!("EU\u{0}"),
        "The currency field must not contain NUL characters.",
    );
}

#[test]
fn elements() {
    assert_eq!(
        read_tariff(&edited("elements", None)),
        Err(vec![(
            "elements".into(),
            "The elements field is required.".into()
        )])
    );
    refused(
        "elements",
        json!({}),
        "The elements field must be an array.",
    );
    refused(
        "elements",
        json!([]),
        "The elements field must have at least 1 item.",
    );
    let many = vec![json!({"price_components": [{"type": "FLAT", "price": "1"}]}); 101];
    refused(
        "elements",
        json!(many),
        "The elements field must not have more than 100 items.",
    );
    refused(
        "elements.0",
        json!("FLAT"),
        "The elements.0 field must be an object.",
    );
}

#[test]
fn price_components() {
    let path = "elements.0.price_components";
    assert_eq!(
        read_tariff(&edited(path, None)),
        Err(vec![(
            path.into(),
            "The price components field is required.".into()
        )])
    );
    refused(
        path,
        json!([]),
        "The price components field must have at least 1 item.",
    );
    let many = vec![json!({"type": "FLAT", "price": "1"}); 11];
    refused(
        path,
        json!(many),
        "The price components field must not have more than 10 items.",
    );
    refused(
        "elements.0.price_components.0",
        json!([]),
        "The price components.0 field must be an object.",
    );
    refused(
        "elements.0.price_components.0.type",
        json!("RESERVATION"),
        "The type field must be one of ENERGY, TIME, FLAT, PARKING_TIME.",
    );
    let missing = "elements.0.price_components.0.type";
    assert_eq!(
        read_tariff(&edited(missing, None)),
        Err(vec![(missing.into(), "The type field is required.".into())])
    );
}

#[test]
fn price() {
    let path = "elements.0.price_components.0.price";
    refused(
        path,
        json!(0.30),
        "The price must be a decimal string such as \"0.30\".",
    );
    refused(
        path,
        json!("0,30"),
        "The price must be a decimal string such as \"0.30\".",
    );
    refused(path, json!("-0.30"), "The price field must be at least 0.");
    refused(
        path,
        json!("0.00001"),
        "The price field must have at most 4 decimal places.",
    );
    refused(
        path,
        json!("1000000"),
        "The price field must be less than 1000000.",
    );
    assert_eq!(
        read_tariff(&edited(path, None)),
        Err(vec![(path.into(), "The price field is required.".into())])
    );
}

#[test]
fn vat_and_step_size() {
    let vat = "elements.0.price_components.0.vat";
    refused(vat, json!("21"), "The vat field must be a number.");
    for bad in [json!(-1), json!(100.5)] {
        refused(vat, bad, "The vat field must be between 0 and 100.");
    }
    let step = "elements.0.price_components.0.step_size";
    refused(step, json!(-1), "The step size field must be at least 0.");
    for bad in [json!(1.5), json!("1")] {
        refused(step, bad, "The step size field must be an integer.");
    }
    refused(
        step,
        json!(4_294_967_296_u64),
        "The step size field must not be greater than 4294967295.",
    );
}
