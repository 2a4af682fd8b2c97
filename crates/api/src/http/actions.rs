//! Chargers > Actions: send one of the 26 OCPP 1.6 calls of a central system (the security
//! extension's 7 included) to a 1.6 charger,
//! or one of the 31 OCPP 2.0.1 calls cms makes to a 2.0.1 station, and read the audit log. See
//! docs/actions.md for the statuses and the rules they keep.

use crate::control::actions::{Named, charger_version, named, path_segment_v201, validate_request};
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, RawBody, Rules};
use crate::http::lookup::{
    charger_access, charger_with_sensitive_data, forbidden_unless, not_found, visible_charger,
};
use crate::http::pagination::{PER_PAGE, Page, page_number, page_offset};
use crate::http::schema::{Data, ErrorBody, ValidationErrorBody};
use crate::http::secret_settings::secret_refusal;
use crate::http::{AppState, ChangesNoAccess};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::http::header::LOCATION;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use cms_bus::{ActionName, ActionRequest, RequestedBy, version_number};
use cms_http_server::AnswerBy;
use cms_ocpp::v16::{Command, SchemaViolations, secrets};
use cms_ocpp::v201;
use cms_store::actions::ActionRow;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    // One path for sending (POST, `{action}` a kebab-case OCPP action) and reading one action
    // (GET, `{action}` its uuid): a router takes one parameter name per path segment.
    OpenApiRouter::new()
        .routes(routes!(send, show))
        .routes(routes!(list))
}

/// How long `?wait` may hold a request, in seconds, and its default.
pub const MAX_WAIT: f64 = 60.0;
pub const DEFAULT_WAIT: u64 = 30;

