//! CALLRESULT payloads cms sends a 2.0.1 station, as JSON text ready for `frame::call_result`;
//! each fits its official response schema (tested).

use chrono::{DateTime, Utc};

use super::{AuthorizationStatus, RegistrationStatus};
use crate::v16::answer::utc_second_digits;

/// The payload of a CALLRESULT that confirms nothing beyond receipt: StatusNotification,
/// MeterValues, NotifyEvent, NotifyReport, SecurityEventNotification,
/// FirmwareStatusNotification, LogStatusNotification.
pub const EMPTY: &str = "{}";

/// The payload of a CALLRESULT whose only field is `status: Accepted`: SignCertificate (the CSR
/// is checked and signed afterwards, answered by a CertificateSigned), NotifyEVChargingNeeds and
/// NotifyEVChargingSchedule (kept, and the EVSE's limit comes from the site's balancer).
pub const STATUS_ACCEPTED: &str = r#"{"status":"Accepted"}"#;

/// `YYYY-MM-DDTHH:MM:SSZ`, as cms writes its clock to 1.6 chargers too.
fn clock(now: DateTime<Utc>) -> String {
    let digits = utc_second_digits(now);
    // ASCII digits and separators only.
    std::str::from_utf8(&digits).unwrap_or_default().to_owned()
}

/// BootNotificationResponse: cms's clock, the heartbeat interval (when Accepted) or the time to
/// wait before the next BootNotification (otherwise), and the verdict.
pub fn boot_notification(
    now: DateTime<Utc>,
    interval_secs: u32,
    status: RegistrationStatus,
) -> String {
    format!(
        r#"{{"currentTime":"{}","interval":{interval_secs},"status":"{status}"}}"#,
        clock(now)
    )
}

/// HeartbeatResponse: cms's clock.
pub fn heartbeat(now: DateTime<Utc>) -> String {
    format!(r#"{{"currentTime":"{}"}}"#, clock(now))
}

/// AuthorizeResponse: `{"idTokenInfo":{"status":..}}`.
pub fn authorize(status: AuthorizationStatus) -> String {
    id_token_answer(&IdTokenInfo::of(status))
}

/// TransactionEventResponse: `{}`, or the verdict on the event's idToken when it held one.
pub fn transaction_event(status: Option<AuthorizationStatus>) -> String {
    match status {
        None => EMPTY.to_owned(),
        Some(status) => authorize(status),
    }
}

/// What cms knows of an idToken: an IdTokenInfoType.
#[derive(Debug, Clone, PartialEq)]
pub struct IdTokenInfo<'a> {
    pub status: AuthorizationStatus,
    /// Until when the station may keep the verdict in its authorisation cache: the tag's
    /// expiry, when it has one.
    pub cache_expiry: Option<DateTime<Utc>>,
    /// The group the token belongs to (1.6's parentIdTag): tokens of one group may stop each
    /// other's transactions. Sent as an idToken of type `Central` (cms's own grouping).
    pub group_id_token: Option<&'a str>,
    /// What the station shows the driver (`personalMessage`, UTF8): the price of a site that
    /// shows prices (docs/tariffs.md "Prices on the charger").
    pub personal_message: Option<&'a str>,
}

impl IdTokenInfo<'_> {
    pub fn of(status: AuthorizationStatus) -> IdTokenInfo<'static> {
        IdTokenInfo {
            status,
            cache_expiry: None,
            group_id_token: None,
            personal_message: None,
        }
    }
}

/// The most characters a MessageContentType's `content` holds.
const MESSAGE_CONTENT_MAX: usize = 512;

