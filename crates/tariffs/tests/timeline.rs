//! Sessions priced from their readings, with the arithmetic worked by hand.

mod common;

use chrono_tz::Tz;
use cms_tariffs::ComponentKind::{Energy, Flat, ParkingTime, Time};
use cms_tariffs::{PricingError, Session, price};
use common::{at, component, cost, meter, parked, tariff, total};
use serde_json::json;

#[test]
fn energy_time_and_flat_for_an_hour() {
    // 10 kWh x 0.30 = 3.00, 1 h x 2.00 = 2.00, FLAT 0.50: 5.50 excl; all at 20% VAT: 6.60.
    let t = tariff(
        json!({"currency": "EUR", "elements": [{"price_components": [
        {"type": "ENERGY", "price": "0.30", "vat": 20, "step_size": 1},
        {"type": "TIME", "price": "2.00", "vat": 20, "step_size": 1},
        {"type": "FLAT", "price": "0.50", "vat": 20, "step_size": 1}]}]}),
    );
    // 10 kWh in six readings, one every 10 minutes.
    let readings = [
        meter("2026-01-15T10:10:00Z", 1700),
        meter("2026-01-15T10:20:00Z", 3300),
        meter("2026-01-15T10:30:00Z", 5000),
        meter("2026-01-15T10:40:00Z", 6700),
        meter("2026-01-15T10:50:00Z", 8300),
        meter("2026-01-15T11:00:00Z", 10_000),
    ];
    let c = cost(
        &t,
        "2026-01-15T10:00:00Z",
        "2026-01-15T11:00:00Z",
        &readings,
        Tz::UTC,
    );
    assert_eq!(total(&c), ("5.50", "6.60"));
    assert_eq!(component(&c, Energy), ("10", "3.00"));
    assert_eq!(component(&c, Time), ("1", "2.00"));
    assert_eq!(component(&c, Flat), ("1", "0.50"));
    assert_eq!(c.currency, "EUR");
}

#[test]
fn energy_is_split_by_interpolation_at_a_local_time_boundary() {
    // 17:30-18:30 in Amsterdam in January (UTC+1). Register 0 at 17:30, 2000 at 17:50, 4000
    // at 18:10, 6000 at 18:30. Before 18:00: 2000 + half of the 2000 of 17:50-18:10 = 3 kWh
    // x 0.20 = 0.60; from 18:00: 3 kWh x 0.40 = 1.20. Total 1.80 (no VAT: incl = excl).
    let t = tariff(json!({"currency": "EUR", "elements": [
        {"price_components": [{"type": "ENERGY", "price": "0.20", "step_size": 1}], "restrictions": {"end_time": "18:00"}},
        {"price_components": [{"type": "ENERGY", "price": "0.40", "step_size": 1}], "restrictions": {"start_time": "18:00"}}]}));
    let readings = [
        meter("2026-01-15T16:30:00Z", 0),
        meter("2026-01-15T16:50:00Z", 2000),
        meter("2026-01-15T17:10:00Z", 4000),
        meter("2026-01-15T17:30:00Z", 6000),
    ];
    let c = cost(
        &t,
        "2026-01-15T16:30:00Z",
        "2026-01-15T17:30:00Z",
        &readings,
        Tz::Europe__Amsterdam,
    );
    assert_eq!(total(&c), ("1.80", "1.80"));
    assert_eq!(component(&c, Energy), ("6", "1.80"));
}

#[test]
fn parked_without_power_is_parking_time() {
    // 30 min charging 5 kWh, then 30 min SuspendedEV with no energy.
    // ENERGY 5 x 0.30 = 1.50; TIME 0.5 h x 2.00 = 1.00; PARKING_TIME 0.5 h x 1.00 = 0.50.
    let t = tariff(
        json!({"currency": "EUR", "elements": [{"price_components": [
        {"type": "ENERGY", "price": "0.30", "step_size": 1},
        {"type": "TIME", "price": "2.00", "step_size": 1},
        {"type": "PARKING_TIME", "price": "1.00", "step_size": 1}]}]}),
    );
    let readings = [
        meter("2026-01-15T10:30:00Z", 5000),
        parked("2026-01-15T10:30:00Z", true),
        meter("2026-01-15T11:00:00Z", 5000),
    ];
    let c = cost(
        &t,
        "2026-01-15T10:00:00Z",
        "2026-01-15T11:00:00Z",
        &readings,
        Tz::UTC,
    );
    assert_eq!(component(&c, ParkingTime), ("0.5", "0.50"));
    assert_eq!(component(&c, Time), ("0.5", "1.00"));
    assert_eq!(total(&c), ("3.00", "3.00"));
}

#[test]
fn parked_but_drawing_power_is_still_charging() {
    // SuspendedEV from 10:30, yet 1 kWh flows by 11:00 (2 kW > 0.1 kW): a full hour of TIME.
    let t = tariff(
        json!({"currency": "EUR", "elements": [{"price_components": [
        {"type": "TIME", "price": "2.00", "step_size": 1},
        {"type": "PARKING_TIME", "price": "1.00", "step_size": 1}]}]}),
    );
    let readings = [
        parked("2026-01-15T10:30:00Z", true),
        meter("2026-01-15T11:00:00Z", 1000),
    ];
    let c = cost(
        &t,
        "2026-01-15T10:00:00Z",
        "2026-01-15T11:00:00Z",
        &readings,
        Tz::UTC,
    );
    assert_eq!(component(&c, Time), ("1", "2.00"));
    assert_eq!(component(&c, ParkingTime), ("0", "0.00"));
}