/// An action: a call cms made (or is making) to a charger, and how it ended.
#[derive(Debug, Serialize, ToSchema)]
pub struct ActionBody {
    pub uuid: String,
    /// The OCPP action, e.g. `Reset`.
    pub action: String,
    /// The OCPP version the action was taken for (the charger's then): `1.6` or `2.0.1`.
    pub ocpp_version: String,
    /// The OCPP request payload, as sent; a secret configuration value shows as `***`.
    #[schema(value_type = Object)]
    pub request: Value,
    /// `pending`, `sent`, `answered`, `failed`, `timed_out` or `expired` (see docs/actions.md).
    pub status: String,
    /// The charger's answer, once `answered`; a secret configuration value shows as `***`.
    #[schema(value_type = Option<Object>)]
    pub response: Option<Value>,
    /// A CALLERROR's code and description, or cms's reason for another ending.
    pub error: Option<ActionErrorBody>,
    pub requested_by: RequestedByBody,
    pub created_at: String,
    pub sent_at: Option<String>,
    pub finished_at: Option<String>,
    /// Never sent after this.
    pub expires_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ActionErrorBody {
    pub code: String,
    pub description: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RequestedByBody {
    /// `user`, `cli` or `system`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The user's e-mail, for `user`.
    pub email: Option<String>,
}

impl ActionBody {
    /// The action just taken, as the requester who did not wait is told without reading it
    /// back: `pending`.
    fn taken(command: ActionRequest) -> Self {
        ActionBody {
            uuid: command.uuid,
            action: command.action.to_string(),
            ocpp_version: version_number(command.ocpp_version).to_string(),
            request: command.request,
            status: "pending".into(),
            response: None,
            error: None,
            requested_by: RequestedByBody {
                kind: command.requested_by.kind,
                email: command.requested_by.email,
            },
            created_at: command.created_at,
            sent_at: None,
            finished_at: None,
            expires_at: command.expires_at,
        }
    }
}

impl From<ActionRow> for ActionBody {
    fn from(row: ActionRow) -> Self {
        let json = |text: &str| serde_json::from_str(text).unwrap_or(Value::Null);
        // Kept masked since secrets were; one kept before is not shown either.
        let mut request = json(&row.request);
        secrets::mask_request(&row.action, &mut request);
        let mut response = row.response.as_deref().map(json);
        if let Some(response) = &mut response {
            secrets::mask_response(&row.action, response);
        }
        ActionBody {
            request,
            response,
            error: row.error_code.map(|code| ActionErrorBody {
                code,
                description: row.error_description.unwrap_or_default(),
            }),
            requested_by: RequestedByBody {
                kind: row.requested_by_type,
                email: row.requested_by_email,
            },
            uuid: row.uuid,
            action: row.action,
            ocpp_version: row.ocpp_version,
            status: row.status,
            created_at: row.created_at,
            sent_at: row.sent_at,
            finished_at: row.finished_at,
            expires_at: row.expires_at,
        }
    }
}

/// Send an action to a charger: `{action}` is the OCPP action in kebab-case, of the charger's
/// OCPP version (its `ocpp_version`; never connected: 1.6): for 1.6 `reset`,
/// `remote-start-transaction`, `get-log`, ... all 26 of OCPP 1.6 and its security extension; for 2.0.1 `reset`,
/// `request-start-transaction`, `get-base-report`, `set-display-message`, ... the 31 calls cms
/// makes in 2.0.1. The body is its request payload. Waits up to `wait` seconds for the charger.
#[utoipa::path(
    post,
    path = "/api/v3/chargers/{charger_uuid}/actions/{action}",
    tag = "Chargers > Actions",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("action" = String, Path, description = "The OCPP action in kebab-case, of the charger's OCPP version (one of 26 for 1.6, of 31 for 2.0.1)"),
        ("wait" = Option<i64>, Query, minimum = 0, maximum = 60,
            description = "Seconds to wait for the action to end (default 30)"),
    ),
    request_body(content = Object, description = "The OCPP request payload of the action \
        (e.g. `{\"type\": \"Soft\"}` for a 1.6 reset, `{\"type\": \"Immediate\"}` for a 2.0.1 one), \
        checked against its JSON schema of the charger's OCPP version"),
    responses(
        (status = 200, description = "The action ended within `wait`", body = Data<ActionBody>),
        (status = 202, description = "Still pending or sent; poll `Location`", body = Data<ActionBody>,
            headers(("Location" = String))),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:write, or the caller lacks full access"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees, or not an action of either OCPP version"),
        (status = 409, body = ErrorBody, description = "The charger is not connected: nothing was queued"),
        (status = 422, body = ValidationErrorBody, description = "`wait` or a field of the body is invalid, an action of the other OCPP version than the charger's (`action`, naming the charger's), the payload breaks the action's schema (keyed by the field's path), or a ChangeConfiguration of `AuthorizationKey` (`key`: changed with `PUT .../security`) or of a secret key given `***` or without `--secrets-key` (`value`)"),
    ),
    security(("bearer" = ["chargers:write"]), ("oauth2" = ["chargers:write"]))
)]
pub async fn send(
    State(state): State<AppState>,
    caller: Caller,
    Path((charger_uuid, segment)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
    answer_by: Option<Extension<AnswerBy>>,
    RawBody(body): RawBody,
) -> Result<Response, ApiError> {
    caller.authorize()?;
    // Who may, from memory: the charger's id and identity (which never changes) come with the
    // caller's access to it, so taking an action reads no row of it; the live session is read
    // as the action is stored, in the same statement.
    let charger = charger_access(&state, &caller, &charger_uuid).await?;
    if named(&segment, cms_ocpp::OcppVersion::V16) == Named::Unknown {
        return Err(not_found("Action"));
    }
    forbidden_unless(charger.permissions.full)?;
    let wait = wait_of(query)?;
    // The version its row shows now; should the charger reconnect speaking the other before
    // the action is sent, its gateway ends it `failed` (VersionMismatch) rather than send it.
    let version = state.store.charger_ocpp_version(charger.id).await?;
    let command = match named(&segment, charger_version(version.as_deref())) {
        Named::Call(command) => command,
        Named::OtherVersion(why) => {
            return Err(ApiError::Validation(BTreeMap::from([(
                "action".to_string(),
                vec![why],
            )])));
        }
        Named::Unknown => return Err(not_found("Action")),
    };
    let request = payload_of(&body)?;
    validate_request(&command, &request).map_err(schema_errors)?;
    if command == ActionName::V16(Command::ChangeConfiguration) {
        let (key, value) = (request["key"].as_str(), request["value"].as_str());
        let can_seal = state.dispatch.can_seal();
        let field = if key.is_some_and(|k| k.eq_ignore_ascii_case(secrets::AUTHORIZATION_KEY)) {
            "key"
        } else {
            "value"
        };
        if let Some(why) = secret_refusal(key.unwrap_or(""), value.unwrap_or(""), can_seal) {
            return Err(ApiError::Validation(BTreeMap::from([(
                field.to_string(),
                vec![why],
            )])));
        }
    }
    let requested_by = RequestedBy {
        kind: "user".into(),
        email: caller.email(),
    };
    let dispatch = &state.dispatch;
    let taken = dispatch
        .take_live(
            charger.id,
            &charger.identity,
            command,
            request,
            requested_by,
        )
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let Some((taken, ended)) = taken else {
        // Not connected, or gone since this replica last checked its row (then 404).
        visible_charger(&state, &caller, &charger_uuid).await?;
        return Err(ApiError::Conflict("The charger is not connected.".into()));
    };
    let uuid = taken.uuid.clone();
    let end = if wait.is_zero() {
        // Nothing to wait for: the receiver is dropped, and the action goes on.
        dispatch.stop_waiting(&uuid);
        None
    } else {
        let deadline = AnswerBy::wait_until(answer_by.map(|Extension(at)| at), wait);
        dispatch.end_of(&uuid, ended, deadline).await?
    };
    // As stored now (it may have been sent meanwhile, or ended otherwise first); a request
    // that did not wait is told what it took, without asking the store again.
    let body = if wait.is_zero() {
        ActionBody::taken(taken)
    } else {
        let row = state.store.action(charger.id, &uuid).await?;
        row.map(ActionBody::from)
            .ok_or_else(|| ApiError::Internal("an action taken was not stored".into()))?
    };
    if end.is_some() {
        let body = Json(Data::new(body));
        return Ok((StatusCode::OK, Extension(ChangesNoAccess), body).into_response());
    }
    let body = Json(Data::new(body));
    let location = format!("/api/v3/chargers/{charger_uuid}/actions/{uuid}");
    Ok((
        StatusCode::ACCEPTED,
        Extension(ChangesNoAccess),
        [(LOCATION, location)],
        body,
    )
        .into_response())
}

/// The charger's actions, newest first, 25 a page: the audit log.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/actions",
    tag = "Chargers > Actions",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
    ),
    responses(
        (status = 200, description = "A page of actions", body = Page<ActionBody>),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:read, or the caller may not read the charger's sensitive data"),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<ActionBody>>, ApiError> {
    caller.authorize()?;
    let page = page_number(query.get("page").map(String::as_str))?;
    // Actions' requests and answers carry drivers' id tags (a remote start's, a reservation's,
    // a local list's): sensitive data, as transactions are.
    let charger = charger_with_sensitive_data(&state, &caller, &charger_uuid).await?;
    let (rows, total) = state
        .store
        .actions_page(charger.id, PER_PAGE, page_offset(page))
        .await?;
    let data = rows.into_iter().map(ActionBody::from).collect();
    let path = format!("/api/v3/chargers/{charger_uuid}/actions");
    Ok(Json(Page::new(&path, page, total, data)))
}

