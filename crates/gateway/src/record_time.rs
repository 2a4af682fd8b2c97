//! Record timestamps (`received_at`, `measured_at`): RFC 3339 UTC with microseconds, as
//! `2026-11-21T10:00:00.123456Z`. Written digit by digit because every published frame needs
//! one or two, and chrono's general formatter costs more than the rest of a Heartbeat's handling.
//! The form is the one the store writes (`cms_store::format_record_time`, with chrono, off the
//! frame path); the test holds the two to the same output.

use bytes::Bytes;
use chrono::{DateTime, Datelike, Timelike, Utc};

/// `t` in record form: always 27 bytes, so text order is time order (years 0 to 9999).
pub fn record_time(t: DateTime<Utc>) -> String {
    // Only ASCII digits and separators are written.
    String::from_utf8(digits(t).to_vec()).unwrap_or_default()
}

/// [`record_time`] as a header value, cut from the thread's chunk (no allocation of its own).
pub fn record_time_bytes(t: DateTime<Utc>) -> Bytes {
    let text = digits(t);
    crate::chunks::bytes(text.len(), |out| out.extend_from_slice(&text))
}

fn digits(t: DateTime<Utc>) -> [u8; 27] {
    let mut out = [0u8; 27];
    let micros = t.timestamp_subsec_micros().min(999_999);
    let fields: [(usize, u32, usize); 7] = [
        (0, t.year().clamp(0, 9999) as u32, 4),
        (5, t.month(), 2),
        (8, t.day(), 2),
        (11, t.hour(), 2),
        (14, t.minute(), 2),
        (17, t.second().min(59), 2),
        (20, micros, 6),
    ];
    for (at, value, width) in fields {
        let mut v = value;
        for slot in out[at..at + width].iter_mut().rev() {
            *slot = b'0' + (v % 10) as u8;
            v /= 10;
        }
    }
    for (at, separator) in [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')] {
        out[at] = separator;
    }
    out[19] = b'.';
    out[26] = b'Z';
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::SecondsFormat;

    #[test]
    fn matches_chronos_rfc3339_with_micros() {
        // A spread of instants: whole seconds, odd microseconds, leap days, year ends.
        let mut t = DateTime::parse_from_rfc3339("1999-12-31T23:59:59.999999Z")
            .unwrap()
            .with_timezone(&Utc);
        for _ in 0..20_000 {
            assert_eq!(
                record_time(t),
                t.to_rfc3339_opts(SecondsFormat::Micros, true)
            );
            t += chrono::Duration::microseconds(86_399_999_937);
        }
    }

    #[test]
    fn is_fixed_width() {
        let epoch = DateTime::<Utc>::UNIX_EPOCH;
        assert_eq!(record_time(epoch), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            &record_time_bytes(epoch)[..],
            b"1970-01-01T00:00:00.000000Z"
        );
    }
}