#[test]
fn energy_step_size_bills_whole_blocks() {
    // 10.2 kWh in blocks of 1000 Wh: 11 kWh x 0.30 = 3.30.
    let t = tariff(
        json!({"currency": "EUR", "elements": [{"price_components": [
        {"type": "ENERGY", "price": "0.30", "step_size": 1000}]}]}),
    );
    let c = cost(
        &t,
        "2026-01-15T10:00:00Z",
        "2026-01-15T11:00:00Z",
        &[meter("2026-01-15T11:00:00Z", 10_200)],
        Tz::UTC,
    );
    assert_eq!(component(&c, Energy), ("11", "3.30"));
    assert_eq!(total(&c), ("3.30", "3.30"));
}

#[test]
fn min_price_raises_the_total_but_not_the_components() {
    // 1 kWh x 0.30 = 0.30 (0.363 with 21% VAT), below the 2.00 / 2.42 minimum.
    let mut t = tariff(
        json!({"currency": "EUR", "min_price": {"excl_vat": "2.00", "incl_vat": "2.42"},
        "elements": [{"price_components": [{"type": "ENERGY", "price": "0.30", "vat": 21, "step_size": 1}]}]}),
    );
    let readings = [meter("2026-01-15T10:10:00Z", 1000)];
    let c = cost(
        &t,
        "2026-01-15T10:00:00Z",
        "2026-01-15T10:10:00Z",
        &readings,
        Tz::UTC,
    );
    assert_eq!(total(&c), ("2.00", "2.42"));
    assert_eq!(component(&c, Energy), ("1", "0.30"));
    // Without incl_vat the minimum keeps the VAT share of what was consumed: 2.00 x 1.21.
    t.min_price.as_mut().unwrap().incl_vat = None;
    let c = cost(
        &t,
        "2026-01-15T10:00:00Z",
        "2026-01-15T10:10:00Z",
        &readings,
        Tz::UTC,
    );
    assert_eq!(total(&c), ("2.00", "2.42"));
}

#[test]
fn max_price_caps_the_total() {
    // 20 kWh x 0.50 = 10.00, capped at 8.00 / 8.80.
    let t = tariff(
        json!({"currency": "EUR", "max_price": {"excl_vat": "8.00", "incl_vat": "8.80"},
        "elements": [{"price_components": [{"type": "ENERGY", "price": "0.50", "vat": 10, "step_size": 1}]}]}),
    );
    let c = cost(
        &t,
        "2026-01-15T10:00:00Z",
        "2026-01-15T12:00:00Z",
        &[meter("2026-01-15T12:00:00Z", 20_000)],
        Tz::UTC,
    );
    assert_eq!(total(&c), ("8.00", "8.80"));
    assert_eq!(component(&c, Energy), ("20", "10.00"));
}

#[test]
fn a_running_session_accrues_time_but_not_energy_after_its_last_reading() {
    // Priced at 11:00 ("now"); the last reading, 5 kWh, was at 10:30.
    // TIME 1 h x 2.00 = 2.00; ENERGY 5 kWh x 0.30 = 1.50.
    let t = tariff(
        json!({"currency": "EUR", "elements": [{"price_components": [
        {"type": "ENERGY", "price": "0.30", "step_size": 1},
        {"type": "TIME", "price": "2.00", "step_size": 1}]}]}),
    );
    let readings = [meter("2026-01-15T10:30:00Z", 5000)];
    let c = cost(
        &t,
        "2026-01-15T10:00:00Z",
        "2026-01-15T11:00:00Z",
        &readings,
        Tz::UTC,
    );
    assert_eq!(component(&c, Time), ("1", "2.00"));
    assert_eq!(component(&c, Energy), ("5", "1.50"));
    // Ten minutes later, still no reading: only time has grown (1 h 10 min x 2.00 = 2.33).
    let c = cost(
        &t,
        "2026-01-15T10:00:00Z",
        "2026-01-15T11:10:00Z",
        &readings,
        Tz::UTC,
    );
    assert_eq!(component(&c, Time), ("1.1667", "2.33"));
    assert_eq!(component(&c, Energy), ("5", "1.50"));
}

#[test]
fn a_session_ending_before_it_starts_is_refused() {
    let t = tariff(
        json!({"currency": "EUR", "elements": [{"price_components": [
        {"type": "FLAT", "price": "1.00", "step_size": 1}]}]}),
    );
    let session = Session {
        started_at: at("2026-01-15T11:00:00Z"),
        ended_at: at("2026-01-15T10:00:00Z"),
        meter_start_wh: 0,
        readings: &[],
        time_zone: Tz::UTC,
    };
    assert!(matches!(
        price(&t, &session),
        Err(PricingError::EndsBeforeStart { .. })
    ));
}

#[test]
fn a_session_of_no_time_still_pays_its_flat_fee() {
    let t = tariff(
        json!({"currency": "EUR", "elements": [{"price_components": [
        {"type": "FLAT", "price": "1.00", "vat": 21, "step_size": 1}]}]}),
    );
    let c = cost(
        &t,
        "2026-01-15T10:00:00Z",
        "2026-01-15T10:00:00Z",
        &[],
        Tz::UTC,
    );
    assert_eq!(total(&c), ("1.00", "1.21"));
}
