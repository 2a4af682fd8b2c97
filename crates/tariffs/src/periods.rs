//! A session cut into the stretches the OCPI CDR's charging periods are made of.
//!
//! A stretch ends wherever something that matters to the price may change: a reading (energy
//! or parking state), a clock-based restriction (see `boundaries`), the session's duration
//! reaching a min_duration or max_duration, and its energy reaching a min_kwh or max_kwh.
//! Within a stretch the energy flowed evenly, so its average power is its power.

use std::collections::{BTreeMap, BTreeSet};

use rust_decimal::Decimal;
use rust_decimal::RoundingStrategy::MidpointAwayFromZero;

use crate::boundaries::clock_boundaries;
use crate::energy::EnergyCurve;
use crate::model::Tariff;
use crate::session::{Session, millis};

/// At or below this average power (kW), a stretch the charger calls parked (SuspendedEV,
/// Finishing) is parking time; above it the car is still drawing power, whatever the status
/// says, and it is charging time.
const PARKED_MAX_KW: Decimal = Decimal::from_parts(1, 0, 0, false, 1);

/// Wh kept at each period boundary: 3 decimals (mWh); the periods' energy still adds up
/// exactly, being differences of these.
const WH_DECIMALS: u32 = 3;

/// One charging period: [start, end) in epoch milliseconds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stretch {
    pub start: i64,
    pub end: i64,
    /// Delivered during the stretch.
    pub energy_wh: Decimal,
    /// Parked and drawing no more than [`PARKED_MAX_KW`].
    pub parking: bool,
}

impl Stretch {
    pub(crate) fn millis(&self) -> i64 {
        self.end - self.start
    }

    /// Average power in kW: Wh per ms is 3600 kW. Zero for a zero-length stretch.
    pub(crate) fn power_kw(&self) -> Decimal {
        match self.millis() {
            0 => Decimal::ZERO,
            ms => self.energy_wh * Decimal::from(3600) / Decimal::from(ms),
        }
    }
}

/// The session's stretches under the tariff, in order, covering [started_at, ended_at].
/// A session that lasted no time at all is one zero-length stretch, so it is still priced
/// (a FLAT fee, a min_price).
pub(crate) fn stretches(tariff: &Tariff, session: &Session) -> Vec<Stretch> {
    let (start, end) = (millis(session.started_at), millis(session.ended_at));
    let curve = EnergyCurve::new(start, end, session.meter_start_wh, session.readings);
    let (cuts, exact) = cuts(tariff, session, &curve);
    let mut delivered = Vec::with_capacity(cuts.len());
    for (i, at) in cuts.iter().enumerate() {
        let wh = match exact.get(at) {
            _ if i == 0 => Decimal::ZERO,
            Some(wh) => *wh,
            None => curve
                .at(*at)
                .round_dp_with_strategy(WH_DECIMALS, MidpointAwayFromZero),
        };
        // Rounding next to an exact threshold must not make a stretch negative.
        let floor = delivered.last().copied().unwrap_or(Decimal::ZERO);
        delivered.push(wh.max(floor));
    }
    let parked = ParkingFlags::new(session);
    if cuts.len() == 1 {
        return vec![parked.stretch(start, start, delivered[0])];
    }
    cuts.windows(2)
        .zip(delivered.windows(2))
        .map(|(at, wh)| parked.stretch(at[0], at[1], wh[1] - wh[0]))
        .collect()
}

/// Where the stretches start and end, in order, within [started_at, ended_at]; and the
/// boundaries where the energy reaches a min_kwh or max_kwh, with that exact energy (Wh), so
/// the period after starts at the threshold and "energy so far >= min_kwh" holds there.
fn cuts(
    tariff: &Tariff,
    session: &Session,
    curve: &EnergyCurve,
) -> (Vec<i64>, BTreeMap<i64, Decimal>) {
    let (start, end) = (millis(session.started_at), millis(session.ended_at));
    let mut cuts = BTreeSet::from([start, end]);
    cuts.extend(session.readings.iter().map(|r| millis(r.at)));
    cuts.extend(clock_boundaries(tariff, session.time_zone, start, end));
    let mut exact = BTreeMap::new();
    for r in tariff
        .elements
        .iter()
        .filter_map(|e| e.restrictions.as_ref())
    {
        for seconds in [r.min_duration, r.max_duration].into_iter().flatten() {
            let ms = i64::try_from(seconds)
                .ok()
                .and_then(|s| s.checked_mul(1000));
            cuts.extend(ms.and_then(|ms| start.checked_add(ms)));
        }
        for kwh in [r.min_kwh, r.max_kwh].into_iter().flatten() {
            let Some(wh) = kwh.checked_mul(Decimal::ONE_THOUSAND) else {
                continue;
            };
            if let Some(at) = curve.reaches(wh).filter(|at| start < *at && *at < end) {
                cuts.insert(at);
                exact.insert(at, wh);
            }
        }
    }
    cuts.retain(|at| start <= *at && *at <= end);
    (cuts.into_iter().collect(), exact)
}