/// One action of the charger.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/actions/{action}",
    tag = "Chargers > Actions",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("action" = String, Path, format = "uuid", description = "The action's uuid"),
    ),
    responses(
        (status = 200, description = "The action", body = Data<ActionBody>),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:read, or the caller may not read the charger's sensitive data"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees, or not an action sent to it"),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path((charger_uuid, action_uuid)): Path<(String, String)>,
) -> Result<Json<Data<ActionBody>>, ApiError> {
    caller.authorize()?;
    // Actions' requests and answers carry drivers' id tags (a remote start's, a reservation's,
    // a local list's): sensitive data, as transactions are.
    let charger = charger_with_sensitive_data(&state, &caller, &charger_uuid).await?;
    let row = state
        .store
        .action(charger.id, &action_uuid)
        .await?
        .ok_or_else(|| not_found("Action"))?;
    Ok(Json(Data::new(row.into())))
}

/// Puts each action's official request schema in the OpenAPI document (as a component named
/// `Ocpp16<Action>Request` or `Ocpp201<Action>Request`) and makes the send endpoint's body one
/// of them: the schemas are vendored from the OCA's, so the document shows exactly what is
/// checked. A draft-06 schema's definitions (2.0.1's, and the 1.6 security extension's) become
/// components of their own (see [`add_component`]), so that its references resolve.
pub fn document_request_schemas(document: &mut Value) {
    let mut choices = Vec::with_capacity(Command::ALL.len() + v201::Command::ALL.len());
    let mut segments: Vec<String> = Vec::new();
    for command in Command::ALL {
        let Some(text) = cms_ocpp::v16::schema_text(command.as_str(), false) else {
            continue;
        };
        let segment = command.path_segment().to_string();
        let name = format!("Ocpp16{}Request", command.as_str());
        let description = format!("The body of `{segment}` (OCPP 1.6).");
        if add_component(document, "Ocpp16", &name, description, text) {
            choices.push(json!({"$ref": format!("#/components/schemas/{name}")}));
            segments.push(segment);
        }
    }
    for command in v201::Command::ALL {
        let Some(text) = v201::schema_text(command.as_str(), false) else {
            continue;
        };
        let segment = path_segment_v201(command);
        let name = format!("Ocpp201{}Request", command.as_str());
        let description = format!("The body of `{segment}` (OCPP 2.0.1).");
        if add_component(document, "Ocpp201", &name, description, text) {
            choices.push(json!({"$ref": format!("#/components/schemas/{name}")}));
            if !segments.contains(&segment) {
                segments.push(segment);
            }
        }
    }
    let send = &mut document["paths"]["/api/v3/chargers/{charger_uuid}/actions/{action}"]["post"];
    send["requestBody"]["content"]["application/json"]["schema"] = json!({"oneOf": choices});
    // The path segment's allowed values, from the lists of actions there are: both versions'.
    segments.sort_unstable();
    if let Some(parameters) = send["parameters"].as_array_mut() {
        for parameter in parameters.iter_mut().filter(|p| p["name"] == "action") {
            parameter["schema"] = json!({"type": "string", "enum": segments});
        }
    }
}

