//! Restrictions that flip in the middle of a stretch between two readings: the session must
//! be cut there, or the whole stretch is priced by what held at its start. The tariffs are
//! the OCPI 2.2.1 specification's examples where one exists.

mod common;

use chrono_tz::Tz;
use cms_tariffs::ComponentKind::{Energy, ParkingTime};
use common::{component, cost, meter, parked, tariff, total};
use serde_json::json;

#[test]
fn a_local_time_that_does_not_exist_turns_at_the_summer_time_jump() {
    // Amsterdam, 2026-03-29: at 01:00Z the clock goes from 02:00 CET to 03:00 CEST, so
    // "from 02:30" holds from 01:00Z on. 00:30Z-02:00Z (01:30 CET to 04:00 CEST), 3000 Wh
    // evenly over 1.5 h (2 kW), readings only at the ends:
    // 00:30Z-01:00Z: 1 kWh x 0.20 = 0.20; 01:00Z-02:00Z: 2 kWh x 0.40 = 0.80. Total 1.00.
    let t = tariff(json!({"currency": "EUR", "elements": [
        {"price_components": [{"type": "ENERGY", "price": "0.40", "step_size": 1}], "restrictions": {"start_time": "02:30"}},
        {"price_components": [{"type": "ENERGY", "price": "0.20", "step_size": 1}]}]}));
    let readings = [meter("2026-03-29T02:00:00Z", 3000)];
    let c = cost(
        &t,
        "2026-03-29T00:30:00Z",
        "2026-03-29T02:00:00Z",
        &readings,
        Tz::Europe__Amsterdam,
    );
    assert_eq!(total(&c), ("1.00", "1.00"));
}

#[test]
fn day_of_week_turns_at_local_midnight() {
    // Friday 2026-01-16 23:00 to Saturday 01:00 in Amsterdam (22:00Z-00:00Z), 4 kWh evenly.
    // Weekdays 0.30, weekend 0.50: 2 kWh x 0.30 + 2 kWh x 0.50 = 1.60.
    let weekdays = ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY"];
    let t = tariff(json!({"currency": "EUR", "elements": [
        {"price_components": [{"type": "ENERGY", "price": "0.30", "step_size": 1}], "restrictions": {"day_of_week": weekdays}},
        {"price_components": [{"type": "ENERGY", "price": "0.50", "step_size": 1}], "restrictions": {"day_of_week": ["SATURDAY", "SUNDAY"]}}]}));
    let readings = [meter("2026-01-17T00:00:00Z", 4000)];
    let c = cost(
        &t,
        "2026-01-16T22:00:00Z",
        "2026-01-17T00:00:00Z",
        &readings,
        Tz::Europe__Amsterdam,
    );
    assert_eq!(total(&c), ("1.60", "1.60"));
}

#[test]
fn the_first_kwh_free_turns_where_the_energy_reaches_it() {
    // The spec's "first hour and first kWh free" energy part: 0.00 below 1 kWh, 0.20 from it.
    // 3 kWh evenly in an hour, one reading at the end: 1 kWh is reached at 20 minutes.
    // 1 kWh x 0.00 + 2 kWh x 0.20 = 0.40.
    let t = tariff(json!({"currency": "EUR", "elements": [
        {"price_components": [{"type": "ENERGY", "price": "0.00", "step_size": 1}], "restrictions": {"max_kwh": 1.0}},
        {"price_components": [{"type": "ENERGY", "price": "0.20", "step_size": 1}], "restrictions": {"min_kwh": 1.0}}]}));
    let c = cost(
        &t,
        "2026-01-15T10:00:00Z",
        "2026-01-15T11:00:00Z",
        &[meter("2026-01-15T11:00:00Z", 3000)],
        Tz::UTC,
    );
    assert_eq!(component(&c, Energy), ("3", "0.40"));
}

#[test]
fn parking_is_free_for_the_first_hour_of_the_session() {
    // The spec's parking part of the same example: PARKING_TIME free for the session's first
    // hour, 2.00/h until 3 h. Parked from 10:30 to 12:00 with no energy: 30 min free, then
    // 1 h x 2.00 = 2.00 (step 60 s: exact minutes already).
    let t = tariff(json!({"currency": "EUR", "elements": [
        {"price_components": [{"type": "PARKING_TIME", "price": "0.00", "step_size": 60}], "restrictions": {"min_duration": 0, "max_duration": 3600}},
        {"price_components": [{"type": "PARKING_TIME", "price": "2.00", "step_size": 60}], "restrictions": {"min_duration": 3600, "max_duration": 10800}}]}));
    let readings = [
        meter("2026-01-15T10:30:00Z", 5000),
        parked("2026-01-15T10:30:00Z", true),
    ];
    let c = cost(
        &t,
        "2026-01-15T10:00:00Z",
        "2026-01-15T12:00:00Z",
        &readings,
        Tz::UTC,
    );
    assert_eq!(component(&c, ParkingTime), ("1.5", "2.00"));
}

#[test]
fn max_duration_prices_by_the_session_s_age() {
    // The spec's max_duration example: 0.00 in the first 30 min, 0.25 until 1 h, 0.40 after.
    // 15 kWh evenly over 1.5 h (10 kW), one reading at the end: 5 kWh in each half hour.
    // 5 x 0.00 + 5 x 0.25 + 5 x 0.40 = 3.25.
    let t = tariff(json!({"currency": "EUR", "elements": [
        {"price_components": [{"type": "ENERGY", "price": "0.00", "vat": 20, "step_size": 1}], "restrictions": {"max_duration": 1800}},
        {"price_components": [{"type": "ENERGY", "price": "0.25", "vat": 20, "step_size": 1}], "restrictions": {"max_duration": 3600}},
        {"price_components": [{"type": "ENERGY", "price": "0.40", "vat": 20, "step_size": 1}]}]}));
    let c = cost(
        &t,
        "2026-01-15T10:00:00Z",
        "2026-01-15T11:30:00Z",
        &[meter("2026-01-15T11:30:00Z", 15_000)],
        Tz::UTC,
    );
    assert_eq!(total(&c), ("3.25", "3.90"));
}

#[test]
fn max_power_sees_each_stretch_s_average_power() {
    // The spec's max_power example: 0.20 below 16 kW, 0.35 below 32 kW, 0.50 otherwise.
    // An hour at 10 kW (10 kWh), then an hour at 20 kW (20 kWh):
    // 10 x 0.20 + 20 x 0.35 = 9.00.
    let t = tariff(json!({"currency": "EUR", "elements": [
        {"price_components": [{"type": "ENERGY", "price": "0.20", "step_size": 1}], "restrictions": {"max_power": 16.0}},
        {"price_components": [{"type": "ENERGY", "price": "0.35", "step_size": 1}], "restrictions": {"max_power": 32.0}},
        {"price_components": [{"type": "ENERGY", "price": "0.50", "step_size": 1}]}]}));
    let readings = [
        meter("2026-01-15T11:00:00Z", 10_000),
        meter("2026-01-15T12:00:00Z", 30_000),
    ];
    let c = cost(
        &t,
        "2026-01-15T10:00:00Z",
        "2026-01-15T12:00:00Z",
        &readings,
        Tz::UTC,
    );
    assert_eq!(component(&c, Energy), ("30", "9.00"));
}
