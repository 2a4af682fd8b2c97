//! Chargers: the list (endpoint 11), one charger, a site's chargers and registering one there,
//! and a connector's latest meter value (endpoint 8). Connectors and proxy servers have modules
//! of their own.
//!
//! A charger the caller cannot see is a 404; one they see but may not change (they lack `full`,
//! which only the owner team of its site has) is a 403.

pub(crate) mod connectors;
mod licenses;
pub(crate) mod proxy;
mod security;

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::conditional;
use crate::http::error::ApiError;
use crate::http::fleet::FleetFilter;
use crate::http::input::{Input, Rules};
use crate::http::lookup::{
    charger_access_with_sensitive_data, held_charger, not_found, owned_site, path_number,
    visible_charger, visible_site,
};
use crate::http::pagination::{PER_PAGE, Page, filters_query, page_number, page_offset};
use crate::http::schema::{Data, ErrorBody, PermissionsBody, ValidationErrorBody};
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use cms_credentials::{CredentialError, charger_credentials, check_charger_identity};
use cms_store::access_log::VisibleCharger;
use cms_store::firmware_logs::{TransferState, Transfers};
use cms_store::{ChargerRow, NewCharger, StoreError};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(show))
        .routes(routes!(list_site_chargers, create_site_charger))
        .routes(routes!(latest_meter_value))
        .merge(connectors::routes())
        .merge(proxy::routes())
        .merge(security::routes())
        .merge(licenses::routes())
}

/// A charger, as the reference shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct Charger {
    #[schema(format = "uuid")]
    pub uuid: String,
    pub id: i64,
    /// What the charger connects as: `wss://…/ocpp/{identity}`.
    pub identity: String,
    #[schema(required = true)]
    pub reference: Option<String>,
    /// `never_seen` until the charger first connects, then `online` or `offline`.
    #[schema(example = "never_seen")]
    pub connection_status: String,
    /// The charger's own status (connector 0 of its StatusNotification).
    #[schema(required = true)]
    pub status: Option<String>,
    #[schema(required = true)]
    pub error: Option<String>,
    #[schema(required = true)]
    pub error_info: Option<String>,
    #[schema(required = true)]
    pub vendor_id: Option<String>,
    #[schema(required = true)]
    pub vendor_error_code: Option<String>,
    #[schema(required = true)]
    pub firmware_version: Option<String>,
    /// The OCPP version of the charger's last connection, as agreed in its websocket handshake
    /// (subprotocol `ocpp1.6` or `ocpp2.0.1`); null until it first connected.
    #[schema(required = true, example = "1.6", pattern = r"^(1\.6|2\.0\.1)$")]
    pub ocpp_version: Option<String>,
    /// The gateway the charger last connected to.
    #[schema(required = true)]
    pub server: Option<String>,
    #[schema(required = true)]
    pub last_connection_at: Option<String>,
    #[schema(required = true)]
    pub last_disconnection_at: Option<String>,
    #[schema(required = true)]
    pub last_heartbeat_at: Option<String>,
    pub setup_pending: bool,
    pub setup_completed: bool,
    pub blocked: bool,
    /// Amperes.
    #[schema(required = true)]
    pub max_current: Option<f64>,
    pub created_at: String,
    pub updated_at: String,
    pub licenses: ChargerLicenses,
    /// OCPP security profile: 0 no credentials, 1 Basic auth, 2 Basic auth over wss, 3 a
    /// client certificate over wss.
    #[schema(minimum = 0, maximum = 3)]
    pub security_profile: i64,
    /// What the caller may do with the charger.
    pub permissions: PermissionsBody,
    /// Its firmware update as it last told it (FirmwareStatusNotification, 1.6's signed one
    /// too); null until it first did.
    #[schema(required = true)]
    pub firmware: Option<TransferBody>,
    /// Its log upload as it last told it (LogStatusNotification, 1.6's
    /// DiagnosticsStatusNotification); null until it first did.
    #[schema(required = true)]
    pub log_upload: Option<TransferBody>,
}

/// The last status a charger told of a firmware update or a log upload.
#[derive(Debug, Serialize, ToSchema)]
pub struct TransferBody {
    /// As the charger said it: e.g. `Downloading`, `Installed`, `InstallationFailed` for
    /// firmware; `Uploading`, `Uploaded`, `UploadFailure` (1.6's diagnostics: `UploadFailed`)
    /// for logs.
    #[schema(example = "Installed")]
    pub status: String,
    /// The `requestId` of the UpdateFirmware/GetLog it answers (1.6's own notifications have
    /// none).
    #[schema(required = true)]
    pub request_id: Option<i64>,
    /// When cms received it.
    pub updated_at: String,
}