/// Puts one official schema (`text`) into the document as the component `name`; false if it
/// is not a JSON object. A draft-06 schema's definitions (2.0.1's, and the 1.6 security
/// extension's) become components of their own, `<prefix><Type>`, or `<name><Type>` for a type
/// another file defines otherwise (the OCA's files word some descriptions differently), and its
/// references point at them, so that they resolve in the document.
fn add_component(
    document: &mut Value,
    prefix: &str,
    name: &str,
    description: String,
    text: &str,
) -> bool {
    let Ok(Value::Object(mut schema)) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    let definitions = match schema.remove("definitions") {
        Some(Value::Object(definitions)) => definitions,
        _ => Default::default(),
    };
    // Draft-04 and draft-06 bookkeeping that OpenAPI 3.1's JSON Schema reads otherwise, and a
    // comment that is no keyword.
    for key in ["$schema", "id", "$id", "comment"] {
        schema.remove(key);
    }
    schema.insert("description".into(), description.into());
    let mut schema = Value::Object(schema);
    // Each type under the shared name, unless another file holds it otherwise.
    let components = &document["components"]["schemas"];
    let named: HashMap<String, String> = definitions
        .iter()
        .map(|(type_name, definition)| {
            let shared = format!("{prefix}{type_name}");
            let mut as_shared = definition.clone();
            refer_to_components(&mut as_shared, prefix, &HashMap::new());
            let component = match components.get(&shared) {
                Some(held) if *held != as_shared => format!("{name}{type_name}"),
                _ => shared,
            };
            (type_name.clone(), component)
        })
        .collect();
    for (type_name, mut definition) in definitions {
        refer_to_components(&mut definition, prefix, &named);
        document["components"]["schemas"][&named[&type_name]] = definition;
    }
    refer_to_components(&mut schema, prefix, &named);
    document["components"]["schemas"][name] = schema;
    true
}

