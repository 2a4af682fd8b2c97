//! The chart's axes: a log scale labelled 1-2-5 (plotters' own log axis labels only decades),
//! and labels that read well: 1.5k frames/s, 0.05 ms.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, KeyPointWeight};
use plotters::prelude::Ranged;

/// A base-10 log axis in whole decades, labelled 1-2-5 (plotters' own labels only decades).
#[derive(Clone, Debug, PartialEq)]
pub struct LogAxis {
    /// Decade exponents of the bottom and the top.
    low: i32,
    high: i32,
}

impl LogAxis {
    /// From the decade below `low` to a decade well above `high` (room for the legend).
    pub fn around(low: f64, high: f64) -> Self {
        let low = low.log10().floor() as i32;
        let high = ((high * 3.0).log10().ceil() as i32).max(low + 1);
        Self { low, high }
    }

    /// Around the values given (milliseconds: none below a microsecond); one decade when there
    /// are none.
    pub fn spanning(values: impl Iterator<Item = f64>) -> Self {
        let (low, high) = values.fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        if high > 0.0 {
            Self::around(low.max(0.001), high)
        } else {
            Self::around(1.0, 1.0)
        }
    }

    /// The values `m × 10^e` for each decade in range and each multiplier.
    fn points(&self, multipliers: &[u32]) -> Vec<f64> {
        let mut points = Vec::new();
        for e in self.low..self.high {
            points.extend(multipliers.iter().map(|&m| m as f64 * pow10(e)));
        }
        points.push(pow10(self.high));
        points
    }
}

impl Ranged for LogAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let (low, high) = (self.low as f64, self.high as f64);
        let at = (value.max(f64::MIN_POSITIVE).log10() - low) / (high - low);
        limit.0 + (at * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        let most = hint.max_num_points();
        let light = self.points(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
        if matches!(hint.weight(), KeyPointWeight::Any) && light.len() <= most {
            return light;
        }
        [&[1, 2, 5][..], &[1, 3], &[1]]
            .iter()
            .map(|m| self.points(m))
            .find(|p| p.len() <= most)
            .unwrap_or_default()
    }

    fn range(&self) -> std::ops::Range<f64> {
        pow10(self.low)..pow10(self.high)
    }
}

/// 10^e, exact for the decades an axis uses (powi of a negative exponent is not: 0.1 would not
/// be 0.1).
fn pow10(e: i32) -> f64 {
    if e >= 0 {
        10f64.powi(e)
    } else {
        1.0 / 10f64.powi(-e)
    }
}

/// 1500 → "1.5k", 20000 → "20k", 3 → "3".
pub fn si(v: f64) -> String {
    let (v, unit) = if v.abs() >= 1e6 {
        (v / 1e6, "M")
    } else if v.abs() >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    format!("{}{unit}", trim(format!("{v:.1}")))
}

/// Milliseconds with as many decimals as small values need: 0.05, 0.5, 5, 50.
pub fn ms(v: f64) -> String {
    let decimals = if v >= 1.0 {
        0
    } else {
        (-v.log10()).ceil() as usize + 1
    };
    trim(format!("{v:.decimals$}"))
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_labels() {
        assert_eq!(si(0.0), "0");
        assert_eq!(si(950.0), "950");
        assert_eq!(si(1500.0), "1.5k");
        assert_eq!(si(20_000.0), "20k");
        assert_eq!(si(2_500_000.0), "2.5M");
        assert_eq!(ms(0.05), "0.05");
        assert_eq!(ms(0.5), "0.5");
        assert_eq!(ms(5.0), "5");
        assert_eq!(ms(200.0), "200");
        let axis = LogAxis::around(0.31, 45.0);
        assert_eq!(axis, LogAxis { low: -1, high: 3 });
        assert_eq!(axis.range(), 0.1..1000.0);
        assert_eq!(LogAxis::around(0.2, 1.9), LogAxis { low: -1, high: 1 });
        assert_eq!(LogAxis::around(1.0, 1.0), LogAxis { low: 0, high: 1 });
        let labels: Vec<String> = LogAxis { low: -1, high: 1 }
            .key_points(10)
            .into_iter()
            .map(ms)
            .collect();
        assert_eq!(labels, ["0.1", "0.2", "0.5", "1", "2", "5", "10"]);
    }
}