impl From<TransferState> for TransferBody {
    fn from(t: TransferState) -> Self {
        TransferBody {
            status: t.status,
            request_id: t.request_id,
            updated_at: t.updated_at,
        }
    }
}

impl Charger {
    /// With its firmware update's and log upload's states.
    fn with_transfers(mut self, transfers: Transfers) -> Self {
        self.firmware = transfers.firmware.map(Into::into);
        self.log_upload = transfers.log_upload.map(Into::into);
        self
    }
}

/// The paid features a charger has.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChargerLicenses {
    pub smart: bool,
    pub pro: bool,
}

impl From<ChargerRow> for Charger {
    fn from(c: ChargerRow) -> Self {
        Charger {
            uuid: c.uuid,
            id: c.id,
            identity: c.identity,
            reference: c.reference,
            connection_status: c.connection_status,
            status: c.status,
            error: c.error,
            error_info: c.error_info,
            vendor_id: c.vendor_id,
            vendor_error_code: c.vendor_error_code,
            firmware_version: c.firmware_version,
            ocpp_version: c.ocpp_version,
            server: c.server,
            last_connection_at: c.last_connection_at,
            last_disconnection_at: c.last_disconnection_at,
            last_heartbeat_at: c.last_heartbeat_at,
            setup_pending: c.setup_pending,
            setup_completed: c.setup_completed,
            blocked: c.blocked,
            max_current: c.max_current,
            created_at: c.created_at,
            updated_at: c.updated_at,
            licenses: ChargerLicenses {
                smart: c.license_smart,
                pro: c.license_pro,
            },
            security_profile: c.security_profile,
            permissions: c.permissions.into(),
            // Read beside the row (crate::http::chargers's show and lists).
            firmware: None,
            log_upload: None,
        }
    }
}

/// The body of `POST /api/v3/sites/{site_uuid}/chargers`.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct NewChargerBody {
    /// Unique; 1 to 48 characters of `A-Z a-z 0-9 * - _ = : + | @ .` (what the gateway accepts
    /// in `/ocpp/{identity}`).
    #[schema(
        min_length = 1,
        max_length = 48,
        pattern = r"^[A-Za-z0-9*\-_=:+|@.]{1,48}$"
    )]
    identity: String,
    #[schema(max_length = 255)]
    reference: Option<String>,
    /// The charger's Basic-auth password (OCPP security profile 1): 16 to 40 printable ASCII
    /// characters without `:`. Stored hashed, never shown again. Without one (and without
    /// `security_profile` 0) a strong password is generated and returned once.
    #[schema(min_length = 16, max_length = 40, pattern = r"^[!-9;-~]{16,40}$")]
    password: Option<String>,
    /// OCPP security profile: 1 (Basic auth, the default), 2 (Basic auth over wss only), 3 (a
    /// client certificate over wss, subject CN = identity; no `password`), or 0 (no
    /// credentials: anyone who knows the identity can connect; for the platform operators' test
    /// benches only, and then without `password`).
    #[schema(minimum = 0, maximum = 3)]
    security_profile: Option<i64>,
}

/// A charger just registered: with its generated password, shown this once.
#[derive(Serialize, ToSchema)]
pub struct NewChargerAnswer {
    pub(crate) data: Charger,
    /// The Basic-auth password generated for the charger (user: its identity); present only
    /// when no `password` was given and the charger takes credentials. Not shown again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) password: Option<String>,
}

