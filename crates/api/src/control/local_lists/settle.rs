//! What an ended call about a charger's list teaches (OCPP 1.6 §5.10, §5.15, §6.33, §6.45;
//! 2.0.1 D01, D02: the same answers, the version as `versionNumber`).

use cms_store::local_lists::{CallOutcome, EndedCall};
use serde_json::Value;

/// The outcome of `ended`; `retry_at` is when a failure that would fail again at once may be
/// tried again.
pub fn outcome_of(ended: &EndedCall, retry_at: &str) -> CallOutcome {
    let later = || Some(retry_at.to_string());
    if ended.kind == "clear_cache" {
        // Answered, refused or lost, it is not sent again; only one never sent is.
        return match ended.status.as_deref() {
            Some("expired") | None => CallOutcome::Retry { retry_after: None },
            _ => CallOutcome::CacheCleared,
        };
    }
    let check = ended.kind == "check";
    let response: Value = ended
        .response
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok())
        .unwrap_or(Value::Null);
    match ended.status.as_deref() {
        Some("answered") if check => match response["listVersion"]
            .as_i64()
            .or_else(|| response["versionNumber"].as_i64())
        {
            // -1: the charger keeps no local list.
            Some(-1) => CallOutcome::Unsupported,
            // 0 is how a charger says its list is empty, whichever version emptied it.
            Some(version) => CallOutcome::Checked {
                matches: version == ended.expected_version
                    || (version == 0 && ended.held_entries == 0),
                reported: version,
            },
            None => CallOutcome::Retry {
                retry_after: later(),
            },
        },
        Some("answered") => match response["status"].as_str() {
            Some("Accepted") => CallOutcome::Accepted,
            Some("NotSupported") => CallOutcome::Unsupported,
            // The version sent was not above the charger's: it holds something else than cms
            // knew of, which a full update replaces at once (after a full one, it would only
            // say the same again: wait).
            Some("VersionMismatch") if ended.kind == "differential" => {
                CallOutcome::NeedsFull { retry_after: None }
            }
            _ => CallOutcome::NeedsFull {
                retry_after: later(),
            },
        },
        // A CALLERROR saying the charger does not do this at all.
        Some("failed")
            if matches!(
                ended.error_code.as_deref(),
                Some("NotImplemented" | "NotSupported")
            ) =>
        {
            CallOutcome::Unsupported
        }
        // Never sent (the charger went away, or the claimant before taking it): nothing
        // happened at the charger.
        Some("expired") | None => CallOutcome::Retry { retry_after: None },
        // A CALLERROR, or no answer: a version check is just asked again; an update may or
        // may not have been made, which only a full one settles.
        _ if check => CallOutcome::Retry {
            retry_after: later(),
        },
        _ => CallOutcome::NeedsFull {
            retry_after: later(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(kind: &str, status: Option<&str>, response: &str, error: Option<&str>) -> EndedCall {
        EndedCall {
            charger_id: 1,
            action_uuid: "u".into(),
            kind: kind.into(),
            status: status.map(str::to_string),
            response: Some(response.to_string()),
            error_code: error.map(str::to_string),
            expected_version: 3,
            held_entries: 2,
        }
    }

    const LATER: &str = "2026-11-21T10:00:30.000000Z";

    fn full_later() -> CallOutcome {
        CallOutcome::NeedsFull {
            retry_after: Some(LATER.into()),
        }
    }

    #[test]
    fn an_update_is_held_when_accepted_and_replaced_by_a_full_one_otherwise() {
        let answered = |kind, status| {
            let response = format!(r#"{{"status":"{status}"}}"#);
            outcome_of(&ended(kind, Some("answered"), &response, None), LATER)
        };
        assert_eq!(answered("full", "Accepted"), CallOutcome::Accepted);
        assert_eq!(
            answered("differential", "VersionMismatch"),
            CallOutcome::NeedsFull { retry_after: None }
        );
        assert_eq!(answered("full", "VersionMismatch"), full_later());
        assert_eq!(answered("differential", "Failed"), full_later());
        assert_eq!(answered("full", "NotSupported"), CallOutcome::Unsupported);
        let lost = ended("differential", Some("timed_out"), "null", Some("Timeout"));
        assert_eq!(outcome_of(&lost, LATER), full_later());
        let refused = ended("full", Some("failed"), "null", Some("NotImplemented"));
        assert_eq!(outcome_of(&refused, LATER), CallOutcome::Unsupported);
        let unsent = ended("full", Some("expired"), "null", Some("Disconnected"));
        assert_eq!(
            outcome_of(&unsent, LATER),
            CallOutcome::Retry { retry_after: None }
        );
    }

    #[test]
    fn a_cache_clear_is_sent_again_only_when_it_never_went() {
        let clear =
            |status, response| outcome_of(&ended("clear_cache", status, response, None), LATER);
        let done = CallOutcome::CacheCleared;
        assert_eq!(clear(Some("answered"), r#"{"status":"Accepted"}"#), done);
        assert_eq!(clear(Some("answered"), r#"{"status":"Rejected"}"#), done);
        assert_eq!(clear(Some("timed_out"), "null"), done);
        let unsent = CallOutcome::Retry { retry_after: None };
        assert_eq!(clear(Some("expired"), "null"), unsent);
        assert_eq!(clear(None, "null"), unsent);
    }

    #[test]
    fn a_version_check_compares_with_the_version_cms_knows_of() {
        let check = |version: i64, held_entries| {
            let mut call = ended(
                "check",
                Some("answered"),
                &format!(r#"{{"listVersion":{version}}}"#),
                None,
            );
            call.held_entries = held_entries;
            outcome_of(&call, LATER)
        };
        let checked = |matches, reported| CallOutcome::Checked { matches, reported };
        assert_eq!(check(3, 2), checked(true, 3));
        assert_eq!(check(4, 2), checked(false, 4));
        assert_eq!(check(0, 2), checked(false, 0));
        assert_eq!(check(0, 0), checked(true, 0));
        assert_eq!(check(-1, 2), CallOutcome::Unsupported);
        let v201 =
            |response: &str| outcome_of(&ended("check", Some("answered"), response, None), LATER);
        assert_eq!(v201(r#"{"versionNumber":3}"#), checked(true, 3));
        assert_eq!(v201(r#"{"versionNumber":5}"#), checked(false, 5));
        let lost = ended("check", Some("timed_out"), "null", Some("Timeout"));
        assert_eq!(
            outcome_of(&lost, LATER),
            CallOutcome::Retry {
                retry_after: Some(LATER.into())
            }
        );
    }
}
