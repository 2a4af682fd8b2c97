//! The cost of a session as cms shows it, from the pricing engine's report.

use rust_decimal::{Decimal, RoundingStrategy};
use serde::Serialize;

use ocpi_tariffs::price::{Dimension, Report};

use crate::model::ComponentKind;
use crate::ocpi::hours;

/// What a session cost.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Cost {
    pub currency: String,
    /// The total excluding VAT, to the cent: "5.50". After min_price/max_price, so it may
    /// differ from the sum of the components; even without a clamp the rounded components may
    /// be a cent off their rounded sum.
    pub excl_vat: String,
    /// The total including VAT, to the cent.
    pub incl_vat: String,
    /// One per dimension the tariff puts a price on, in the tariff's order.
    pub components: Vec<CostComponent>,
}

/// What one dimension cost, before any min_price/max_price clamp of the total.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct CostComponent {
    #[serde(rename = "type")]
    pub kind: ComponentKind,
    /// As billed (after step_size): kWh for ENERGY, hours for TIME and PARKING_TIME, 1 for a
    /// FLAT fee charged (0 when its element never applied); at most 4 fractional digits,
    /// trailing zeros trimmed.
    pub volume: String,
    /// Excluding VAT, to the cent.
    pub excl_vat: String,
}

/// The priced session: the engine's report, and whether it clamped the total to a limit.
pub(crate) struct Priced {
    pub report: Report,
    pub clamped: bool,
}

#[derive(Default, Clone, Copy)]
struct Sum {
    excl_vat: Decimal,
    incl_vat: Decimal,
    charged: bool,
}

impl Sum {
    fn add(&mut self, price: Option<ocpi_tariffs::Price>) {
        if let Some(price) = price {
            let excl_vat = Decimal::from(price.excl_vat);
            self.excl_vat += excl_vat;
            // Absent only for OCPI 2.1.1 tariffs, which carry no VAT at all.
            self.incl_vat += price.incl_vat.map_or(excl_vat, Decimal::from);
            self.charged = true;
        }
    }
}

/// The cost in `currency`, with a component for each of `kinds`. Sums the engine's period
/// costs unrounded and rounds each amount once, at the end.
pub(crate) fn cost(priced: &Priced, currency: &str, kinds: &[ComponentKind]) -> Cost {
    let report = &priced.report;
    let mut sums = [Sum::default(); 4];
    let index = |kind: ComponentKind| match kind {
        ComponentKind::Energy => 0,
        ComponentKind::Time => 1,
        ComponentKind::Flat => 2,
        ComponentKind::ParkingTime => 3,
    };
    for period in &report.periods {
        let d = &period.dimensions;
        sums[index(ComponentKind::Energy)].add(d.energy.as_ref().and_then(Dimension::cost));
        sums[index(ComponentKind::Time)]
            .add(d.duration_charging.as_ref().and_then(Dimension::cost));
        sums[index(ComponentKind::ParkingTime)]
            .add(d.duration_idle.as_ref().and_then(Dimension::cost));
        sums[index(ComponentKind::Flat)].add(d.flat.cost());
    }
    let (mut excl_vat, mut incl_vat) = sums
        .iter()
        .fold((Decimal::ZERO, Decimal::ZERO), |(e, i), s| {
            (e + s.excl_vat, i + s.incl_vat)
        });
    if priced.clamped
        && let Some(limit) = report.total_cost.calculated
    {
        let consumed = (excl_vat, incl_vat);
        excl_vat = Decimal::from(limit.excl_vat);
        // A limit without incl_vat keeps the VAT share of what was consumed.
        incl_vat = limit.incl_vat.map_or_else(
            || match consumed {
                (excl, _) if excl.is_zero() => excl_vat,
                (excl, incl) => excl_vat * incl / excl,
            },
            Decimal::from,
        );
    }
    let components = kinds
        .iter()
        .map(|&kind| {
            let sum = sums[index(kind)];
            let volume = match kind {
                ComponentKind::Energy => report.billed_energy.map(Decimal::from),
                ComponentKind::Time => report
                    .billed_charging_time
                    .map(|t| hours(t.num_milliseconds())),
                ComponentKind::ParkingTime => {
                    report.billed_idle_time.map(|t| hours(t.num_milliseconds()))
                }
                ComponentKind::Flat => Some(if sum.charged {
                    Decimal::ONE
                } else {
                    Decimal::ZERO
                }),
            };
            CostComponent {
                kind,
                volume: volume_text(volume.unwrap_or_default()),
                excl_vat: money_text(sum.excl_vat),
            }
        })
        .collect();
    Cost {
        currency: currency.to_owned(),
        excl_vat: money_text(excl_vat),
        incl_vat: money_text(incl_vat),
        components,
    }
}

/// To the cent, half away from zero, always two digits: "5.50".
fn money_text(amount: Decimal) -> String {
    let mut cents = amount.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
    cents.rescale(2);
    cents.to_string()
}

/// At most 4 fractional digits, trailing zeros trimmed: "11", "0.5", "0.0834".
fn volume_text(volume: Decimal) -> String {
    volume
        .round_dp_with_strategy(4, RoundingStrategy::MidpointAwayFromZero)
        .normalize()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn d(text: &str) -> Decimal {
        Decimal::from_str(text).unwrap()
    }

    #[test]
    fn money_is_rounded_half_away_from_zero_to_two_digits() {
        assert_eq!(money_text(d("5.5")), "5.50");
        assert_eq!(money_text(d("0.125")), "0.13");
        assert_eq!(money_text(d("0.124999")), "0.12");
        assert_eq!(money_text(d("2.223")), "2.22");
        assert_eq!(money_text(Decimal::ZERO), "0.00");
    }

    #[test]
    fn volumes_keep_four_digits_without_trailing_zeros() {
        assert_eq!(volume_text(d("11.0000")), "11");
        assert_eq!(volume_text(d("0.50")), "0.5");
        assert_eq!(volume_text(d("0.08335")), "0.0834");
        assert_eq!(volume_text(Decimal::ZERO), "0");
    }
}
