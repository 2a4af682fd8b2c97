//! A charging session as the store recorded it.

use chrono::{DateTime, Utc};

/// A site's time zone: an IANA name ("Europe/Amsterdam"); None when unknown.
pub fn time_zone(name: &str) -> Option<chrono_tz::Tz> {
    name.parse().ok()
}

/// What happened during a charging session, as the store recorded it.
#[derive(Debug, Clone, Copy)]
pub struct Session<'a> {
    pub started_at: DateTime<Utc>,
    /// When it stopped, or "now" for the running cost of an active one.
    pub ended_at: DateTime<Utc>,
    /// The meter register at the start (Wh).
    pub meter_start_wh: i64,
    /// Readings in time order, each within [started_at, ended_at]; for a stopped session the
    /// caller adds the stop reading (meter_stop at stopped_at). Readings out of that range are
    /// left out; readings out of order are put in order.
    pub readings: &'a [Reading],
    pub time_zone: chrono_tz::Tz,
}

/// One thing the charger reported during a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    pub at: DateTime<Utc>,
    /// The meter register (Wh), None for a status change only.
    pub energy_wh: Option<i64>,
    /// Some(true): from here the connector is SuspendedEV/Finishing (parked); Some(false):
    /// charging again; None: no change.
    pub parking: Option<bool>,
}

/// Milliseconds since the epoch: the session's whole timeline is in whole milliseconds, so
/// the periods' durations add up exactly to the session's.
pub(crate) fn millis(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

/// The instant of a millisecond timestamp (always in chrono's range: it came from one).
pub(crate) fn instant(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}
