//! The rules of an id tag's fields, shared by the REST API and `cms id-tag import` so that a
//! file row is refused exactly when the same body would be, with the same messages.

use crate::http::input::{Input, Rules};
use cms_store::id_tags::{DEFAULT_ID_TAG_STATUS, ID_TAG_STATUSES, IdTagFields};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// OCPP's CiString20: at most 20 characters.
pub const ID_TAG_MAX: usize = 20;

/// Whether `text` may be an id tag: 1 to 20 printable ASCII characters, no space. OCPP allows
/// spaces in a CiString, but a tag is an identifier read off a card: a space in one is a
/// mistake of whoever typed it, invisible in a list, so it is refused.
pub fn is_id_tag(text: &str) -> bool {
    (1..=ID_TAG_MAX).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_graphic())
}

/// A date-time in RFC 3339 as OCPP sends them: UTC in whole seconds, `2026-11-21T10:00:00Z`
/// (fractions of a second are dropped, a leap second is its minute's last second). `None` if
/// it is not one, or if in UTC it falls outside the years 0000 to 9999: chrono would write
/// such a year with a sign and five digits, which is not RFC 3339, so chargers and the gateway
/// could not read it back.
pub fn ocpp_date_time(text: &str) -> Option<String> {
    use chrono::{Datelike, Timelike};
    let t = chrono::DateTime::parse_from_rfc3339(text.trim()).ok()?;
    let t = t.with_timezone(&chrono::Utc).with_nanosecond(0)?;
    (0..=9999)
        .contains(&t.year())
        .then(|| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

/// Reads a tag's fields from `input`, recording every failure. `id_tag` is required unless
/// `known_tag` names the tag (a replacement, whose path names it): then it may be left out,
/// and if given must be the same tag in any case. `None` when some rule failed.
pub fn read_id_tag(input: &mut Input, known_tag: Option<&str>) -> Option<IdTagFields> {
    let tag_rules = match known_tag {
        Some(_) => Rules::optional(),
        None => Rules::required(),
    };
    let id_tag = ci_string(input, "id_tag", tag_rules).flatten();
    let id_tag = match (id_tag, known_tag) {
        (Some(given), Some(known)) if !given.eq_ignore_ascii_case(known) => {
            input.fail(
                "id_tag",
                "The id tag field must be the tag of the path: a tag cannot be renamed.",
            );
            None
        }
        (None, Some(known)) if !input.has("id_tag") => Some(known.to_string()),
        (given, _) => given,
    };
    // Getters answer `None` both for an absent field and an invalid one: absent ones default.
    let status = match input.one_of("status", Rules::optional(), &ID_TAG_STATUSES) {
        Some(status) => status,
        None if input.has("status") => None,
        None => Some(DEFAULT_ID_TAG_STATUS.into()),
    };
    let expiry_date = match input.string("expiry_date", Rules::optional().nullable()) {
        Some(Some(text)) => match ocpp_date_time(&text) {
            Some(date) => Some(Some(date)),
            None => {
                let message = if chrono::DateTime::parse_from_rfc3339(text.trim()).is_ok() {
                    "The expiry date field must fall within the years 0000 to 9999 in UTC."
                } else {
                    "The expiry date field must be an RFC 3339 date-time, like 2026-11-21T10:00:00Z."
                };
                input.fail("expiry_date", message);
                None
            }
        },
        Some(None) => Some(None),
        None => (!input.has("expiry_date")).then_some(None),
    };
    let parent_id_tag = ci_string(input, "parent_id_tag", Rules::optional().nullable())
        .or_else(|| (!input.has("parent_id_tag")).then_some(None));
    let name = match input.string("name", Rules::optional().nullable().max(255.0)) {
        // Laravel reads an empty string as null.
        Some(name) => Some(name.filter(|n| !n.trim().is_empty())),
        None => (!input.has("name")).then_some(None),
    };
    Some(IdTagFields {
        id_tag: id_tag?,
        status: status?,
        expiry_date: expiry_date?,
        parent_id_tag: parent_id_tag?,
        name: name?,
    })
}

/// A CiString20 field (see [`is_id_tag`]).
fn ci_string(input: &mut Input, field: &str, rules: Rules) -> Option<Option<String>> {
    let text = input.string(field, rules.max(ID_TAG_MAX as f64))?;
    match text {
        Some(t) if !is_id_tag(&t) => {
            let name = crate::http::input::attribute(field);
            input.fail(
                field,
                format!("The {name} field must be printable ASCII characters without spaces."),
            );
            None
        }
        other => Some(other),
    }
}

/// A new tag's fields from a record of named text fields (a file row; an empty field is left
/// out, so it takes its default): the fields, or every failing field with its messages, as
/// the API would answer the same body.
pub fn id_tag_from_record(
    record: impl IntoIterator<Item = (String, String)>,
) -> Result<IdTagFields, BTreeMap<String, Vec<String>>> {
    let fields: Map<String, Value> = record
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let mut input = Input::new(fields);
    let tag = read_id_tag(&mut input, None);
    match (input.finish(), tag) {
        (Ok(()), Some(tag)) => Ok(tag),
        (Err(crate::ApiError::Validation(errors)), _) => Err(errors),
        _ => Err(BTreeMap::from([(
            "id_tag".to_string(),
            vec!["The row is invalid.".to_string()],
        )])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_tags_are_up_to_twenty_printable_ascii_characters() {
        assert!(is_id_tag("04A2B3C4D5E6F7"));
        assert!(is_id_tag("a-b_c.d:e/f#g"));
        assert!(is_id_tag(&"X".repeat(20)));
        for bad in ["", "with space", "tab\t", "é", &"X".repeat(21)] {
            assert!(!is_id_tag(bad), "{bad:?}");
        }
    }

    #[test]
    fn expiry_dates_become_whole_seconds_in_utc() {
        assert_eq!(
            ocpp_date_time("2026-11-21T11:00:00.75+01:00").as_deref(),
            Some("2026-11-21T10:00:00Z")
        );
        for bad in ["2026-11-21", "tomorrow", "2026-13-01T00:00:00Z"] {
            assert_eq!(ocpp_date_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn expiry_dates_stay_within_the_years_rfc_3339_can_write() {
        // In UTC these are 10000-01-01 and -0001-12-31: refused, not stored as "+10000-...".
        for bad in ["9999-12-31T23:59:59-01:00", "0000-01-01T00:00:00+01:00"] {
            assert_eq!(ocpp_date_time(bad), None, "{bad}");
        }
        assert_eq!(
            ocpp_date_time("9999-12-31T23:59:59Z").as_deref(),
            Some("9999-12-31T23:59:59Z")
        );
        assert_eq!(
            ocpp_date_time("0000-01-01T00:00:00Z").as_deref(),
            Some("0000-01-01T00:00:00Z")
        );
        // A leap second is shown as the charger is sent it.
        assert_eq!(
            ocpp_date_time("2027-12-31T23:59:60Z").as_deref(),
            Some("2027-12-31T23:59:59Z")
        );
    }

    #[test]
    fn a_record_with_only_a_tag_is_an_accepted_tag() {
        let record = [("id_tag", "card"), ("status", ""), ("name", "")]
            .map(|(k, v)| (k.to_string(), v.to_string()));
        let tag = id_tag_from_record(record).unwrap();
        assert_eq!(tag, IdTagFields::accepted("card"));
    }

    #[test]
    fn a_record_names_each_failing_field() {
        let record = [
            ("id_tag", "a tag"),
            ("status", "Maybe"),
            ("expiry_date", "soon"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let errors = id_tag_from_record(record).unwrap_err();
        let fields: Vec<&str> = errors.keys().map(String::as_str).collect();
        assert_eq!(fields, ["expiry_date", "id_tag", "status"]);
        assert_eq!(errors["status"], ["The selected status is invalid."]);
    }
}
