//! The calls a charger makes in the OCA's security extension for OCPP 1.6-J
//! (LogStatusNotification, SecurityEventNotification, SignCertificate,
//! SignedFirmwareStatusNotification): checked against the OCA's own schemas, not by hand. The
//! gateway keeps nothing of them but their bytes; the materialiser reads the few fields it
//! stores where it stores them.

use serde_json::{Map, Value};

use super::schemas::call_schemas;
use super::{Action, Request};
use crate::error::{ErrorCode, Violation};
use crate::json::{Json, Number};
use crate::json_schema::stream;

/// Checks a payload of one of the extension's calls: one streaming pass, nothing kept; a
/// payload it leaves (a refusal, anything unusual) is decided by the tree validator, whose
/// first violation is the answer, so both read alike.
pub(super) fn parse(action: Action, payload: &str) -> Result<Request<'static>, Violation> {
    let schema = &call_schemas(action.as_str()).request;
    if stream::check(schema, payload, &[]).is_none() {
        let tree: Value = serde_json::from_str(payload).map_err(|e| {
            let message = format!("payload is not valid JSON: {e}");
            Violation::new(ErrorCode::FormationViolation, message)
        })?;
        schema.validate(&tree)?;
    }
    Ok(request(action))
}

/// [`parse`] for a payload already parsed into a [`Json`] tree.
pub(super) fn parse_json(action: Action, json: Json<'_>) -> Result<Request<'static>, Violation> {
    call_schemas(action.as_str())
        .request
        .validate(&value_of(json))?;
    Ok(request(action))
}

/// The request of a valid call of the extension.
fn request(action: Action) -> Request<'static> {
    match action {
        Action::LogStatusNotification => Request::LogStatusNotification,
        Action::SecurityEventNotification => Request::SecurityEventNotification,
        Action::SignCertificate => Request::SignCertificate,
        Action::SignedFirmwareStatusNotification => Request::SignedFirmwareStatusNotification,
        other => unreachable!("{other} is a core call, parsed by hand"),
    }
}

/// A [`Json`] tree as the validator reads it; of a repeated member the last counts, as
/// serde_json's own tree keeps it.
fn value_of(json: Json<'_>) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(b),
        Json::Number(Number::Unsigned(u)) => Value::from(u),
        Json::Number(Number::Signed(i)) => Value::from(i),
        Json::Number(Number::Float(x)) => Value::from(x),
        Json::Str(s) => Value::String(s.into_owned()),
        Json::Array(items) => Value::Array(items.into_iter().map(value_of).collect()),
        Json::Object(members) => {
            let mut map = Map::with_capacity(members.len());
            for (key, value) in members {
                map.insert(key.into_owned(), value_of(value));
            }
            Value::Object(map)
        }
    }
}
