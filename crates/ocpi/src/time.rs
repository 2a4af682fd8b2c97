//! OCPI's DateTime: RFC 3339 in UTC, seconds precision, `Z` (2.2.1 part I, "DateTime").

use chrono::{DateTime, SecondsFormat, Utc};

/// `t` as OCPI writes it: `2015-06-29T20:39:09Z`.
pub fn format(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// An OCPI DateTime as a peer may write it: with `Z`, an offset, or none (UTC implied, as the
/// spec says), with or without fractions of a second. `None` when it is none of these.
pub fn parse(text: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.with_timezone(&Utc));
    }
    chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .map(|t| t.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_in_utc_with_seconds_and_read_in_every_form_the_spec_allows() {
        let t = parse("2015-06-29T20:39:09Z").unwrap();
        assert_eq!(format(t), "2015-06-29T20:39:09Z");
        assert_eq!(parse("2015-06-29T20:39:09"), Some(t));
        assert_eq!(parse("2015-06-29T22:39:09+02:00"), Some(t));
        assert_eq!(
            format(parse("2015-06-29T20:39:09.123Z").unwrap()),
            "2015-06-29T20:39:09Z"
        );
        assert_eq!(parse("yesterday"), None);
    }
}
