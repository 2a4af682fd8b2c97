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
