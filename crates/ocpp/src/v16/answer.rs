//! CALLRESULT payloads the CMS sends back, as JSON text ready for `frame::call_result`.

use chrono::{DateTime, Datelike, SecondsFormat, Timelike, Utc};
use std::fmt;

/// The payload of a CALLRESULT that confirms nothing beyond receipt.
pub const EMPTY: &str = "{}";

/// The answer to a SignCertificate of the security extension: cms takes the CSR (whether it is
/// signed is told later, by a CertificateSigned).
pub const SIGN_CERTIFICATE_ACCEPTED: &str = r#"{"status":"Accepted"}"#;

/// An OCPP-facing timestamp: whole seconds, UTC, trailing `Z` (e.g. `2026-11-21T10:00:00Z`);
/// the widest shape every charger firmware parses.
pub fn ocpp_timestamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The answers that carry the CMS clock, written where the caller wants them (the gateway
/// writes them straight into the answer frame; `to_string` gives the payload alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockAnswer {
    /// Heartbeat.conf: the CMS clock, which chargers use to set theirs.
    Heartbeat(DateTime<Utc>),
    /// BootNotification.conf accepting the charge point, with its heartbeat interval (seconds).
    BootAccepted(DateTime<Utc>, u32),
}

impl ClockAnswer {
    /// The payload's length at most (for a buffer's room).
    pub const MAX_LEN: usize = 96;
}

impl fmt::Display for ClockAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (ClockAnswer::Heartbeat(now) | ClockAnswer::BootAccepted(now, _)) = *self;
        let digits = utc_second_digits(now);
        // ASCII digits and separators only.
        let now = std::str::from_utf8(&digits).unwrap_or_default();
        match *self {
            ClockAnswer::Heartbeat(_) => write!(f, r#"{{"currentTime":"{now}"}}"#),
            ClockAnswer::BootAccepted(_, interval_secs) => write!(
                f,
                r#"{{"status":"Accepted","currentTime":"{now}","interval":{interval_secs}}}"#
            ),
        }
    }
}

/// [`ocpp_timestamp`]'s text, `YYYY-MM-DDTHH:MM:SSZ`, written digit by digit on the stack for
/// the clock of now (years 0 to 9999; the tests hold it to chrono's text): chrono's general
/// formatter costs more than the rest of a Heartbeat's handling, and makes a string. The
/// gateway's record times start with the same digits.
pub fn utc_second_digits(t: DateTime<Utc>) -> [u8; 20] {
    let mut text = *b"0000-00-00T00:00:00Z";
    let fields: [(usize, u32, usize); 6] = [
        (0, t.year().clamp(0, 9999) as u32, 4),
        (5, t.month(), 2),
        (8, t.day(), 2),
        (11, t.hour(), 2),
        (14, t.minute(), 2),
        (17, t.second().min(59), 2),
    ];
    for (at, value, width) in fields {
        let mut v = value;
        for slot in text[at..at + width].iter_mut().rev() {
            *slot = b'0' + (v % 10) as u8;
            v /= 10;
        }
    }
    text
}

/// Authorize.conf (also the shape of a StopTransaction.conf with idTagInfo) accepting the token.
pub fn id_tag_accepted() -> &'static str {
    r#"{"idTagInfo":{"status":"Accepted"}}"#
}

/// StartTransaction.conf accepting the token and naming the transaction.
pub fn start_transaction_accepted(transaction_id: i32) -> String {
    format!(r#"{{"idTagInfo":{{"status":"Accepted"}},"transactionId":{transaction_id}}}"#)
}

/// An idTagInfo: how the CMS answers for an id tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdTagInfo<'a> {
    /// OCPP 1.6 AuthorizationStatus: Accepted, Blocked, Expired, Invalid or ConcurrentTx.
    pub status: &'static str,
    pub expiry_date: Option<DateTime<Utc>>,
    pub parent_id_tag: Option<&'a str>,
}

