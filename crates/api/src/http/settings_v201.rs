//! Chargers > Settings of a 2.0.1 station: its device model as its reports listed it, and
//! changes to it, checked against what the model says of each variable (mutability, data
//! type, limits, allowed values) before anything is sent, then sent together as one
//! SetVariables through the actions' path and answered per key from its result.

use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::Input;
use crate::http::schema::Data;
use crate::http::settings_bodies::{SettingBody, SettingChangeBody, settings_field};
use crate::http::{AppState, ChangesNoAccess};
use crate::ingest::device_model::{answers, is_secret_variable};
use axum::Extension;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use cms_bus::ActionName;
use cms_bus::RequestedBy;
use cms_ocpp::v16::secrets::MASK;
use cms_ocpp::v201;
use cms_store::ChargerRow;
use cms_store::device_model::{ACTUAL, VariableRow, WRITE_ONLY};
use serde_json::{Map, Value, json};

/// SetVariables bounds a value (attributeValue) to 1,000 characters.
const MAX_VALUE: usize = 1000;

/// Whether an attribute's value is a secret: never kept, shown as `***`, sent sealed.
fn is_secret(row: &VariableRow) -> bool {
    row.mutability == WRITE_ONLY || is_secret_variable(&row.variable)
}

/// The device model as `GET .../settings` lists it.
pub(super) fn listed(model: Vec<VariableRow>) -> Vec<SettingBody> {
    model
        .into_iter()
        .map(|row| SettingBody {
            value: match is_secret(&row) {
                true => Some(MASK.to_string()),
                false => row.value,
            },
            readonly: row.mutability == "ReadOnly",
            key: row.key,
            updated_at: row.updated_at,
            component: Some(row.component),
            component_instance: row.component_instance,
            evse_id: row.evse_id,
            connector_id: row.connector_id,
            variable: Some(row.variable),
            variable_instance: row.variable_instance,
            attribute_type: Some(row.attribute_type),
            mutability: Some(row.mutability),
            data_type: row.data_type,
            unit: row.unit,
        })
        .collect()
}

/// One value to set: the attribute as the model holds it.
pub(super) struct Change<'m> {
    row: &'m VariableRow,
    value: String,
}

/// `PUT .../settings` of a 2.0.1 station (`model` not empty): one SetVariables of every key.
pub(super) async fn change(
    state: &AppState,
    caller: &Caller,
    charger: &ChargerRow,
    model: &[VariableRow],
    mut input: Input,
    deadline: tokio::time::Instant,
) -> Result<Response, ApiError> {
    let changes = changes_of(&mut input, model, state.dispatch.can_seal());
    input.finish()?;
    let (request, masked) = set_variables(&changes);
    let requested_by = RequestedBy {
        kind: "user".into(),
        email: caller.email(),
    };
    let taken = state
        .dispatch
        .take_live_masked(
            charger.id,
            &charger.identity,
            ActionName::V201(v201::Command::SetVariables),
            request,
            masked,
            requested_by,
        )
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let Some((command, ended)) = taken else {
        return Err(ApiError::Conflict("The charger is not connected.".into()));
    };
    let uuid = command.uuid;
    state.dispatch.wait_for_end(&uuid, ended, deadline).await?;
    let row = state.store.action(charger.id, &uuid).await?;
    let (status, answer) = row.map_or(("pending".to_string(), None), |r| (r.status, r.response));
    let ended = !matches!(status.as_str(), "pending" | "sent");
    let answered = answer
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .map(|response| answers(&response))
        .unwrap_or_default();
    let data: Vec<SettingChangeBody> = changes
        .iter()
        .map(|change| {
            let key = &change.row.key;
            let told = answered.iter().find(|(k, _)| k == key);
            SettingChangeBody {
                key: key.clone(),
                status: told.map_or_else(|| status.clone(), |(_, status)| status.clone()),
                action: uuid.clone(),
            }
        })
        .collect();
    let status = if ended {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, Extension(ChangesNoAccess), Json(Data::new(data))).into_response())
}

/// `settings`: 1 to 100 keys of the model (matched without regard to ASCII case, as 2.0.1
/// names are) to values it allows; in the order given.
pub(super) fn changes_of<'m>(
    input: &mut Input,
    model: &'m [VariableRow],
    can_seal: bool,
) -> Vec<Change<'m>> {
    let Some(settings) = settings_field(input) else {
        return Vec::new();
    };
    let mut changes: Vec<Change<'m>> = Vec::with_capacity(settings.len());
    for (key, value) in settings {
        let field = format!("settings.{}", key.replace('\0', ""));
        let Some(row) = model.iter().find(|row| row.key.eq_ignore_ascii_case(&key)) else {
            input.fail(
                &field,
                format!("The {key} setting is not in the station's device model."),
            );
            continue;
        };
        if changes.iter().any(|c| std::ptr::eq(c.row, row)) {
            input.fail(&field, format!("The {key} setting is given twice."));
            continue;
        }
        let value = match value {
            Value::String(value) => value,
            _ => {
                input.fail(&field, format!("The {field} field must be a string."));
                continue;
            }
        };
        match refusal(row, &value, can_seal) {
            Some(why) => input.fail(&field, why),
            None => changes.push(Change { row, value }),
        }
    }
    changes
}

