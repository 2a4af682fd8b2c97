//! The energy a session delivered, as a function of time.
//!
//! A charger reports its meter register now and then; between two reports cms assumes the
//! energy flowed evenly (linear interpolation in time), and after the last one that none did.
//! A register that goes backwards (a meter swap, a reset) delivered nothing over that stretch.

use rust_decimal::Decimal;

use crate::session::{Reading, millis};

/// Cumulative Wh delivered since the session's start, known at some instants (ms), in order.
pub(crate) struct EnergyCurve {
    points: Vec<(i64, Decimal)>,
}

impl EnergyCurve {
    /// From the register at the start and the readings in [start, end] that carry one.
    pub(crate) fn new(start: i64, end: i64, meter_start_wh: i64, readings: &[Reading]) -> Self {
        let mut registers: Vec<(i64, i64)> = readings
            .iter()
            .filter_map(|r| Some((millis(r.at), r.energy_wh?)))
            .filter(|(at, _)| (start..=end).contains(at))
            .collect();
        // Stable: readings at the same instant keep their order.
        registers.sort_by_key(|(at, _)| *at);
        let mut points = vec![(start, Decimal::ZERO)];
        let (mut register, mut delivered) = (meter_start_wh, Decimal::ZERO);
        for (at, wh) in registers {
            delivered += Decimal::from(wh.saturating_sub(register).max(0));
            register = wh;
            points.push((at, delivered));
        }
        EnergyCurve { points }
    }

    /// Wh delivered from the start up to `at`, including every reading at `at` itself.
    pub(crate) fn at(&self, at: i64) -> Decimal {
        let after = self.points.partition_point(|(t, _)| *t <= at);
        let Some(&(t0, e0)) = after.checked_sub(1).and_then(|i| self.points.get(i)) else {
            return Decimal::ZERO;
        };
        match self.points.get(after) {
            // The next point is strictly later, so the span is not zero.
            Some(&(t1, e1)) => e0 + (e1 - e0) * Decimal::from(at - t0) / Decimal::from(t1 - t0),
            None => e0,
        }
    }

    /// The first millisecond at which the delivered energy reaches `wh`, if it ever does.
    pub(crate) fn reaches(&self, wh: Decimal) -> Option<i64> {
        self.points.windows(2).find_map(|pair| {
            let [(t0, e0), (t1, e1)] = [pair[0], pair[1]];
            if !(e0 < wh && wh <= e1) {
                return None;
            }
            if t1 == t0 {
                return Some(t0);
            }
            // Rounded up: at that millisecond the energy is at least `wh`.
            let offset = ((wh - e0) * Decimal::from(t1 - t0) / (e1 - e0)).ceil();
            Some(t0 + i64::try_from(offset).ok()?.min(t1 - t0))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};

    fn at(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(ms).unwrap()
    }

    fn reading(ms: i64, wh: i64) -> Reading {
        Reading {
            at: at(ms),
            energy_wh: Some(wh),
            parking: None,
        }
    }

    #[test]
    fn interpolates_between_readings_and_stays_flat_after_the_last() {
        // Register 1000 at 0, 3000 at 10 s, 4000 at 20 s: 2000 Wh then 1000 Wh.
        let curve = EnergyCurve::new(
            0,
            60_000,
            1000,
            &[reading(10_000, 3000), reading(20_000, 4000)],
        );
        assert_eq!(curve.at(0), Decimal::ZERO);
        assert_eq!(curve.at(5_000), Decimal::from(1000));
        assert_eq!(curve.at(15_000), Decimal::from(2500));
        assert_eq!(curve.at(20_000), Decimal::from(3000));
        assert_eq!(curve.at(60_000), Decimal::from(3000));
    }

    #[test]
    fn a_register_going_backwards_delivers_nothing_there() {
        // 1000 -> 5000 (+4000) -> 200 (reset: +0) -> 700 (+500).
        let readings = [
            reading(1_000, 5000),
            reading(2_000, 200),
            reading(3_000, 700),
        ];
        let curve = EnergyCurve::new(0, 3_000, 1000, &readings);
        assert_eq!(curve.at(2_000), Decimal::from(4000));
        assert_eq!(curve.at(3_000), Decimal::from(4500));
        assert_eq!(curve.at(2_500), Decimal::from(4250));
    }

    #[test]
    fn finds_the_first_millisecond_a_threshold_is_reached() {
        // 3000 Wh evenly over 3 s: 1000 Wh at exactly 1 s; 1000.5 Wh at 1000.5 ms, so 1001 ms.
        let curve = EnergyCurve::new(0, 3_000, 0, &[reading(3_000, 3000)]);
        assert_eq!(curve.reaches(Decimal::from(1000)), Some(1_000));
        assert_eq!(curve.reaches(Decimal::new(10005, 1)), Some(1_001));
        assert_eq!(curve.reaches(Decimal::from(3001)), None);
        assert_eq!(curve.reaches(Decimal::ZERO), None);
    }
}
