//! The instants where a tariff's clock-based restrictions may change their verdict.
//!
//! The pricing engine checks restrictions only at the start of each charging period, so every
//! instant where one can flip must start a period: the local times named in start_time and
//! end_time, local midnight (day_of_week, start_date and end_date all turn there), and the
//! instants the local clock jumps (summer time), where "local time >= 02:30" can flip without
//! the clock ever showing 02:30.

use std::collections::BTreeSet;

use chrono::{Days, NaiveTime, Offset, TimeDelta, TimeZone};
use chrono_tz::Tz;

use crate::model::Tariff;
use crate::read::parse_time;
use crate::session::{instant, millis};

/// Millisecond instants strictly inside (from, to) where a clock-based restriction may flip.
pub(crate) fn clock_boundaries(tariff: &Tariff, tz: Tz, from: i64, to: i64) -> BTreeSet<i64> {
    let mut times = BTreeSet::from([NaiveTime::MIN]);
    for restrictions in tariff
        .elements
        .iter()
        .filter_map(|e| e.restrictions.as_ref())
    {
        let named = [&restrictions.start_time, &restrictions.end_time];
        times.extend(named.into_iter().flatten().filter_map(|t| parse_time(t)));
    }
    let mut found = offset_changes(tz, from, to);
    // A day's margin either side: a clock turned back at midnight shows a date twice.
    let first = instant(from).with_timezone(&tz).date_naive() - Days::new(1);
    let last = instant(to).with_timezone(&tz).date_naive() + Days::new(1);
    for day in first.iter_days().take_while(|d| *d <= last) {
        for time in &times {
            // A time the clock skips that day (summer time) has no instant; the jump itself is
            // among the offset changes. A time shown twice (winter time) is a boundary twice.
            let local = tz.from_local_datetime(&day.and_time(*time));
            found.extend(
                local
                    .earliest()
                    .into_iter()
                    .chain(local.latest())
                    .map(|at| millis(at.to_utc())),
            );
        }
    }
    found.retain(|ms| from < *ms && *ms < to);
    found
}

/// The instants in (from, to) at which the zone's UTC offset changes. Zones change offset at
/// most a few times a year and never twice within an hour, so an hourly scan finds every
/// change and a bisection pins it to the millisecond.
fn offset_changes(tz: Tz, from: i64, to: i64) -> BTreeSet<i64> {
    let offset = |ms: i64| tz.offset_from_utc_datetime(&instant(ms).naive_utc()).fix();
    let hour = TimeDelta::hours(1).num_milliseconds();
    let mut changes = BTreeSet::new();
    let mut start = from;
    while start < to {
        let end = start.saturating_add(hour).min(to);
        if offset(start) != offset(end) {
            let (mut before, mut after) = (start, end);
            while after - before > 1 {
                let middle = before + (after - before) / 2;
                if offset(middle) == offset(start) {
                    before = middle;
                } else {
                    after = middle;
                }
            }
            changes.insert(after);
        }
        start = end;
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Restrictions, TariffElement};
    use chrono::{DateTime, Utc};

    fn ms(text: &str) -> i64 {
        millis(text.parse::<DateTime<Utc>>().unwrap())
    }

    fn tariff_with_times(times: &[(&str, &str)]) -> Tariff {
        let elements = times
            .iter()
            .map(|(start, end)| TariffElement {
                price_components: vec![],
                restrictions: Some(Restrictions {
                    start_time: Some((*start).to_owned()),
                    end_time: Some((*end).to_owned()),
                    ..Restrictions::default()
                }),
            })
            .collect();
        Tariff {
            currency: "EUR".into(),
            elements,
            min_price: None,
            max_price: None,
        }
    }

    #[test]
    fn local_times_and_midnight_in_winter_amsterdam() {
        // UTC+1: 18:00 local is 17:00Z, midnight local is 23:00Z.
        let tariff = tariff_with_times(&[("18:00", "07:00")]);
        let found = clock_boundaries(
            &tariff,
            Tz::Europe__Amsterdam,
            ms("2026-01-15T12:00:00Z"),
            ms("2026-01-16T12:00:00Z"),
        );
        let expected = [
            "2026-01-15T17:00:00Z",
            "2026-01-15T23:00:00Z",
            "2026-01-16T06:00:00Z",
        ];
        assert_eq!(found, expected.iter().map(|t| ms(t)).collect());
    }

    #[test]
    fn a_skipped_local_time_gives_way_to_the_jump() {
        // 2026-03-29 Amsterdam: 02:00 CET becomes 03:00 CEST at 01:00Z; 02:30 never happens.
        let tariff = tariff_with_times(&[("02:30", "04:00")]);
        let found = clock_boundaries(
            &tariff,
            Tz::Europe__Amsterdam,
            ms("2026-03-29T00:00:00Z"),
            ms("2026-03-29T03:00:00Z"),
        );
        // The jump, and 04:00 CEST = 02:00Z.
        let expected = ["2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"];
        assert_eq!(found, expected.iter().map(|t| ms(t)).collect());
    }

    #[test]
    fn a_repeated_local_time_is_a_boundary_both_times() {
        // 2026-10-25 Amsterdam: 03:00 CEST becomes 02:00 CET at 01:00Z; 02:30 happens twice.
        let tariff = tariff_with_times(&[("02:30", "02:30")]);
        let found = clock_boundaries(
            &tariff,
            Tz::Europe__Amsterdam,
            ms("2026-10-24T23:00:00Z"),
            ms("2026-10-25T03:00:00Z"),
        );
        let expected = [
            "2026-10-25T00:30:00Z",
            "2026-10-25T01:00:00Z",
            "2026-10-25T01:30:00Z",
        ];
        assert_eq!(found, expected.iter().map(|t| ms(t)).collect());
    }
}