impl IdTagInfo<'_> {
    pub const ACCEPTED: IdTagInfo<'static> = IdTagInfo {
        status: "Accepted",
        expiry_date: None,
        parent_id_tag: None,
    };

    /// `{"status":..[,"expiryDate":..][,"parentIdTag":..]}`.
    pub fn to_json(&self) -> String {
        let mut json = format!(r#"{{"status":"{}""#, self.status);
        if let Some(expiry) = self.expiry_date {
            json.push_str(&format!(r#","expiryDate":"{}""#, ocpp_timestamp(expiry)));
        }
        if let Some(parent) = self.parent_id_tag {
            let parent = serde_json::Value::from(parent);
            json.push_str(&format!(r#","parentIdTag":{parent}"#));
        }
        json.push('}');
        json
    }
}

/// Authorize.conf, and StopTransaction.conf with an idTagInfo.
pub fn id_tag_answer(info: &IdTagInfo<'_>) -> String {
    format!(r#"{{"idTagInfo":{}}}"#, info.to_json())
}

/// StartTransaction.conf: the verdict on the token, and the transaction's id (given even when
/// the token is refused, as OCPP 1.6 requires).
pub fn start_transaction(transaction_id: i32, info: &IdTagInfo<'_>) -> String {
    format!(
        r#"{{"idTagInfo":{},"transactionId":{transaction_id}}}"#,
        info.to_json()
    )
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
    fn the_clocks_digits_are_chronos_text() {
        // Single digits, the ends of days and years, the last year, a fraction past a new year.
        let times = [
            Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap(),
            Utc.with_ymd_and_hms(1999, 12, 31, 23, 59, 59).unwrap(),
            Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).unwrap(),
            Utc.with_ymd_and_hms(2016, 12, 31, 23, 59, 59).unwrap()
                + chrono::Duration::nanoseconds(1_500_000_000),
            Utc.with_ymd_and_hms(1970, 1, 1, 0, 0, 0).unwrap(),
        ];
        for t in times {
            let digits = utc_second_digits(t);
            assert_eq!(
                std::str::from_utf8(&digits),
                Ok(ocpp_timestamp(t).as_str()),
                "{t:?}"
            );
        }
    }

    #[test]
    fn clock_answers_fit_their_room() {
        let longest = ClockAnswer::BootAccepted(now(), u32::MAX).to_string();
        assert!(longest.len() <= ClockAnswer::MAX_LEN, "{longest}");
    }

    #[test]
    fn boot_notification() {
        assert_eq!(
            ClockAnswer::BootAccepted(now(), 300).to_string(),
            r#"{"status":"Accepted","currentTime":"2026-11-21T10:00:00Z","interval":300}"#
        );
    }

    #[test]
    fn heartbeat_answer() {
        assert_eq!(
            ClockAnswer::Heartbeat(now()).to_string(),
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
    fn start_transaction_accepting() {
        assert_eq!(
            start_transaction_accepted(-7),
            r#"{"idTagInfo":{"status":"Accepted"},"transactionId":-7}"#
        );
    }

    #[test]
    fn id_tag_info_carries_expiry_and_parent_when_known() {
        let info = IdTagInfo {
            status: "Blocked",
            expiry_date: Some(now()),
            parent_id_tag: Some("FLEET\"1"),
        };
        assert_eq!(
            id_tag_answer(&info),
            r#"{"idTagInfo":{"status":"Blocked","expiryDate":"2026-11-21T10:00:00Z","parentIdTag":"FLEET\"1"}}"#
        );
        assert_eq!(
            start_transaction(5, &IdTagInfo::ACCEPTED),
            start_transaction_accepted(5)
        );
        assert_eq!(id_tag_answer(&IdTagInfo::ACCEPTED), id_tag_accepted());
    }

    #[test]
    fn every_answer_is_valid_json() {
        for text in [
            ClockAnswer::BootAccepted(now(), 60).to_string(),
            ClockAnswer::Heartbeat(now()).to_string(),
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
