//! OCPP `dateTime` values: RFC 3339 with any offset, or no offset at all (taken as UTC).

use chrono::{DateTime, NaiveDateTime, Utc};

/// Parses a charger timestamp. Chargers without a clock offset send local-less times
/// like `2026-11-21T10:00:00`; the spec's times are UTC, so those are read as UTC.
pub fn parse_timestamp(text: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .map(|t| t.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 21, h, m, s).unwrap()
    }

    #[test]
    fn utc_with_z() {
        assert_eq!(parse_timestamp("2026-11-21T10:00:00Z"), Some(at(10, 0, 0)));
    }

    #[test]
    fn fractional_seconds_are_kept() {
        let t = parse_timestamp("2026-11-21T10:00:00.250Z").unwrap();
        assert_eq!(t, at(10, 0, 0) + chrono::Duration::milliseconds(250));
    }

    #[test]
    fn any_offset_is_converted_to_utc() {
        assert_eq!(
            parse_timestamp("2026-11-21T11:30:00+01:30"),
            Some(at(10, 0, 0))
        );
        assert_eq!(
            parse_timestamp("2026-11-21T05:00:00-05:00"),
            Some(at(10, 0, 0))
        );
    }

    #[test]
    fn no_offset_is_utc() {
        assert_eq!(parse_timestamp("2026-11-21T10:00:00"), Some(at(10, 0, 0)));
        let t = parse_timestamp("2026-11-21T10:00:00.5").unwrap();
        assert_eq!(t, at(10, 0, 0) + chrono::Duration::milliseconds(500));
    }

    #[test]
    fn other_shapes_are_rejected() {
        for bad in [
            "",
            "2026-11-21",
            "10:00:00Z",
            "2026-11-21T10:00Z",
            "2026-13-21T10:00:00Z",
            "2026-11-21T25:00:00Z",
            " 2026-11-21T10:00:00Z",
            "2026-11-21T10:00:00Z ",
            "2026-11-21T10:00:00+0100x",
            "yesterday",
            "1732183200",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad:?}");
        }
    }
}
