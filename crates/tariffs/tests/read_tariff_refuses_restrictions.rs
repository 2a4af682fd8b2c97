//! `read_tariff` refuses each broken field with its path and a Laravel-style message:
//! restrictions, price limits, and many problems at once.

mod refusals;

use cms_tariffs::read_tariff;
use refusals::{edited, refused, refused_at};
use serde_json::json;

#[test]
fn restriction_times_and_dates() {
    let r = "elements.0.restrictions";
    refused(r, json!([]), "The restrictions field must be an object.");
    for bad in ["24:00", "8:00", "08:00:00"] {
        refused(
            &format!("{r}.start_time"),
            json!(bad),
            "The start time field must match the format HH:MM (00:00 to 23:59).",
        );
    }
    refused(
        &format!("{r}.end_time"),
        json!(1800),
        "The end time field must be a string.",
    );
    refused(
        &format!("{r}.end_date"),
        json!("2026-02-30"),
        "The end date field must be a valid date in the format YYYY-MM-DD.",
    );
    let backwards = json!({"start_date": "2026-01-02", "end_date": "2026-01-02"});
    refused_at(
        r,
        backwards,
        &format!("{r}.start_date"),
        "The start date field must be a date before end date.",
    );
}

#[test]
fn restriction_amounts_and_durations() {
    let r = "elements.0.restrictions";
    refused(
        &format!("{r}.min_power"),
        json!(-1),
        "The min power field must be at least 0.",
    );
    refused(
        &format!("{r}.max_current"),
        json!("16"),
        "The max current field must be a number.",
    );
    refused(
        &format!("{r}.min_duration"),
        json!(1.5),
        "The min duration field must be an integer.",
    );
    for (what, min, max) in [
        ("kwh", json!(10), json!(5)),
        ("current", json!(32), json!(16)),
        ("power", json!(22), json!(11)),
        ("duration", json!(3600), json!(1800)),
    ] {
        let body = edited(
            r,
            Some(json!({format!("min_{what}"): min, format!("max_{what}"): max})),
        );
        let message = format!("The min {what} field must be less than or equal to max {what}.");
        assert_eq!(
            read_tariff(&body),
            Err(vec![(format!("{r}.min_{what}"), message)])
        );
    }
}

#[test]
fn restriction_days() {
    let days = "elements.0.restrictions.day_of_week";
    refused(
        days,
        json!("MONDAY"),
        "The day of week field must be an array.",
    );
    refused(
        days,
        json!([]),
        "The day of week field must have at least 1 item.",
    );
    let body = edited(days, Some(json!(["MONDAY", "FUNDAY", "MONDAY"])));
    assert_eq!(
        read_tariff(&body),
        Err(vec![
            (format!("{days}.1"), "The day of week.1 field must be one of MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY, SATURDAY, SUNDAY.".into()),
            (format!("{days}.2"), "The day of week.2 field has a duplicate value.".into()),
        ])
    );
}

#[test]
fn price_limits() {
    refused(
        "min_price",
        json!("1.00"),
        "The min price field must be an object.",
    );
    refused_at(
        "min_price",
        json!({"incl_vat": "1.00"}),
        "min_price.excl_vat",
        "The excl vat field is required.",
    );
    refused(
        "min_price.excl_vat",
        json!(1),
        "The excl vat must be a decimal string such as \"0.30\".",
    );
    let below_min = "The min price field must be less than or equal to max price.";
    refused_at(
        "max_price",
        json!({"excl_vat": "0.50"}),
        "min_price",
        below_min,
    );
    let body = edited(
        "min_price",
        Some(json!({"excl_vat": "1.00", "incl_vat": "0.99"})),
    );
    let message = "The incl vat field must be greater than or equal to excl vat.";
    assert_eq!(
        read_tariff(&body),
        Err(vec![("min_price.incl_vat".into(), message.into())])
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    let body = json!({"currency": "eur", "min_price": {"excl_vat": "5.00"}, "max_price": {"excl_vat": "4.00"},
        "elements": [{"price_components": [{"type": "ENERGY", "price": 0.3, "step_size": -1}]},
                     {"price_components": []}]});
    let paths: Vec<String> = read_tariff(&body)
        .unwrap_err()
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    let expected = [
        "currency",
        "elements.0.price_components.0.price",
        "elements.0.price_components.0.step_size",
        "elements.1.price_components",
        "min_price",
    ];
    assert_eq!(paths, expected);
    let nothing = read_tariff(&json!("EUR")).unwrap_err();
    assert_eq!(
        nothing,
        vec![
            ("currency".into(), "The currency field is required.".into()),
            ("elements".into(), "The elements field is required.".into()),
        ]
    );
}

#[test]
fn restriction_amounts_stay_far_from_the_arithmetics_limits() {
    let r = "elements.0.restrictions";
    refused(
        &format!("{r}.min_kwh"),
        json!(1e26),
        "The min kwh field must not be greater than 1000000000.",
    );
}
