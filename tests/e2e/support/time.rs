//! The two timestamp forms of the contract, and a check that a timestamp is "now" in UTC.

use std::time::{SystemTime, UNIX_EPOCH};

/// How far a timestamp written by the service may be from this machine's clock.
const CLOCK_SLACK_SECS: i64 = 120;

/// OCPP form: `2026-11-21T10:00:00Z` (UTC, whole seconds).
pub fn assert_ocpp_time(value: &serde_json::Value, what: &str) {
    let s = value
        .as_str()
        .unwrap_or_else(|| panic!("{what} should be a string, got {value}"));
    assert!(
        s.len() == 20 && shape_ok(s) && s.ends_with('Z'),
        "{what} should look like 2026-11-21T10:00:00Z, got {s:?}"
    );
}

/// Record form: `2026-11-21T10:00:00.000000Z` (UTC, microseconds).
pub fn assert_record_time(value: &serde_json::Value, what: &str) {
    let s = value
        .as_str()
        .unwrap_or_else(|| panic!("{what} should be a string, got {value}"));
    let micros_ok = s.len() == 27
        && s.as_bytes()[19] == b'.'
        && s[20..26].bytes().all(|b| b.is_ascii_digit())
        && s.ends_with('Z');
    assert!(
        shape_ok(s) && micros_ok,
        "{what} should look like 2026-11-21T10:00:00.000000Z, got {s:?}"
    );
}

/// A timestamp (either form) within a couple of minutes of this machine's UTC clock.
pub fn assert_recent(value: &serde_json::Value, what: &str) {
    let s = value
        .as_str()
        .unwrap_or_else(|| panic!("{what} should be a string, got {value}"));
    assert!(shape_ok(s), "{what} is not a timestamp: {s:?}");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    let at = unix_seconds(s);
    assert!(
        (at - now).abs() <= CLOCK_SLACK_SECS,
        "{what} = {s} is {}s away from now: not the current UTC time",
        at - now
    );
}

/// `YYYY-MM-DDTHH:MM:SS` with digits where digits belong.
fn shape_ok(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 20
        && b.iter().take(19).enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            _ => c.is_ascii_digit(),
        })
}

fn unix_seconds(s: &str) -> i64 {
    let n = |range: std::ops::Range<usize>| s[range].parse::<i64>().expect("digits");
    let days = days_since_epoch(n(0..4), n(5..7), n(8..10));
    days * 86_400 + n(11..13) * 3_600 + n(14..16) * 60 + n(17..19)
}

/// Days from 1970-01-01 to the given proleptic Gregorian date (years counted from March).
fn days_since_epoch(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[test]
fn epoch_arithmetic_matches_known_dates() {
    assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), 0);
    assert_eq!(unix_seconds("2000-03-01T00:00:00Z"), 951_868_800);
    assert_eq!(unix_seconds("2024-02-29T12:34:56Z"), 1_709_210_096);
}
