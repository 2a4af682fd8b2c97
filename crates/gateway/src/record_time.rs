//! Record timestamps (`received_at`, `measured_at`): RFC 3339 UTC with microseconds, as
//! `2026-11-21T10:00:00.123456Z`. Written digit by digit because every published frame needs
//! one or two, and chrono's general formatter costs more than the rest of a Heartbeat's handling.
//! The form is the one the store writes (`cms_store::format_record_time`, with chrono, off the
//! frame path); the test holds the two to the same output.

use bytes::Bytes;
use chrono::{DateTime, Utc};
use cms_ocpp::v16::answer::utc_second_digits;

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
    // The seconds' digits as OCPP answers give them, without their `Z`.
    out[..19].copy_from_slice(&utc_second_digits(t)[..19]);
    out[19] = b'.';
    let mut micros = t.timestamp_subsec_micros().min(999_999);
    for slot in out[20..26].iter_mut().rev() {
        *slot = b'0' + (micros % 10) as u8;
        micros /= 10;
    }
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
