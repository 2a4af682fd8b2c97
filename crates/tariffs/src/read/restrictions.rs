//! A tariff element's restrictions.

use chrono::{NaiveDate, NaiveTime};
use rust_decimal::Decimal;
use serde_json::{Map, Value};

use super::problems::{Problems, attribute, join, non_negative, object, present, string, whole};
use crate::model::{DayOfWeek, Restrictions};

/// Durations are u64 seconds in OCPI; the engine keeps them as i64 milliseconds.
const MAX_DURATION_S: u64 = (i64::MAX / 1000) as u64;

const TIME_RULE: &str = "must match the format HH:MM (00:00 to 23:59)";
const DATE_RULE: &str = "must be a valid date in the format YYYY-MM-DD";

pub(crate) fn restrictions(
    value: &Value,
    path: &str,
    problems: &mut Problems,
) -> Option<Restrictions> {
    let fields = Fields {
        fields: object(value, path, problems)?,
        path,
    };
    let before = problems.0.len();
    let [start_time, end_time] =
        ["start_time", "end_time"].map(|key| fields.clock(key, parse_time, TIME_RULE, problems));
    let [start_date, end_date] =
        ["start_date", "end_date"].map(|key| fields.clock(key, parse_date, DATE_RULE, problems));
    if let (Some(start), Some(end)) = (&start_date, &end_date)
        && parse_date(start) >= parse_date(end)
    {
        let message = "The start date field must be a date before end date.";
        problems.add(&join(path, "start_date"), message.to_owned());
    }
    let [
        min_kwh,
        max_kwh,
        min_current,
        max_current,
        min_power,
        max_power,
    ] = [
        "min_kwh",
        "max_kwh",
        "min_current",
        "max_current",
        "min_power",
        "max_power",
    ]
    .map(|key| fields.amount(key, problems));
    let [min_duration, max_duration] =
        ["min_duration", "max_duration"].map(|key| fields.seconds(key, problems));
    let seconds = |s: Option<u64>| s.map(Decimal::from);
    let pairs = [
        ("kwh", min_kwh, max_kwh),
        ("current", min_current, max_current),
        ("power", min_power, max_power),
        ("duration", seconds(min_duration), seconds(max_duration)),
    ];
    for (what, min, max) in pairs {
        ordered(path, what, min, max, problems);
    }
    let day_of_week = present(fields.fields, "day_of_week")
        .and_then(|v| days(v, &join(path, "day_of_week"), problems));
    if problems.0.len() > before {
        return None;
    }
    Some(Restrictions {
        start_time,
        end_time,
        start_date,
        end_date,
        min_kwh,
        max_kwh,
        min_current,
        max_current,
        min_power,
        max_power,
        min_duration,
        max_duration,
        day_of_week,
    })
}

/// The restrictions' fields: each reader gives None when the field is absent or refused.
struct Fields<'a> {
    fields: &'a Map<String, Value>,
    path: &'a str,
}

impl Fields<'_> {
    /// A time or date string that `parse` takes.
    fn clock<T>(
        &self,
        key: &str,
        parse: fn(&str) -> Option<T>,
        rule: &str,
        problems: &mut Problems,
    ) -> Option<String> {
        let field = join(self.path, key);
        let text = string(present(self.fields, key)?, &field, problems)?;
        if parse(text).is_none() {
            problems.add(&field, format!("The {} field {rule}.", attribute(&field)));
            return None;
        }
        Some(text.to_owned())
    }

    /// A number, zero or more.
    fn amount(&self, key: &str, problems: &mut Problems) -> Option<Decimal> {
        non_negative(present(self.fields, key)?, &join(self.path, key), problems)
    }

    /// Whole seconds.
    fn seconds(&self, key: &str, problems: &mut Problems) -> Option<u64> {
        whole(
            present(self.fields, key)?,
            &join(self.path, key),
            MAX_DURATION_S,
            problems,
        )
    }
}

/// "HH:MM", 00:00 to 23:59, exactly five characters.
pub(crate) fn parse_time(text: &str) -> Option<NaiveTime> {
    let b = text.as_bytes();
    if b.len() != 5 || b[2] != b':' {
        return None;
    }
    let two = |i: usize| {
        (b[i].is_ascii_digit() && b[i + 1].is_ascii_digit())
            .then(|| u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0'))
    };
    NaiveTime::from_hms_opt(two(0)?, two(3)?, 0)
}

/// "YYYY-MM-DD", a real calendar date, exactly ten characters.
pub(crate) fn parse_date(text: &str) -> Option<NaiveDate> {
    let shape = text.len() == 10
        && text.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    shape
        .then(|| NaiveDate::parse_from_str(text, "%Y-%m-%d").ok())
        .flatten()
}

/// min_{what} <= max_{what}, reported on the min field.
fn ordered(
    path: &str,
    what: &str,
    min: Option<Decimal>,
    max: Option<Decimal>,
    problems: &mut Problems,
) {
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        let field = join(path, format!("min_{what}"));
        problems.add(
            &field,
            format!("The min {what} field must be less than or equal to max {what}."),
        );
    }
}

/// A non-empty list of distinct day names.
fn days(value: &Value, path: &str, problems: &mut Problems) -> Option<Vec<DayOfWeek>> {
    let items = super::problems::array(value, path, 1, usize::MAX, problems)?;
    let before = problems.0.len();
    let mut days = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = join(path, i);
        let Some(name) = string(item, &field, problems) else {
            continue;
        };
        match DayOfWeek::ALL.into_iter().find(|d| d.name() == name) {
            Some(day) if days.contains(&day) => {
                let shown = attribute(&field);
                problems.add(&field, format!("The {shown} field has a duplicate value."));
            }
            Some(day) => days.push(day),
            None => {
                let names: Vec<&str> = DayOfWeek::ALL.iter().map(|d| d.name()).collect();
                let (shown, names) = (attribute(&field), names.join(", "));
                problems.add(&field, format!("The {shown} field must be one of {names}."));
            }
        }
    }
    (problems.0.len() == before).then_some(days)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_hh_mm_on_a_24_hour_clock() {
        assert_eq!(parse_time("00:00"), NaiveTime::from_hms_opt(0, 0, 0));
        assert_eq!(parse_time("23:59"), NaiveTime::from_hms_opt(23, 59, 0));
        for bad in ["24:00", "12:60", "9:30", "09:30:00", "09-30", "0a:30", ""] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn dates_are_real_and_zero_padded() {
        assert!(parse_date("2024-02-29").is_some());
        for bad in [
            "2023-02-29",
            "2024-2-01",
            "2024-13-01",
            "20240101",
            "2024-01-01T00:00",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }
}
