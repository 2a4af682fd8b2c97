//! Secrets out of a frame a gateway kept, done when the frame is read (never on the frame path),
//! by the gateway before a frame leaves it on the bus and by `cms up`'s API: the
//! values of secret configuration keys (`cms_ocpp::v16::secrets`: `AuthorizationKey`, any
//! `...Password`, ...) in a 1.6 ChangeConfiguration or a GetConfiguration answer, and of secret
//! variables (`BasicAuthPassword`, ...) in a 2.0.1 SetVariables, GetVariables answer or
//! NotifyReport. Id tags are not secrets. A frame that does not read as JSON (cut, or broken)
//! and may hold a secret is not shown at all.

use crate::v16::secrets::{self, MASK, is_secret_key};
use serde_json::Value;

/// The frame's text as shown: masked, and marked when the gateway kept it cut.
pub fn shown(bytes: &[u8], len: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let shown = match serde_json::from_str::<Value>(&text) {
        Ok(mut frame) => match mask(&mut frame) {
            true => frame.to_string(),
            false => text.into_owned(),
        },
        Err(_) if may_hold_secret(&text) => {
            "[not shown: the frame does not read whole and may hold a secret]".to_string()
        }
        Err(_) => text.into_owned(),
    };
    match bytes.len() < len {
        true => format!("{shown}... [cut: {len} bytes in all]"),
        false => shown,
    }
}

/// Whether the text names anything a secret key's name ends with.
fn may_hold_secret(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    secrets::SECRET_SUFFIXES
        .iter()
        .any(|suffix| lower.contains(suffix))
}

/// Masks the secrets of an OCPP-J frame; whether there were any.
fn mask(frame: &mut Value) -> bool {
    let before = frame.clone();
    match frame.as_array_mut().map(|a| a.as_mut_slice()) {
        Some([kind, _, action, payload]) if *kind == 2 => {
            let action = action.as_str().unwrap_or_default().to_string();
            secrets::mask_request(&action, payload);
            match action.as_str() {
                "SetVariables" => mask_entries(payload, "setVariableData", "attributeValue"),
                "NotifyReport" => {
                    for report in entries(payload, "reportData") {
                        if secret_variable(report) {
                            for attribute in entries(report, "variableAttribute") {
                                mask_field(attribute, "value");
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Some([kind, _, payload]) if *kind == 3 => {
            // An answer does not name its call: the shape tells it.
            secrets::mask_response("GetConfiguration", payload);
            mask_entries(payload, "getVariableResult", "attributeValue");
        }
        _ => {}
    }
    *frame != before
}

fn entries<'a>(payload: &'a mut Value, list: &str) -> impl Iterator<Item = &'a mut Value> {
    payload
        .get_mut(list)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

fn secret_variable(entry: &Value) -> bool {
    entry["variable"]["name"]
        .as_str()
        .is_some_and(is_secret_key)
}

fn mask_entries(payload: &mut Value, list: &str, field: &str) {
    for entry in entries(payload, list) {
        if secret_variable(entry) {
            mask_field(entry, field);
        }
    }
}

fn mask_field(entry: &mut Value, field: &str) {
    if let Some(value) = entry.get_mut(field).filter(|v| !v.is_null()) {
        *value = Value::String(MASK.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(text: &str) -> String {
        shown(text.as_bytes(), text.len())
    }

    #[test]
    fn a_secret_setting_is_masked_both_ways_and_an_id_tag_is_not() {
        let change =
            r#"[2,"1","ChangeConfiguration",{"key":"AuthorizationKey","value":"41424344"}]"#;
        assert!(show(change).contains(r#""value":"***""#));
        let read = r#"[3,"2",{"configurationKey":[{"key":"WifiPassword","readonly":false,"value":"pw"},{"key":"HeartbeatInterval","readonly":false,"value":"300"}]}]"#;
        let read = show(read);
        assert!(
            !read.contains(r#""pw""#) && read.contains(r#""300""#),
            "{read}"
        );
        let start = r#"[2,"3","StartTransaction",{"connectorId":1,"idTag":"TAG-1","meterStart":0,"timestamp":"2026-01-01T00:00:00Z"}]"#;
        assert_eq!(show(start), start, "unchanged, as sent");
    }

    #[test]
    fn a_201_password_variable_is_masked() {
        let set = r#"[2,"1","SetVariables",{"setVariableData":[{"attributeValue":"s3cret","component":{"name":"SecurityCtrlr"},"variable":{"name":"BasicAuthPassword"}}]}]"#;
        assert!(!show(set).contains("s3cret"));
        let report = r#"[2,"2","NotifyReport",{"requestId":1,"generatedAt":"2026-01-01T00:00:00Z","seqNo":0,"reportData":[{"component":{"name":"SecurityCtrlr"},"variable":{"name":"BasicAuthPassword"},"variableAttribute":[{"value":"s3cret"}]}]}]"#;
        assert!(!show(report).contains("s3cret"));
    }

    #[test]
    fn a_cut_frame_is_marked_and_not_shown_when_it_may_hold_a_secret() {
        let frame = r#"[2,"1","ChangeConfiguration",{"key":"WifiPassword","value":"abc"#;
        let shown = shown(frame.as_bytes(), 9_000);
        assert!(!shown.contains("abc") && shown.ends_with("[cut: 9000 bytes in all]"));
        let heartbeat = r#"[2,"1","DataTransfer",{"vendorId":"x","data":"aaaa"#;
        assert!(shown_contains(heartbeat, "aaaa"));
    }

    fn shown_contains(frame: &str, part: &str) -> bool {
        shown(frame.as_bytes(), 9_000).contains(part)
    }
}
