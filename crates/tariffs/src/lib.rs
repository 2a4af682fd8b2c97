//! Tariffs on the OCPI 2.2.1 model: their rules, and the exact cost of a charging session.
//!
//! # The model
//!
//! A [`Tariff`] is OCPI 2.2.1's Tariff object without the CPO's identifiers, texts and
//! validity dates: a currency, elements of price components (ENERGY per kWh, TIME per hour
//! charging, PARKING_TIME per hour plugged in but not charging, FLAT once) with optional
//! restrictions, and optional min/max prices. [`read_tariff`] reads one from a REST body and
//! names every problem by its field path.
//!
//! [`price`] prices a [`Session`] (start, end or "now", the meter register at the start,
//! the readings the store kept) by turning it into an OCPI CDR and handing that to the
//! `ocpi-tariffs` engine, which applies OCPI's rules: for each dimension the first element
//! whose restrictions hold at the start of a charging period prices that period; step_size
//! applies to the session's total of a dimension; FLAT is charged once; min/max_price clamp
//! the total only. The CDR's charging periods are cut from the session (`periods`):
//!
//! - energy between readings is interpolated linearly in time, and stays flat after the last
//!   (a running session keeps accruing time, not energy); a meter going backwards counts 0;
//! - a period starts at every reading, every parking-state change, and every instant where a
//!   restriction may flip: the local start/end times and midnights in the site's time zone
//!   (summer-time jumps included), the session reaching a min/max_duration, and its energy
//!   reaching a min/max_kwh (found by interpolation);
//! - each period carries ENERGY, TIME or PARKING_TIME, and its average power as MIN_POWER and
//!   MAX_POWER. A period is parking when the charger said the car is parked (SuspendedEV,
//!   Finishing) and it drew at most 0.1 kW on average: a car drawing power is charging,
//!   whatever the status says.
//!
//! All arithmetic is decimal (rust_decimal): durations are whole milliseconds turned into
//! exact hours, money is rounded to the cent, half away from zero, once at the end.
//!
//! # Left out
//!
//! - Reservations (OCPI's RESERVATION restriction and reservation tariffs): cms prices
//!   charging sessions only; a `reservation` key is ignored.
//! - min_current/max_current are kept and shown but have no effect: cms records no current
//!   per period, and OCPI treats a dimension not given as satisfying the restriction.
//! - Power restrictions see each period's average power, not instantaneous peaks.
//! - A tariff's own validity dates and several tariffs per session: cms attaches one tariff
//!   to what it prices.
//! - The engine accepts at most 5 MB of CDR; a session of tens of thousands of readings
//!   (weeks of one-minute meter values) is refused with [`PricingError::Engine`].

mod boundaries;
mod cost;
mod currency;
mod display;
mod energy;
mod model;
mod ocpi;
mod periods;
mod pricing;
mod read;
mod session;

pub use cost::{Cost, CostComponent};
pub use currency::{CURRENCIES, is_currency};
pub use display::{DisplayPrice, display_price, price_text};
pub use model::{
    ComponentKind, DayOfWeek, PriceComponent, PriceLimit, Restrictions, Tariff, TariffElement,
};
pub use pricing::{MAX_SESSION_DAYS, PricingError, price, price_ocpi};
pub use read::read_tariff;
pub use session::{Reading, Session, time_zone};