/// `{"idTokenInfo":{...}}`: an AuthorizeResponse, or a TransactionEventResponse for an event
/// that held an idToken.
pub fn id_token_answer(info: &IdTokenInfo<'_>) -> String {
    let mut out = format!(r#"{{"idTokenInfo":{{"status":"{}""#, info.status);
    if let Some(expiry) = info.cache_expiry {
        out.push_str(r#","cacheExpiryDateTime":""#);
        out.push_str(&clock(expiry));
        out.push('"');
    }
    if let Some(group) = info.group_id_token {
        // A JSON string of the group's id, escaped as JSON escapes it.
        let group = serde_json::Value::from(group).to_string();
        out.push_str(&format!(
            r#","groupIdToken":{{"idToken":{group},"type":"Central"}}"#
        ));
    }
    if let Some(message) = info.personal_message {
        // MessageContentType holds at most 512 characters.
        let content: String = message.chars().take(MESSAGE_CONTENT_MAX).collect();
        let content = serde_json::Value::from(content).to_string();
        out.push_str(&format!(
            r#","personalMessage":{{"format":"UTF8","content":{content}}}"#
        ));
    }
    out.push_str("}}");
    out
}

/// DataTransferResponse to any vendor's data: cms knows no vendor extension.
pub fn data_transfer_unknown_vendor() -> String {
    r#"{"status":"UnknownVendorId"}"#.to_owned()
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use serde_json::Value;

    use super::*;
    use crate::v201::Action;

    fn fits(action: Action, text: &str) {
        let payload: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        if let Err(found) = action.validate_response(&payload) {
            panic!("{action} answer {text} breaks its schema: {found:?}");
        }
    }

    #[test]
    fn every_answer_fits_its_official_response_schema() {
        let now = Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0).unwrap();
        for status in RegistrationStatus::ALL {
            fits(
                Action::BootNotification,
                &boot_notification(now, 300, *status),
            );
        }
        fits(Action::Heartbeat, &heartbeat(now));
        for status in AuthorizationStatus::ALL {
            fits(Action::Authorize, &authorize(*status));
            fits(Action::TransactionEvent, &transaction_event(Some(*status)));
        }
        fits(Action::TransactionEvent, &transaction_event(None));
        let full = IdTokenInfo {
            status: AuthorizationStatus::Accepted,
            cache_expiry: Some(now),
            group_id_token: Some("FLEET \"7\""),
            personal_message: Some("0.36 EUR/kWh, \"peak\" 0.61 EUR per session"),
        };
        fits(Action::Authorize, &id_token_answer(&full));
        fits(Action::TransactionEvent, &id_token_answer(&full));
        let long = "x".repeat(600);
        let long = IdTokenInfo {
            personal_message: Some(&long),
            ..full.clone()
        };
        fits(Action::Authorize, &id_token_answer(&long));
        fits(Action::DataTransfer, &data_transfer_unknown_vendor());
        for action in [
            Action::StatusNotification,
            Action::MeterValues,
            Action::NotifyEvent,
            Action::NotifyReport,
            Action::SecurityEventNotification,
            Action::FirmwareStatusNotification,
            Action::LogStatusNotification,
        ] {
            fits(action, EMPTY);
        }
    }

    #[test]
    fn answers_read_as_the_specification_writes_them() {
        let now = Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0).unwrap();
        assert_eq!(
            boot_notification(now, 300, RegistrationStatus::Pending),
            r#"{"currentTime":"2026-11-21T10:00:00Z","interval":300,"status":"Pending"}"#
        );
        assert_eq!(heartbeat(now), r#"{"currentTime":"2026-11-21T10:00:00Z"}"#);
        assert_eq!(
            transaction_event(Some(AuthorizationStatus::NotAllowedTypeEVSE)),
            r#"{"idTokenInfo":{"status":"NotAllowedTypeEVSE"}}"#
        );
        assert_eq!(transaction_event(None), "{}");
        let grouped = IdTokenInfo {
            status: AuthorizationStatus::Blocked,
            cache_expiry: Some(now),
            group_id_token: Some("FLEET"),
            personal_message: None,
        };
        assert_eq!(
            id_token_answer(&grouped),
            concat!(
                r#"{"idTokenInfo":{"status":"Blocked","cacheExpiryDateTime":"2026-11-21T10:00:00Z","#,
                r#""groupIdToken":{"idToken":"FLEET","type":"Central"}}}"#
            )
        );
        let priced = IdTokenInfo {
            personal_message: Some("0.36 EUR/kWh, 0.61 EUR per session"),
            ..IdTokenInfo::of(AuthorizationStatus::Accepted)
        };
        assert_eq!(
            id_token_answer(&priced),
            concat!(
                r#"{"idTokenInfo":{"status":"Accepted","personalMessage":"#,
                r#"{"format":"UTF8","content":"0.36 EUR/kWh, 0.61 EUR per session"}}}"#
            )
        );
        assert_eq!(
            data_transfer_unknown_vendor(),
            r#"{"status":"UnknownVendorId"}"#
        );
    }

    #[test]
    fn an_answer_missing_what_the_schema_requires_is_refused() {
        // The test above can fail: the response schemas are strict.
        let without_interval: Value =
            serde_json::from_str(r#"{"currentTime":"2026-11-21T10:00:00Z","status":"Accepted"}"#)
                .unwrap();
        let found = Action::BootNotification
            .validate_response(&without_interval)
            .unwrap_err();
        assert_eq!(found.first().field, "interval");
        let lowercase: Value =
            serde_json::from_str(r#"{"idTokenInfo":{"status":"accepted"}}"#).unwrap();
        assert!(Action::Authorize.validate_response(&lowercase).is_err());
    }
}