/// Points a draft-06 schema's references to its definitions (`#/definitions/IdTokenType`) at
/// the components they become: `named`'s, else the shared `<prefix><Type>`.
fn refer_to_components(schema: &mut Value, prefix: &str, named: &HashMap<String, String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match (key.as_str(), value.as_str()) {
                    ("$ref", Some(target)) => {
                        if let Some(type_name) = target.strip_prefix("#/definitions/") {
                            let component = named
                                .get(type_name)
                                .cloned()
                                .unwrap_or_else(|| format!("{prefix}{type_name}"));
                            *value = format!("#/components/schemas/{component}").into();
                        }
                    }
                    _ => refer_to_components(value, prefix, named),
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| refer_to_components(item, prefix, named)),
        _ => {}
    }
}

/// A 422 naming every field the payload gets wrong, as Laravel names nested fields
/// (`csChargingProfiles.chargingSchedule.chargingRateUnit`, `localAuthorizationList.0.idTag`).
pub fn schema_errors(violations: SchemaViolations) -> ApiError {
    let mut errors: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for refused in violations {
        let field = match refused.field.as_str() {
            "" => "payload".to_string(),
            field => field.to_string(),
        };
        errors
            .entry(field)
            .or_default()
            .push(refused.violation.description);
    }
    ApiError::Validation(errors)
}

/// `?wait=`: whole seconds from 0 to 60; default 30.
pub fn wait_of(query: HashMap<String, String>) -> Result<Duration, ApiError> {
    let mut input = Input::from_query(query);
    let wait = input.integer("wait", Rules::optional().between(0.0, MAX_WAIT));
    input.finish()?;
    Ok(Duration::from_secs(
        wait.flatten().map_or(DEFAULT_WAIT, |w| w as u64),
    ))
}

