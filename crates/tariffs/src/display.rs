//! A tariff as a charger shows it to the driver (the Open Charge Alliance's pricing whitepaper:
//! prices include VAT). A charger shows one price per dimension, so it is the first element's
//! (one without restrictions when the tariff has one); a tariff with time-dependent prices says
//! that its prices vary.

use crate::model::{ComponentKind, Tariff, TariffElement};
use rust_decimal::{Decimal, RoundingStrategy};

/// What a driver pays, VAT included, per kWh, per hour charging, per session and per hour parked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DisplayPrice {
    pub kwh: Option<Decimal>,
    pub hour: Option<Decimal>,
    pub flat: Option<Decimal>,
    pub parking_hour: Option<Decimal>,
}

/// The prices a charger shows for `tariff`, rounded to the cent.
pub fn display_price(tariff: &Tariff) -> DisplayPrice {
    let element = tariff
        .elements
        .iter()
        .find(|e| e.restrictions.is_none())
        .or(tariff.elements.first());
    let Some(element) = element else {
        return DisplayPrice::default();
    };
    DisplayPrice {
        kwh: incl_vat(element, ComponentKind::Energy),
        hour: incl_vat(element, ComponentKind::Time),
        flat: incl_vat(element, ComponentKind::Flat),
        parking_hour: incl_vat(element, ComponentKind::ParkingTime),
    }
}

fn incl_vat(element: &TariffElement, kind: ComponentKind) -> Option<Decimal> {
    let component = element.price_components.iter().find(|c| c.kind == kind)?;
    let vat = component.vat.unwrap_or_default();
    let price = component.price * (Decimal::ONE_HUNDRED + vat) / Decimal::ONE_HUNDRED;
    Some(price.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero))
}

/// One line for the charger's display: `0.36 EUR/kWh, 2.42 EUR/h, 0.61 EUR per session`.
pub fn price_text(tariff: &Tariff) -> String {
    let price = display_price(tariff);
    let currency = &tariff.currency;
    let mut parts = Vec::new();
    let mut part = |amount: Option<Decimal>, unit: &str| {
        if let Some(amount) = amount {
            parts.push(format!("{amount:.2} {currency}{unit}"));
        }
    };
    part(price.kwh, "/kWh");
    part(price.hour, "/h");
    part(price.flat, " per session");
    part(price.parking_hour, "/h parked");
    let mut text = if parts.is_empty() {
        "Free".to_string()
    } else {
        parts.join(", ")
    };
    if tariff.elements.len() > 1 {
        text.push_str(" (prices vary by time)");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tariff(json: serde_json::Value) -> Tariff {
        crate::read_tariff(&json).expect("a valid tariff")
    }

    #[test]
    fn the_driver_sees_prices_with_vat_to_the_cent() {
        let t = tariff(
            serde_json::json!({"currency": "EUR", "elements": [{"price_components": [
            {"type": "ENERGY", "price": "0.30", "vat": 21, "step_size": 1},
            {"type": "TIME", "price": "2.00", "vat": 21, "step_size": 60},
            {"type": "FLAT", "price": "0.50", "vat": null, "step_size": 1}]}]}),
        );
        // 0.30 × 1.21 = 0.363 → 0.36; 2.00 × 1.21 = 2.42; no VAT on the fee.
        assert_eq!(
            price_text(&t),
            "0.36 EUR/kWh, 2.42 EUR/h, 0.50 EUR per session"
        );
        let shown = display_price(&t);
        assert_eq!(shown.kwh, Some(Decimal::new(36, 2)));
        assert_eq!(shown.parking_hour, None);
    }

    #[test]
    fn time_dependent_prices_show_the_unrestricted_element_and_say_they_vary() {
        let t = tariff(serde_json::json!({"currency": "EUR", "elements": [
            {"price_components": [{"type": "ENERGY", "price": "0.40", "vat": null, "step_size": 1}],
             "restrictions": {"start_time": "18:00", "end_time": "22:00"}},
            {"price_components": [{"type": "ENERGY", "price": "0.25", "vat": null, "step_size": 1}]}]}));
        assert_eq!(price_text(&t), "0.25 EUR/kWh (prices vary by time)");
    }
}