/// The charger's parking flag over time: (from, parked), in time order.
struct ParkingFlags(Vec<(i64, bool)>);

impl ParkingFlags {
    fn new(session: &Session) -> Self {
        let mut flags: Vec<(i64, bool)> = session
            .readings
            .iter()
            .filter_map(|r| Some((millis(r.at), r.parking?)))
            .collect();
        // Stable: of two flags at the same instant the later reported wins.
        flags.sort_by_key(|(at, _)| *at);
        ParkingFlags(flags)
    }

    /// The flag in force from `at` on; charging until told otherwise.
    fn at(&self, at: i64) -> bool {
        let after = self.0.partition_point(|(t, _)| *t <= at);
        after.checked_sub(1).is_some_and(|i| self.0[i].1)
    }

    fn stretch(&self, start: i64, end: i64, energy_wh: Decimal) -> Stretch {
        let mut stretch = Stretch {
            start,
            end,
            energy_wh,
            parking: false,
        };
        stretch.parking = self.at(start) && stretch.power_kw() <= PARKED_MAX_KW;
        stretch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Restrictions, TariffElement};
    use crate::session::Reading;
    use chrono::{DateTime, Utc};

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    fn session<'a>(from: &str, to: &str, readings: &'a [Reading]) -> Session<'a> {
        let time_zone = chrono_tz::Tz::UTC;
        Session {
            started_at: at(from),
            ended_at: at(to),
            meter_start_wh: 0,
            readings,
            time_zone,
        }
    }

    fn tariff(restrictions: Restrictions) -> Tariff {
        let element = TariffElement {
            price_components: vec![],
            restrictions: Some(restrictions),
        };
        Tariff {
            currency: "EUR".into(),
            elements: vec![element],
            min_price: None,
            max_price: None,
        }
    }

    #[test]
    fn a_kwh_threshold_cuts_with_exactly_that_energy_on_each_side() {
        // 3000 Wh evenly over 30 min reaches 1 kWh at 10 min.
        let readings = [Reading {
            at: at("2026-01-15T10:30:00Z"),
            energy_wh: Some(3000),
            parking: None,
        }];
        let restrictions = Restrictions {
            min_kwh: Some(Decimal::ONE),
            ..Restrictions::default()
        };
        let cut = stretches(
            &tariff(restrictions),
            &session("2026-01-15T10:00:00Z", "2026-01-15T10:30:00Z", &readings),
        );
        let energy: Vec<Decimal> = cut.iter().map(|s| s.energy_wh).collect();
        assert_eq!(energy, [Decimal::from(1000), Decimal::from(2000)]);
        assert_eq!(cut[0].end, millis(at("2026-01-15T10:10:00Z")));
    }

    #[test]
    fn parked_stretches_draw_at_most_a_tenth_of_a_kw() {
        // Parked from the start; 100 Wh in the first hour (0.1 kW: parking), 101 Wh in the
        // second (0.101 kW: charging).
        let readings = [
            Reading {
                at: at("2026-01-15T10:00:00Z"),
                energy_wh: None,
                parking: Some(true),
            },
            Reading {
                at: at("2026-01-15T11:00:00Z"),
                energy_wh: Some(100),
                parking: None,
            },
            Reading {
                at: at("2026-01-15T12:00:00Z"),
                energy_wh: Some(201),
                parking: None,
            },
        ];
        let cut = stretches(
            &tariff(Restrictions::default()),
            &session("2026-01-15T10:00:00Z", "2026-01-15T12:00:00Z", &readings),
        );
        assert_eq!(
            cut.iter().map(|s| s.parking).collect::<Vec<_>>(),
            [true, false]
        );
        assert_eq!(cut[1].power_kw(), Decimal::new(101, 3));
    }
}
