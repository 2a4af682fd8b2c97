//! Chargers > Settings: a charger's configuration as cms last knew it (read after each boot),
//! and changes to it, one ChangeConfiguration per key through the actions' path.

use crate::control::actions::Target;
use crate::http::actions::wait_of;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::Input;
use crate::http::lookup::{forbidden_unless, visible_charger};
use crate::http::schema::{Data, ErrorBody, ValidationErrorBody};
use crate::http::secret_settings::secret_refusal;
use crate::http::settings_bodies::{SettingBody, SettingChangeBody, settings_field};
use crate::http::settings_v201;
use crate::http::{AppState, ChangesNoAccess};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use cms_bus::RequestedBy;
use cms_http_server::AnswerBy;
use cms_ocpp::v16::Command;
use cms_ocpp::v16::secrets;
use cms_store::ChargerRow;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show, change))
}

/// OCPP 1.6 bounds the key (CiString50) and the value (CiString500) of ChangeConfiguration.
const MAX_KEY: usize = 50;
const MAX_VALUE: usize = 500;

/// The body of `PUT .../settings`.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct SettingsChangeRequest {
    /// Keys (1 to 50 characters) to their new values (at most 500 characters), changed in the
    /// order given; 1 to 100 keys.
    #[schema(value_type = Object)]
    settings: BTreeMap<String, String>,
}

/// Whether the charger's settings are a 2.0.1 device model: it spoke 2.0.1 when it last
/// connected (a charger connected before cms kept the version: whether it reported one).
fn speaks_201<T>(charger: &ChargerRow, model: &[T]) -> bool {
    match charger.ocpp_version.as_deref() {
        Some(version) => version == "2.0.1",
        None => !model.is_empty(),
    }
}

/// The charger's configuration as last known, by key (`[]` until one was read); for a 2.0.1
/// station, its device model as its reports listed it.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/settings",
    tag = "Chargers > Settings",
    params(("charger_uuid" = String, Path, format = "uuid")),
    responses(
        (status = 200, body = Data<Vec<SettingBody>>),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
) -> Result<Json<Data<Vec<SettingBody>>>, ApiError> {
    caller.authorize()?;
    let charger = visible_charger(&state, &caller, &charger_uuid).await?;
    let model = state.store.device_model(charger.id).await?;
    if speaks_201(&charger, &model) {
        return Ok(Json(Data::new(settings_v201::listed(model))));
    }
    let settings = state.store.settings(charger.id).await?;
    let data = settings
        .into_iter()
        .map(|s| SettingBody {
            // Kept masked since secrets were; a value kept before is not shown either.
            value: s.value.map(|value| match secrets::is_secret_key(&s.key) {
                true => secrets::MASK.to_string(),
                false => value,
            }),
            key: s.key,
            readonly: s.readonly != 0,
            updated_at: s.updated_at,
            component: None,
            component_instance: None,
            evse_id: None,
            connector_id: None,
            variable: None,
            variable_instance: None,
            attribute_type: None,
            mutability: None,
            data_type: None,
            unit: None,
        })
        .collect();
    Ok(Json(Data::new(data)))
}

/// Change configuration keys: one ChangeConfiguration per key, in the order given. A key the
/// kept configuration marks read-only is refused before anything is sent. For a 2.0.1 station,
/// the keys of its device model (as `GET` lists them) in one SetVariables, each value checked
/// against the variable's mutability, data type, limits and allowed values first.
#[utoipa::path(
    put,
    path = "/api/v3/chargers/{charger_uuid}/settings",
    tag = "Chargers > Settings",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("wait" = Option<i64>, Query, minimum = 0, maximum = 60,
            description = "Seconds to wait for the changes to end (default 30)"),
    ),
    request_body = SettingsChangeRequest,
    responses(
        (status = 200, description = "Every change ended", body = Data<Vec<SettingChangeBody>>),
        (status = 202, description = "Some changes still go on", body = Data<Vec<SettingChangeBody>>),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:write, or the caller lacks full access"),
        (status = 409, body = ErrorBody, description = "The charger is not connected"),
        (status = 422, body = ValidationErrorBody, description = "`wait` or a field of the body is invalid: `settings` missing or empty, a key or value out of bounds, a read-only key, `AuthorizationKey` (changed with `PUT .../security`), or a secret key given `***` or without `--secrets-key` (`settings.<key>`); for a 2.0.1 station also a key not in its device model, a value outside the variable's data type, limits or allowed values, or `SecurityCtrlr/BasicAuthPassword`"),
    ),
    security(("bearer" = ["chargers:write"]), ("oauth2" = ["chargers:write"]))
)]
pub async fn change(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    answer_by: Option<Extension<AnswerBy>>,
    mut input: Input,
) -> Result<Response, ApiError> {
    caller.authorize()?;
    let charger = visible_charger(&state, &caller, &charger_uuid).await?;
    forbidden_unless(charger.permissions.full)?;
    let wait = wait_of(query)?;
    let model = state.store.device_model(charger.id).await?;
    if speaks_201(&charger, &model) {
        let deadline = AnswerBy::wait_until(answer_by.map(|Extension(at)| at), wait);
        return settings_v201::change(&state, &caller, &charger, &model, input, deadline).await;
    }
    let readonly: Vec<String> = state
        .store
        .settings(charger.id)
        .await?
        .into_iter()
        .filter(|s| s.readonly != 0)
        .map(|s| s.key)
        .collect();
    let changes = settings_of(&mut input, &readonly, state.dispatch.can_seal());
    input.finish()?;
    let session = charger
        .live_session
        .clone()
        .ok_or_else(|| ApiError::Conflict("The charger is not connected.".into()))?;
    let email = caller.email();
    let target = Target {
        charger_id: charger.id,
        identity: &charger.identity,
        session: &session,
    };
    let mut taken = Vec::new();
    for (key, value) in changes {
        let requested_by = RequestedBy {
            kind: "user".into(),
            email: email.clone(),
        };
        let request = json!({"key": key, "value": value});
        let (uuid, ended) = state
            .dispatch
            .take(
                &target,
                Command::ChangeConfiguration.into(),
                request,
                requested_by,
            )
            .await
            .map_err(|e| ApiError::Internal(e.to_string()))?;
        taken.push((key, uuid, ended));
    }
    let deadline = AnswerBy::wait_until(answer_by.map(|Extension(at)| at), wait);
    let mut data = Vec::with_capacity(taken.len());
    let mut all_ended = true;
    for (key, uuid, ended) in taken {
        state.dispatch.wait_for_end(&uuid, ended, deadline).await?;
        let row = state.store.action(charger.id, &uuid).await?;
        let (status, answer) =
            row.map_or(("pending".to_string(), None), |r| (r.status, r.response));
        all_ended &= !matches!(status.as_str(), "pending" | "sent");
        let answered = answer
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .and_then(|v| v["status"].as_str().map(str::to_string));
        data.push(SettingChangeBody {
            key,
            status: answered.unwrap_or(status),
            action: uuid,
        });
    }
    let status = if all_ended {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, Extension(ChangesNoAccess), Json(Data::new(data))).into_response())
}

