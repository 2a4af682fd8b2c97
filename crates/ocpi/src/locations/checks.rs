//! What the operator gives a site's Location, checked as OCPI 2.2.1 wants it: coordinates in
//! OCPI's decimal form, a ParkingType, Facility values and an Hours object.

use serde_json::Value;

/// OCPI's ParkingType values.
pub const PARKING_TYPES: [&str; 6] = [
    "ALONG_MOTORWAY",
    "PARKING_GARAGE",
    "PARKING_LOT",
    "ON_DRIVEWAY",
    "ON_STREET",
    "UNDERGROUND_GARAGE",
];

/// OCPI's Facility values.
pub const FACILITIES: [&str; 20] = [
    "HOTEL",
    "RESTAURANT",
    "CAFE",
    "MALL",
    "SUPERMARKET",
    "SPORT",
    "RECREATION_AREA",
    "NATURE",
    "MUSEUM",
    "BIKE_SHARING",
    "BUS_STOP",
    "TAXI_STAND",
    "TRAM_STOP",
    "METRO_STATION",
    "TRAIN_STATION",
    "AIRPORT",
    "PARKING_LOT",
    "CARPOOL_PARKING",
    "FUEL_STATION",
    "WIFI",
];

/// Whether `text` is a latitude as OCPI writes one (`-?[0-9]{1,2}\.[0-9]{5,7}`, at most 90).
pub fn is_latitude(text: &str) -> bool {
    coordinate(text, 2, 90.0)
}

/// Whether `text` is a longitude as OCPI writes one (`-?[0-9]{1,3}\.[0-9]{5,7}`, at most 180).
pub fn is_longitude(text: &str) -> bool {
    coordinate(text, 3, 180.0)
}

fn coordinate(text: &str, whole_digits: usize, bound: f64) -> bool {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let Some((whole, fraction)) = unsigned.split_once('.') else {
        return false;
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    (1..=whole_digits).contains(&whole.len())
        && (5..=7).contains(&fraction.len())
        && digits(whole)
        && digits(fraction)
        && unsigned.parse::<f64>().is_ok_and(|v| v <= bound)
}

/// Checks an OCPI Hours object (`twentyfourseven`, `regular_hours` of `{weekday 1-7,
/// period_begin, period_end "HH:MM"}`, `exceptional_openings`/`exceptional_closings` of
/// `{period_begin, period_end}` DateTimes): what is wrong, by path, if anything.
/// The most periods each list of an Hours object holds (a week of opening times, or a year's
/// exceptions, is far fewer).
pub const MAX_PERIODS: usize = 100;

pub fn hours_problems(hours: &Value) -> Vec<(String, String)> {
    let mut problems = Vec::new();
    let mut fail = |path: String, message: &str| problems.push((path, message.to_string()));
    let Some(fields) = hours.as_object() else {
        fail(String::new(), "must be an object");
        return problems;
    };
    for key in fields.keys() {
        if ![
            "twentyfourseven",
            "regular_hours",
            "exceptional_openings",
            "exceptional_closings",
        ]
        .contains(&key.as_str())
        {
            fail(key.clone(), "is not a field of OCPI's Hours");
        }
    }
    let always = match fields.get("twentyfourseven") {
        Some(Value::Bool(b)) => Some(*b),
        _ => {
            fail("twentyfourseven".into(), "must be true or false");
            None
        }
    };
    let hhmm = |v: &Value| {
        v.as_str().is_some_and(|t| {
            let b = t.as_bytes();
            t.len() == 5
                && b[2] == b':'
                && matches!(
                    (b[0], b[1]),
                    (b'0'..=b'1', b'0'..=b'9') | (b'2', b'0'..=b'3')
                )
                && (b'0'..=b'5').contains(&b[3])
                && b[4].is_ascii_digit()
        })
    };
    match fields.get("regular_hours") {
        None | Some(Value::Null) if always == Some(false) => fail(
            "regular_hours".into(),
            "must hold a period at least when twentyfourseven is false",
        ),
        None | Some(Value::Null) => {}
        Some(Value::Array(periods)) if periods.len() > MAX_PERIODS => {
            fail(
                "regular_hours".into(),
                &format!("must hold at most {MAX_PERIODS} periods"),
            );
        }
        Some(Value::Array(periods)) => {
            if always == Some(false) && periods.is_empty() {
                fail(
                    "regular_hours".into(),
                    "must hold a period at least when twentyfourseven is false",
                );
            }
            if always == Some(true) && !periods.is_empty() {
                fail(
                    "regular_hours".into(),
                    "must be empty when twentyfourseven is true",
                );
            }
            for (i, period) in periods.iter().enumerate() {
                let weekday = period["weekday"].as_u64();
                if !weekday.is_some_and(|d| (1..=7).contains(&d)) {
                    fail(
                        format!("regular_hours.{i}.weekday"),
                        "must be 1 (Monday) to 7",
                    );
                }
                for end in ["period_begin", "period_end"] {
                    if !hhmm(&period[end]) {
                        fail(format!("regular_hours.{i}.{end}"), "must be a time HH:MM");
                    }
                }
            }
        }
        Some(_) => fail("regular_hours".into(), "must be an array"),
    }
    for exceptions in ["exceptional_openings", "exceptional_closings"] {
        match fields.get(exceptions) {
            None | Some(Value::Null) => {}
            Some(Value::Array(periods)) if periods.len() > MAX_PERIODS => {
                fail(
                    exceptions.into(),
                    &format!("must hold at most {MAX_PERIODS} periods"),
                );
            }
            Some(Value::Array(periods)) => {
                for (i, period) in periods.iter().enumerate() {
                    for end in ["period_begin", "period_end"] {
                        let ok = period[end].as_str().and_then(crate::time::parse).is_some();
                        if !ok {
                            fail(format!("{exceptions}.{i}.{end}"), "must be a DateTime");
                        }
                    }
                }
            }
            Some(_) => fail(exceptions.into(), "must be an array"),
        }
    }
    problems
}
