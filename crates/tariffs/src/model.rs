//! A tariff as cms's REST API shows and takes it: the OCPI 2.2.1 Tariff without the CPO's
//! identifiers, texts and validity dates (a tariff is attached to what it prices instead).
//!
//! Money (prices, price limits) is a decimal string such as "0.30", so no JSON reader on the way
//! turns it into a float; VAT percentages and restriction values are JSON numbers, written and
//! read from their exact text.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// A tariff: what a charging session costs, in one currency.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Tariff {
    /// ISO 4217 code, e.g. "EUR".
    pub currency: String,
    /// In order: for each dimension, the first element whose restrictions hold prices it.
    pub elements: Vec<TariffElement>,
    /// The least a session costs (OCPI clamps the total only, not the components).
    pub min_price: Option<PriceLimit>,
    /// The most a session costs.
    pub max_price: Option<PriceLimit>,
}

/// Prices that apply together while all of their restrictions hold.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct TariffElement {
    pub price_components: Vec<PriceComponent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restrictions: Option<Restrictions>,
}

/// The price of one dimension of a session.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct PriceComponent {
    #[serde(rename = "type")]
    pub kind: ComponentKind,
    /// Excluding VAT, per kWh (ENERGY), per hour (TIME, PARKING_TIME) or once (FLAT).
    pub price: Decimal,
    /// VAT in percent; none means no VAT applies (not "unknown").
    #[serde(default, with = "rust_decimal::serde::arbitrary_precision_option")]
    pub vat: Option<Decimal>,
    /// Billing block: Wh for ENERGY, seconds for TIME and PARKING_TIME; applied to the session's
    /// total of the dimension, not to each period.
    #[serde(default = "one")]
    pub step_size: u32,
}

fn one() -> u32 {
    1
}

/// What is priced.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ComponentKind {
    /// kWh delivered.
    Energy,
    /// Hours charging.
    Time,
    /// Once per session.
    Flat,
    /// Hours plugged in but not charging.
    ParkingTime,
}

/// A bound on a session's total cost.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct PriceLimit {
    pub excl_vat: Decimal,
    pub incl_vat: Option<Decimal>,
}

/// When a tariff element applies. All present restrictions must hold; times and dates are on
/// the site's local clock and are checked at the start of each charging period.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct Restrictions {
    /// "HH:MM", inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<String>,
    /// "HH:MM", exclusive; before `start_time` means the window spans midnight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<String>,
    /// "YYYY-MM-DD", inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_date: Option<String>,
    /// "YYYY-MM-DD", exclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_date: Option<String>,
    /// Session energy so far (kWh), inclusive.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "decimal_number"
    )]
    pub min_kwh: Option<Decimal>,
    /// Session energy so far (kWh), exclusive.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "decimal_number"
    )]
    pub max_kwh: Option<Decimal>,
    /// Amperes; not evaluated by cms (see the crate documentation).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "decimal_number"
    )]
    pub min_current: Option<Decimal>,
    /// Amperes; not evaluated by cms.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "decimal_number"
    )]
    pub max_current: Option<Decimal>,
    /// kW, against the period's average power.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "decimal_number"
    )]
    pub min_power: Option<Decimal>,
    /// kW, against the period's average power.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "decimal_number"
    )]
    pub max_power: Option<Decimal>,
    /// Seconds since the session started, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_duration: Option<u64>,
    /// Seconds since the session started, exclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_duration: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day_of_week: Option<Vec<DayOfWeek>>,
}

/// `rust_decimal`'s exact JSON number (de)serialisation, under a name that says what it is for.
mod decimal_number {
    pub use rust_decimal::serde::arbitrary_precision_option::{deserialize, serialize};
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DayOfWeek {
    Monday,
    Tuesday,
    Wednesday,
    Thursday,
    Friday,
    Saturday,
    Sunday,
}

impl DayOfWeek {
    pub const ALL: [DayOfWeek; 7] = [
        DayOfWeek::Monday,
        DayOfWeek::Tuesday,
        DayOfWeek::Wednesday,
        DayOfWeek::Thursday,
        DayOfWeek::Friday,
        DayOfWeek::Saturday,
        DayOfWeek::Sunday,
    ];

    /// The name in JSON (OCPI's).
    pub fn name(self) -> &'static str {
        match self {
            DayOfWeek::Monday => "MONDAY",
            DayOfWeek::Tuesday => "TUESDAY",
            DayOfWeek::Wednesday => "WEDNESDAY",
            DayOfWeek::Thursday => "THURSDAY",
            DayOfWeek::Friday => "FRIDAY",
            DayOfWeek::Saturday => "SATURDAY",
            DayOfWeek::Sunday => "SUNDAY",
        }
    }
}

impl ComponentKind {
    pub const ALL: [ComponentKind; 4] = [
        ComponentKind::Energy,
        ComponentKind::Time,
        ComponentKind::Flat,
        ComponentKind::ParkingTime,
    ];

    /// The name in JSON (OCPI's).
    pub fn name(self) -> &'static str {
        match self {
            ComponentKind::Energy => "ENERGY",
            ComponentKind::Time => "TIME",
            ComponentKind::Flat => "FLAT",
            ComponentKind::ParkingTime => "PARKING_TIME",
        }
    }
}