/// `settings`: an object of 1 or more keys (1 to 50 characters) to string values (at most
/// 500), none of them read-only; in the order given. A secret key must pass
/// [`secret_refusal`].
pub(crate) fn settings_of(
    input: &mut Input,
    readonly: &[String],
    can_seal: bool,
) -> Vec<(String, String)> {
    let Some(settings) = settings_field(input) else {
        return Vec::new();
    };
    let mut changes = Vec::with_capacity(settings.len());
    for (key, value) in settings {
        let field = format!("settings.{}", key.replace('\0', ""));
        if key.contains('\0') {
            // Also told on `settings` as a whole, as for any field (crate::http::input).
            input.fail(&field, "A setting's key must not contain NUL characters.");
            continue;
        }
        let count = key.chars().count();
        if count == 0 || count > MAX_KEY {
            input.fail(
                &field,
                format!("A setting's key must be 1 to {MAX_KEY} characters."),
            );
            continue;
        }
        if readonly.iter().any(|k| k.eq_ignore_ascii_case(&key)) {
            input.fail(&field, format!("The {key} setting is read-only."));
            continue;
        }
        match value {
            Value::String(value) if value.contains('\0') => input.fail(
                &field,
                format!("The {field} field must not contain NUL characters."),
            ),
            Value::String(value) if value.chars().count() <= MAX_VALUE => {
                match secret_refusal(&key, &value, can_seal) {
                    Some(why) => input.fail(&field, why),
                    None => changes.push((key, value)),
                }
            }
            Value::String(_) => input.fail(
                &field,
                format!("The {field} field must not be greater than {MAX_VALUE} characters."),
            ),
            _ => input.fail(&field, format!("The {field} field must be a string.")),
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_of(body: &[u8]) -> BTreeMap<String, Vec<String>> {
        let mut input = Input::from_json(body).expect("a JSON object");
        settings_of(&mut input, &[], true);
        match input.finish() {
            Err(ApiError::Validation(errors)) => errors,
            other => panic!("expected a 422, got {other:?}"),
        }
    }

    #[test]
    fn a_nul_in_a_setting_is_named_as_such_on_its_key() {
        let errors = errors_of(br#"{"settings": {"HeartbeatInterval": "6\u00000"}}"#);
        assert_eq!(
            errors["settings.HeartbeatInterval"],
            ["The settings.HeartbeatInterval field must not contain NUL characters."]
        );
        let errors = errors_of(br#"{"settings": {"Heart\u0000beat": "60"}}"#);
        assert_eq!(
            errors["settings.Heartbeat"],
            ["A setting's key must not contain NUL characters."]
        );
    }

    #[test]
    fn one_request_changes_at_most_a_hundred_keys() {
        let keys = |n: usize| (0..n).map(|i| (format!("Key{i}"), json!("1"))).collect();
        let body = |n: usize| serde_json::to_vec(&json!({"settings": Value::Object(keys(n))}));
        let mut input = Input::from_json(&body(100).unwrap()).unwrap();
        assert_eq!(settings_of(&mut input, &[], true).len(), 100);
        assert!(input.finish().is_ok());
        let errors = errors_of(&body(101).unwrap());
        assert_eq!(
            errors["settings"],
            ["The settings field must not have more than 100 items."]
        );
    }
}