/// Why `value` may not be set to the attribute `row`, if it may not.
fn refusal(row: &VariableRow, value: &str, can_seal: bool) -> Option<String> {
    let key = &row.key;
    if row.mutability == "ReadOnly" {
        return Some(format!("The {key} setting is read-only."));
    }
    if value.contains('\0') {
        return Some(format!(
            "The {key} setting must not contain NUL characters."
        ));
    }
    if value.chars().count() > MAX_VALUE {
        return Some(format!(
            "The {key} setting must not be greater than {MAX_VALUE} characters."
        ));
    }
    if is_secret(row) {
        if row.component.eq_ignore_ascii_case("SecurityCtrlr")
            && row.variable.eq_ignore_ascii_case("BasicAuthPassword")
        {
            return Some(format!(
                "The {key} setting is the station's password, which cms checks it by: set here, \
                 it would lock the station out."
            ));
        }
        if value == MASK {
            return Some(format!(
                "The {key} setting is write-only: {MASK} is how cms shows it, not a value."
            ));
        }
        if !can_seal {
            return Some(format!(
                "The {key} setting is a secret, and this API has no --secrets-key to send it \
                 to the station's gateway sealed."
            ));
        }
    }
    out_of_characteristics(row, value).map(|why| format!("The {key} setting {why}."))
}

/// How `value` falls outside what the variable's characteristics allow, if it does.
fn out_of_characteristics(row: &VariableRow, value: &str) -> Option<String> {
    let allowed = || {
        let list = row.values_list.as_deref().unwrap_or_default();
        list.split(',').map(str::trim).collect::<Vec<_>>()
    };
    let within = |number: f64| match (row.min_limit, row.max_limit) {
        (Some(min), _) if number < min => Some(format!("must be at least {min}")),
        (_, Some(max)) if number > max => Some(format!("must not be greater than {max}")),
        _ => None,
    };
    match row.data_type.as_deref()? {
        "integer" => match value.trim().parse::<i64>() {
            Ok(number) => within(number as f64),
            Err(_) => Some("must be an integer".into()),
        },
        "decimal" => match value.trim().parse::<f64>() {
            Ok(number) if number.is_finite() => within(number),
            _ => Some("must be a decimal number".into()),
        },
        "boolean" => {
            (!["true", "false"].contains(&value)).then(|| "must be true or false".to_string())
        }
        "dateTime" => chrono::DateTime::parse_from_rfc3339(value)
            .is_err()
            .then(|| "must be a date and time (RFC 3339)".to_string()),
        "OptionList" if row.values_list.is_some() => (!allowed().contains(&value))
            .then(|| format!("must be one of {}", allowed().join(", "))),
        "SequenceList" | "MemberList" if row.values_list.is_some() => {
            let members = allowed();
            let unknown = value
                .split(',')
                .map(str::trim)
                .any(|m| !members.contains(&m));
            unknown.then(|| format!("must be a list of {}", members.join(", ")))
        }
        "string" => match row.max_limit {
            Some(max) if value.chars().count() as f64 > max => {
                Some(format!("must not be greater than {max} characters"))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The SetVariables request of `changes`, and its masked form when one of them is a secret.
fn set_variables(changes: &[Change<'_>]) -> (Value, Option<Value>) {
    let data = |mask: bool| -> Vec<Value> {
        let entries = changes.iter().map(|change| {
            let value = match mask && is_secret(change.row) {
                true => MASK,
                false => &change.value,
            };
            set_variable_data(change.row, value)
        });
        entries.collect()
    };
    let request = json!({"setVariableData": data(false)});
    let masked = changes
        .iter()
        .any(|change| is_secret(change.row))
        .then(|| json!({"setVariableData": data(true)}));
    (request, masked)
}

/// One `setVariableData` entry: the attribute named as the station named it.
fn set_variable_data(row: &VariableRow, value: &str) -> Value {
    let mut component = Map::new();
    component.insert("name".into(), json!(row.component));
    if let Some(instance) = &row.component_instance {
        component.insert("instance".into(), json!(instance));
    }
    if let Some(evse) = row.evse_id {
        let mut evse = json!({"id": evse});
        if let Some(connector) = row.connector_id {
            evse["connectorId"] = json!(connector);
        }
        component.insert("evse".into(), evse);
    }
    let mut variable = json!({"name": row.variable});
    if let Some(instance) = &row.variable_instance {
        variable["instance"] = json!(instance);
    }
    let mut entry = json!({"attributeValue": value, "component": component, "variable": variable});
    if row.attribute_type != ACTUAL {
        entry["attributeType"] = json!(row.attribute_type);
    }
    entry
}

#[cfg(test)]
mod round_trip;
#[cfg(test)]
mod tests;
