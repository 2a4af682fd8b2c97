//! The list keeper's OCPP 2.0.1 side (functional block D): SendLocalList's 2.0.1 payload, and
//! the parts of an update that fit a station's `ItemsPerMessage` and `BytesPerMessage`.

use cms_store::local_lists::{ListChange, ListEntry, ListLimits, ListUpdate, next_update};
use serde_json::{Value, json};

/// The idToken type of every entry cms sends (and of its groupIdToken): cms's id tags are
/// cards' uids as 1.6 knew them, and the gateway's Authorize answers any type alike
/// (docs/decisions.md).
pub const ID_TOKEN_TYPE: &str = "ISO14443";

/// What a CALL frame adds to its payload, with cms's message ids (an action's uuid).
const FRAME_OVERHEAD: usize =
    r#"[2,"00000000-0000-0000-0000-000000000000","SendLocalList",]"#.len();

/// The SendLocalList request of `update`: a removal is an entry without idTagInfo; a full
/// update of an empty list has no `localAuthorizationList` (the schema wants one item or more).
pub fn send_local_list(update: &ListUpdate) -> Value {
    let entries: Vec<Value> = update
        .changes
        .iter()
        .map(|change| match change {
            ListChange::Upsert(entry) => authorization_data(entry),
            ListChange::Remove { id_tag, .. } => json!({"idToken": id_token(id_tag)}),
        })
        .collect();
    let mut request = json!({
        "versionNumber": update.version,
        "updateType": update.update_type.as_str(),
    });
    if !entries.is_empty() {
        request["localAuthorizationList"] = Value::Array(entries);
    }
    request
}

fn id_token(id_tag: &str) -> Value {
    json!({"idToken": id_tag, "type": ID_TOKEN_TYPE})
}

fn authorization_data(entry: &ListEntry) -> Value {
    let mut info = json!({"status": entry.status});
    if let Some(expiry) = &entry.expiry_date {
        info["cacheExpiryDateTime"] = json!(expiry);
    }
    if let Some(parent) = &entry.parent_id_tag {
        info["groupIdToken"] = id_token(parent);
    }
    json!({"idToken": id_token(&entry.id_tag), "idTokenInfo": info})
}

/// The bytes the CALL of `request` takes on the wire.
fn frame_bytes(request: &Value) -> usize {
    request.to_string().len() + FRAME_OVERHEAD
}

/// The next update from `held` (at `version`) to `desired` and its request, within `limits`:
/// no more entries than `max_send`, no more bytes than `max_bytes` (an entry larger alone is
/// sent alone). `None` when the station holds `desired` already.
pub fn next_update_within(
    held: &[ListEntry],
    version: i64,
    needs_full: bool,
    desired: &[ListEntry],
    limits: ListLimits,
) -> Option<(ListUpdate, Value)> {
    let mut part = limits.max_send;
    loop {
        let update = next_update(held, version, needs_full, desired, part)?;
        let request = send_local_list(&update);
        let (bytes, count) = (frame_bytes(&request), update.changes.len());
        match limits.max_bytes {
            // Fewer entries, in proportion, until it fits: each round sends fewer.
            Some(max) if bytes > max && count > 1 => {
                part = Some((count * max / bytes).clamp(1, count - 1));
            }
            _ => return Some((update, request)),
        }
    }
}

#[cfg(test)]
mod tests;
