//! CALLRESULT payloads the CMS sends back, as JSON text ready for `frame::call_result`.

use chrono::{DateTime, SecondsFormat, Utc};

/// The payload of a CALLRESULT that confirms nothing beyond receipt.
pub const EMPTY: &str = "{}";

/// An OCPP-facing timestamp: whole seconds, UTC, trailing `Z` (e.g. `2026-11-21T10:00:00Z`);
/// the widest shape every charger firmware parses.
pub fn ocpp_timestamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// BootNotification.conf accepting the charge point, with its heartbeat interval.
pub fn boot_notification_accepted(now: DateTime<Utc>, interval_secs: u32) -> String {
    let now = ocpp_timestamp(now);
    format!(r#"{{"status":"Accepted","currentTime":"{now}","interval":{interval_secs}}}"#)
}

/// Heartbeat.conf: the CMS clock, which chargers use to set theirs.
pub fn heartbeat(now: DateTime<Utc>) -> String {
    let now = ocpp_timestamp(now);
    format!(r#"{{"currentTime":"{now}"}}"#)
}

/// Authorize.conf (also the shape of a StopTransaction.conf with idTagInfo) accepting the token.
pub fn id_tag_accepted() -> &'static str {
    r#"{"idTagInfo":{"status":"Accepted"}}"#
}

/// StartTransaction.conf accepting the token and naming the transaction.
pub fn start_transaction_accepted(transaction_id: i32) -> String {
    format!(r#"{{"idTagInfo":{{"status":"Accepted"}},"transactionId":{transaction_id}}}"#)
}

/// DataTransfer.conf for a vendor this CMS has no extension for.
pub fn data_transfer_unknown_vendor() -> &'static str {
    r#"{"status":"UnknownVendorId"}"#
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0).unwrap() + chrono::Duration::milliseconds(789)
    }

    #[test]
    fn timestamps_are_whole_seconds_with_z() {
        assert_eq!(ocpp_timestamp(now()), "2026-11-21T10:00:00Z");
    }

    #[test]
    fn boot_notification() {
        assert_eq!(
            boot_notification_accepted(now(), 300),
            r#"{"status":"Accepted","currentTime":"2026-11-21T10:00:00Z","interval":300}"#
        );
    }

    #[test]
    fn heartbeat_answer() {
        assert_eq!(
            heartbeat(now()),
            r#"{"currentTime":"2026-11-21T10:00:00Z"}"#
        );
    }

    #[test]
    fn fixed_answers() {
        assert_eq!(id_tag_accepted(), r#"{"idTagInfo":{"status":"Accepted"}}"#);
        assert_eq!(
            data_transfer_unknown_vendor(),
            r#"{"status":"UnknownVendorId"}"#
        );
        assert_eq!(EMPTY, "{}");
    }

    #[test]
    fn start_transaction() {
        assert_eq!(
            start_transaction_accepted(-7),
            r#"{"idTagInfo":{"status":"Accepted"},"transactionId":-7}"#
        );
    }

    #[test]
    fn every_answer_is_valid_json() {
        for text in [
            boot_notification_accepted(now(), 60),
            heartbeat(now()),
            id_tag_accepted().to_owned(),
            start_transaction_accepted(i32::MAX),
            data_transfer_unknown_vendor().to_owned(),
            EMPTY.to_owned(),
        ] {
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert!(value.is_object(), "{text}");
        }
    }
}