/// List chargers (endpoint 11): the chargers of every site the caller's teams reach, 25 a page.
#[utoipa::path(
    get,
    path = "/api/v3/chargers",
    tag = "Chargers",
    params(
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
        ("filter[search]" = Option<String>, Query,
            description = "A part of the identity or the reference, in any case"),
        ("filter[site_uuid]" = Option<String>, Query, format = "uuid",
            description = "Only this site's chargers"),
        ("filter[status]" = Option<String>, Query,
            description = "`online`, `offline` (never seen included) or `faulted` (the charger or a connector)"),
        ("filter[ocpp_version]" = Option<String>, Query,
            description = "`1.6` or `2.0.1`: the version of its last connection"),
    ),
    responses(
        (status = 200, description = "A page of chargers", body = Page<Charger>),
        (status = 422, body = ValidationErrorBody, description = "`page`, `filter[search]`, `filter[site_uuid]`, `filter[status]` or `filter[ocpp_version]` is invalid, or another filter is given"),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<Json<Page<Charger>>, ApiError> {
    caller.authorize()?;
    let page = page_number(page_of(&query))?;
    let filter = FleetFilter::read(&state, &caller, &query, FILTERS).await?;
    let (chargers, total) = charger_page(&state, &caller, None, &filter, page).await?;
    let filters = filters_query(&query);
    let path = "/api/v3/chargers";
    Ok(Json(Page::filtered(path, &filters, page, total, chargers)))
}

/// One charger.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}",
    tag = "Chargers",
    params(
        ("charger_uuid" = String, Path, format = "uuid"),
        ("If-None-Match" = Option<String>, Header, description = "An ETag of an earlier answer: 304 while it still holds"),
    ),
    responses(
        (status = 200, description = "The charger, with its `ETag`", body = Data<Charger>),
        (status = 304, description = "Not modified: `If-None-Match` named the current ETag"),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    caller.authorize()?;
    let charger = held_charger(&state, &caller, &charger_uuid).await?;
    let transfers = state.store.transfers(charger.id).await?;
    let charger = Charger::from(charger).with_transfers(transfers);
    let body = serde_json::to_vec(&Data::<Charger>::new(charger))
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(conditional::json_read(&headers, body))
}

/// The chargers of a site that the caller sees, 25 a page.
#[utoipa::path(
    get,
    path = "/api/v3/sites/{site_uuid}/chargers",
    tag = "Sites > Chargers",
    params(
        ("site_uuid" = String, Path, format = "uuid"),
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
        ("filter[search]" = Option<String>, Query,
            description = "A part of the identity or the reference, in any case"),
        ("filter[status]" = Option<String>, Query,
            description = "`online`, `offline` (never seen included) or `faulted` (the charger or a connector)"),
        ("filter[ocpp_version]" = Option<String>, Query,
            description = "`1.6` or `2.0.1`: the version of its last connection"),
    ),
    responses(
        (status = 200, description = "A page of the site's chargers", body = Page<Charger>),
        (status = 422, body = ValidationErrorBody, description = "`page`, `filter[search]`, `filter[status]` or `filter[ocpp_version]` is invalid, or another filter is given"),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn list_site_chargers(
    State(state): State<AppState>,
    caller: Caller,
    Path(site_uuid): Path<String>,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<Json<Page<Charger>>, ApiError> {
    caller.authorize()?;
    let (site_id, _) = visible_site(&state, &caller, &site_uuid).await?;
    let page = page_number(page_of(&query))?;
    let filter = FleetFilter::read(&state, &caller, &query, &FILTERS[..3]).await?;
    let (chargers, total) = charger_page(&state, &caller, Some(site_id), &filter, page).await?;
    let path = format!("/api/v3/sites/{site_uuid}/chargers");
    let filters = filters_query(&query);
    Ok(Json(Page::filtered(&path, &filters, page, total, chargers)))
}

/// Register a charger in a site (the caller's team must own the site). In `cms up` the gateway
/// accepts it from this answer on; gateways over Kafka within a few seconds.
#[utoipa::path(
    post,
    path = "/api/v3/sites/{site_uuid}/chargers",
    tag = "Sites > Chargers",
    params(("site_uuid" = String, Path, format = "uuid")),
    request_body = NewChargerBody,
    responses(
        (status = 201, description = "The new charger, with its generated password when none was given", body = NewChargerAnswer),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:write, or the caller's team does not own the site"),
        (status = 422, body = ValidationErrorBody, description = "A field of the body is invalid, the identity is taken (by another team: claim it through the platform operators), security profile 0 asked for by anyone but the platform operators, or the team's charger quota is reached"),
    ),
    security(("bearer" = ["chargers:write"]), ("oauth2" = ["chargers:write"]))
)]
pub async fn create_site_charger(
    State(state): State<AppState>,
    caller: Caller,
    Path(site_uuid): Path<String>,
    mut input: Input,
) -> Result<(StatusCode, Json<NewChargerAnswer>), ApiError> {
    caller.authorize()?;
    owned_site(&state, &caller, &site_uuid).await?;
    let identity = input.required_string("identity", 48.0);
    if let Some(identity) = &identity {
        if check_charger_identity(identity).is_err() {
            input.fail("identity", "The identity field format is invalid.");
        } else {
            match state
                .store
                .charger_holder_is(identity, caller.user_id())
                .await?
            {
                Some(true) => input.fail("identity", IDENTITY_TAKEN),
                // Not taken over by registering it again: claimed through the operators.
                Some(false) => input.fail("identity", IDENTITY_TAKEN_BY_ANOTHER_TEAM),
                None => {}
            }
        }
    }
    let reference = input.string("reference", Rules::optional().nullable().max(255.0));
    let credentials = read_credentials(&mut input);
    only_operators_open(&state, &caller, &mut input, &credentials).await?;
    input.finish()?;
    let (Some(identity), Some(credentials)) = (identity, credentials) else {
        return Err(ApiError::Internal(
            "validation passed without an identity".into(),
        ));
    };
    let new = NewCharger {
        identity,
        reference: reference.flatten(),
        // Kept only hashed.
        password_hash: credentials.password_hash,
        security_profile: credentials.security_profile,
        site_uuid: Some(site_uuid),
    };
    let uuid = match state.store.add_charger(&new).await {
        Ok(uuid) => uuid,
        // Registered by someone else since the check above.
        Err(StoreError::Conflict(_)) => return Err(ApiError::invalid("identity", IDENTITY_TAKEN)),
        Err(StoreError::NotFound(_)) => return Err(not_found("Site")),
        Err(e) => return Err(e.into()),
    };
    let charger = visible_charger(&state, &caller, &uuid).await?;
    let answer = NewChargerAnswer {
        data: charger.into(),
        password: credentials.generated_password,
    };
    Ok((StatusCode::CREATED, Json(answer)))
}

/// A charger's credentials as a request gives them: its `security_profile` (1 by default)
/// and `password` (generated for profiles 1 and 2 when absent). `None` when either field
/// failed its rules (the failure is on `input`).
pub(crate) fn read_credentials(input: &mut Input) -> Option<Credentials> {
    let password = input.string("password", Rules::optional().nullable().between(16.0, 40.0));
    let profile = input.integer("security_profile", Rules::optional().between(0.0, 3.0));
    // `None` from a rule: the field is absent, or invalid (and then already failed).
    let valid = |value_ok: bool, field: &str, input: &Input| value_ok || !input.has(field);
    if !(valid(password.is_some(), "password", input)
        && valid(profile.is_some(), "security_profile", input))
    {
        return None;
    }
    let security_profile = profile.flatten().unwrap_or(1);
    let given_password = password.flatten();
    match charger_credentials(security_profile as u8, given_password.as_deref()) {
        Ok(c) => Some(Credentials {
            security_profile,
            password_hash: c.password_hash,
            generated_password: c.generated_password,
            given_password,
        }),
        Err(CredentialError::PasswordNotUsed(profile)) => {
            let message =
                format!("The password field is prohibited when security profile is {profile}.");
            input.fail("password", message);
            None
        }
        Err(_) => {
            input.fail("password", "The password field format is invalid.");
            None
        }
    }
}

/// Security profile 0 (no credentials) is the platform operators' alone (their test benches):
/// anyone else asking for it fails on `security_profile`. Otherwise a customer could register
/// an identity that is not theirs yet (a charger preconfigured with its serial number) and
/// take that charger in, unauthenticated, when it first comes online.
pub(crate) async fn only_operators_open(
    state: &AppState,
    caller: &Caller,
    input: &mut Input,
    credentials: &Option<Credentials>,
) -> Result<(), ApiError> {
    let open = credentials
        .as_ref()
        .is_some_and(|c| c.security_profile == 0);
    if open && !state.store.is_platform_operator(caller.user_id()).await? {
        input.fail("security_profile", PROFILE_0_FOR_OPERATORS);
    }
    Ok(())
}

const PROFILE_0_FOR_OPERATORS: &str = "The security profile field must be between 1 and 3: \
    profile 0 (no credentials) is for the platform operators only.";

/// What [`read_credentials`] read.
pub(crate) struct Credentials {
    pub security_profile: i64,
    /// Only the hash is kept.
    pub password_hash: Option<String>,
    /// Shown once, when cms made the password.
    pub generated_password: Option<String>,
    /// The password the request gave (to send a connected charger: `PUT .../security`).
    pub given_password: Option<String>,
}

const IDENTITY_TAKEN: &str = "The identity has already been taken.";
const IDENTITY_TAKEN_BY_ANOTHER_TEAM: &str = "The identity has already been taken by another \
    team. If the charger is yours, ask the platform operators to move it to your site.";

/// The latest meter value of a connector (endpoint 8), not wrapped in `data`.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/connectors/{connector_id}/latest-metervalue",
    tag = "Chargers > Connectors",
    params(
        ("charger_uuid" = String, Path),
        ("connector_id" = String, Path, description = "The connector's number on its charger"),
        ("If-None-Match" = Option<String>, Header, description = "An ETag of an earlier answer: 304 while it still holds"),
    ),
    responses(
        (status = 200, description = "`connectorId` and the `meterValue` array, with its `ETag`", body = serde_json::Value),
        (status = 304, description = "Not modified: `If-None-Match` named the current ETag"),
        (status = 403, body = ErrorBody, description = "The token lacks meter-values:read, or the caller's team may not read the charger's sensitive data"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees, or not a connector number it has reported"),
    ),
    security(("bearer" = ["meter-values:read"]), ("oauth2" = ["meter-values:read"]))
)]
pub async fn latest_meter_value(
    State(state): State<AppState>,
    caller: Caller,
    Path((charger_uuid, connector_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    caller.authorize()?;
    // Meter readings are sensitive data.
    let charger = charger_access_with_sensitive_data(&state, &caller, &charger_uuid).await?;
    let connector_id: u32 = path_number(&connector_id, "Connector")?;
    let meter_value = match state.cache.get(&charger.identity, connector_id) {
        Some(reading) => reading.meter_value,
        None if state
            .store
            .connector_known(charger.id, connector_id.into())
            .await? =>
        {
            bytes::Bytes::from_static(b"[]")
        }
        None => return Err(not_found("Connector")),
    };
    // The cached array is already JSON: frame it rather than parse and re-serialise it.
    let mut body = Vec::with_capacity(meter_value.len() + 40);
    body.extend_from_slice(format!("{{\"connectorId\":{connector_id},\"meterValue\":").as_bytes());
    body.extend_from_slice(&meter_value);
    body.push(b'}');
    Ok(conditional::json_read(&headers, body))
}

/// The filters of the chargers lists; a site's list takes all but the site.
const FILTERS: &[&str] = &["search", "status", "ocpp_version", "site_uuid"];

/// The `page` parameter, the last given.
fn page_of(query: &[(String, String)]) -> Option<&str> {
    query
        .iter()
        .rev()
        .find(|(k, _)| k == "page")
        .map(|(_, v)| v.as_str())
}

/// One page of the chargers the caller sees (in one site, when given) that pass `filter`,
/// and how many in all: filtered in memory, by the fleet's state (crate::ingest::fleet).
async fn charger_page(
    state: &AppState,
    caller: &Caller,
    site_id: Option<i64>,
    filter: &FleetFilter,
    page: i64,
) -> Result<(Vec<Charger>, i64), ApiError> {
    // Which chargers, from memory (crate::http::access); their rows as held, checked against the
    // store in one round trip (crate::http::charger_rows).
    let visible = state
        .access
        .visible_chargers(&state.store, caller.user_id())
        .await?;
    let in_site = |c: &&VisibleCharger| {
        site_id.is_none_or(|site| c.site_id == site)
            && (filter.is_empty() || state.fleet.with(c.id, |held| filter.admits(c, held)))
    };
    // One pass: counted and paged together, each charger looked at once.
    let offset = usize::try_from(page_offset(page)).unwrap_or(usize::MAX);
    let mut total = 0;
    let mut page: Vec<VisibleCharger> = Vec::with_capacity(PER_PAGE as usize);
    for charger in visible.chargers.iter().filter(in_site) {
        if total >= offset && page.len() < PER_PAGE as usize {
            page.push(*charger);
        }
        total += 1;
    }
    let rows = state.charger_rows.page(&state.store, &page).await?;
    // The page's firmware and log states in one round trip.
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let mut transfers = state.store.transfers_of(&ids).await?;
    let chargers = rows.into_iter().map(|row| {
        let of = transfers.remove(&row.id).unwrap_or_default();
        Charger::from(row).with_transfers(of)
    });
    Ok((chargers.collect(), total as i64))
}
