//! Record timestamps: UTC with microseconds and a trailing `Z`, as the reference writes them.

use chrono::{DateTime, SecondsFormat, Utc};

pub fn format_record_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

pub fn now_record_time() -> String {
    format_record_time(Utc::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_times_have_microseconds_and_z() {
        let t = DateTime::parse_from_rfc3339("2026-11-21T10:00:00.5+01:00").unwrap();
        assert_eq!(
            format_record_time(t.with_timezone(&Utc)),
            "2026-11-21T09:00:00.500000Z"
        );
    }
}