/// The request payload: the body as a JSON object; an empty body is `{}`.
pub(crate) fn payload_of(body: &[u8]) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(value @ Value::Object(_)) => Ok(value),
        _ => Err(ApiError::BadRequest(
            "The body must be a JSON object: the action's OCPP request payload.".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_shows_each_actions_official_request_schema() {
        let (_, document) = crate::http::api_routes();
        let mut document = serde_json::to_value(&document).unwrap();
        document_request_schemas(&mut document);
        let schemas = &document["components"]["schemas"];
        assert_eq!(
            schemas["Ocpp16ResetRequest"]["properties"]["type"]["enum"],
            serde_json::json!(["Hard", "Soft"])
        );
        assert!(schemas["Ocpp16ResetRequest"].get("$schema").is_none());
        let send = &document["paths"]["/api/v3/chargers/{charger_uuid}/actions/{action}"]["post"];
        let body = &send["requestBody"]["content"]["application/json"]["schema"]["oneOf"];
        assert_eq!(body.as_array().map(Vec::len), Some(26 + 31), "{body}");
        let action = send["parameters"]
            .as_array()
            .and_then(|p| p.iter().find(|p| p["name"] == "action"))
            .expect("the action parameter");
        assert_eq!(action["schema"]["enum"][0], "cancel-reservation");
        // 26 of 1.6 and 31 of 2.0.1, 19 of them named alike (reset, reserve-now, get-log, ...).
        assert_eq!(action["schema"]["enum"].as_array().map(Vec::len), Some(38));
    }

    #[test]
    fn the_document_shows_the_16_security_extensions_schemas_with_their_references_resolved() {
        let (_, document) = crate::http::api_routes();
        let mut document = serde_json::to_value(&document).unwrap();
        document_request_schemas(&mut document);
        let schemas = &document["components"]["schemas"];
        let get_log = &schemas["Ocpp16GetLogRequest"];
        assert_eq!(
            get_log["properties"]["log"]["$ref"],
            "#/components/schemas/Ocpp16LogParametersType"
        );
        assert_eq!(
            schemas["Ocpp16LogParametersType"]["required"],
            serde_json::json!(["remoteLocation"])
        );
        assert!(get_log.get("definitions").is_none() && get_log.get("$id").is_none());
        // 1.6's trigger names its own messages, apart from 2.0.1's type of the same name.
        let trigger = &schemas["Ocpp16ExtendedTriggerMessageRequest"];
        let requested = trigger["properties"]["requestedMessage"]["$ref"]
            .as_str()
            .unwrap();
        let target = document.pointer(requested.trim_start_matches('#')).unwrap();
        assert!(
            target["enum"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m == "SignChargePointCertificate"),
            "{target}"
        );
        let send = &document["paths"]["/api/v3/chargers/{charger_uuid}/actions/{action}"]["post"];
        let action = send["parameters"]
            .as_array()
            .and_then(|p| p.iter().find(|p| p["name"] == "action"))
            .expect("the action parameter");
        let segments = action["schema"]["enum"].as_array().unwrap();
        for segment in ["extended-trigger-message", "signed-update-firmware"] {
            assert!(segments.iter().any(|s| s == segment), "{segment}");
        }
        let mut unresolved = Vec::new();
        every_ref(&document, &mut |target| {
            if document.pointer(target.trim_start_matches('#')).is_none() {
                unresolved.push(target.to_string());
            }
        });
        assert!(unresolved.is_empty(), "{unresolved:?}");
    }

    #[test]
    fn the_document_shows_the_201_actions_request_schemas_with_their_references_resolved() {
        let (_, document) = crate::http::api_routes();
        let mut document = serde_json::to_value(&document).unwrap();
        document_request_schemas(&mut document);
        let schemas = &document["components"]["schemas"];
        let reset = &schemas["Ocpp201ResetRequest"];
        assert_eq!(
            reset["properties"]["type"]["$ref"],
            "#/components/schemas/Ocpp201ResetEnumType"
        );
        assert_eq!(
            schemas["Ocpp201ResetEnumType"]["enum"],
            serde_json::json!(["Immediate", "OnIdle"])
        );
        assert!(reset.get("definitions").is_none() && reset.get("$schema").is_none());
        let send = &document["paths"]["/api/v3/chargers/{charger_uuid}/actions/{action}"]["post"];
        let body = &send["requestBody"]["content"]["application/json"]["schema"]["oneOf"];
        for command in v201::Command::ALL {
            let name = format!("#/components/schemas/Ocpp201{}Request", command.as_str());
            assert!(
                body.as_array().unwrap().iter().any(|c| c["$ref"] == name),
                "{name}"
            );
        }
        let action = send["parameters"]
            .as_array()
            .and_then(|p| p.iter().find(|p| p["name"] == "action"))
            .expect("the action parameter");
        let segments = action["schema"]["enum"].as_array().unwrap();
        for segment in [
            "request-start-transaction",
            "get-base-report",
            "remote-start-transaction",
        ] {
            assert!(segments.iter().any(|s| s == segment), "{segment}");
        }
        // Every reference resolves.
        let mut unresolved = Vec::new();
        every_ref(&document, &mut |target| {
            if document.pointer(target.trim_start_matches('#')).is_none() {
                unresolved.push(target.to_string());
            }
        });
        assert!(unresolved.is_empty(), "{unresolved:?}");
        let resolve = |reference: &Value| {
            let target = reference["$ref"].as_str().unwrap().trim_start_matches('#');
            document.pointer(target).unwrap().clone()
        };
        // A type two files word differently is each file's own.
        let text = v201::schema_text("GetVariables", false).unwrap();
        let official: Value = serde_json::from_str(text).unwrap();
        let shown = &schemas["Ocpp201GetVariablesRequest"];
        let data = resolve(&shown["properties"]["getVariableData"]["items"]);
        assert_eq!(
            resolve(&data["properties"]["attributeType"]),
            official["definitions"]["AttributeEnumType"]
        );
    }

    fn every_ref(value: &Value, found: &mut impl FnMut(&str)) {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    match (key.as_str(), value.as_str()) {
                        ("$ref", Some(target)) => found(target),
                        _ => every_ref(value, found),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| every_ref(v, found)),
            _ => {}
        }
    }

    #[test]
    fn an_empty_body_is_an_empty_payload_and_anything_but_an_object_is_refused() {
        assert_eq!(payload_of(b"").unwrap(), serde_json::json!({}));
        assert_eq!(payload_of(b" \n").unwrap(), serde_json::json!({}));
        assert!(payload_of(b"[1]").is_err());
        assert!(payload_of(b"nope").is_err());
        assert_eq!(
            payload_of(br#"{"type":"Soft"}"#).unwrap(),
            serde_json::json!({"type": "Soft"})
        );
    }
}
