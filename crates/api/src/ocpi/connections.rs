//! Roaming with providers over OCPI 2.2.1 (docs/ocpi.md): the team's identity as a CPO, and
//! each provider's connection: token A issued for its eMSP to register with cms, or cms
//! registering with the eMSP; the connection's state; unregistering. A member of the team, with
//! the teams scopes, as for the providers themselves.

use super::auth::base_url;
use super::client::PartyClient;
use super::credentials::{REGISTER, cms_credentials, fresh_token};
use crate::http::ApiError;
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::input::{Input, Rules};
use crate::http::providers::team_provider;
use crate::http::schema::{Data, EmptyBody, ErrorBody, ValidationErrorBody};
use crate::http::teams::member_team;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use cms_ocpi::credentials::Credentials;
use cms_store::ocpi::cpo::Cpo;
use cms_store::ocpi::parties::{Party, PartyConnection};
use cms_store::ocpi::token_hash;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(show_identity, set_identity))
        .routes(routes!(show_connection, unregister))
        .routes(routes!(issue_token))
        .routes(routes!(register))
}

/// The team as an OCPI CPO.
#[derive(Debug, Serialize, ToSchema)]
pub struct CpoBody {
    #[schema(example = "NL")]
    pub country_code: String,
    #[schema(example = "CMS")]
    pub party_id: String,
    pub name: String,
    #[schema(required = true)]
    pub website: Option<String>,
    pub updated_at: String,
}

impl From<Cpo> for CpoBody {
    fn from(c: Cpo) -> Self {
        CpoBody {
            country_code: c.country_code,
            party_id: c.party_id,
            name: c.name,
            website: c.website,
            updated_at: c.updated_at,
        }
    }
}

/// The body of `PUT .../ocpi`.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct CpoRequest {
    #[schema(pattern = "^[A-Z]{2}$")]
    country_code: String,
    #[schema(pattern = "^[A-Z0-9]{3}$")]
    party_id: String,
    #[schema(max_length = 100)]
    name: String,
    #[schema(max_length = 255)]
    website: Option<String>,
}

/// The team's identity as an OCPI CPO.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/ocpi",
    tag = "Roaming",
    params(("team_uuid" = String, Path, format = "uuid")),
    responses(
        (status = 200, body = Data<CpoBody>),
        (status = 404, body = ErrorBody, description = "Not a team of the caller, or the team has not set one"),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn show_identity(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_uuid): Path<String>,
) -> Result<Json<Data<CpoBody>>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let cpo = state.store.ocpi_cpo(team.id).await?;
    let cpo = cpo.ok_or_else(|| ApiError::NotFound("The team has no OCPI identity.".into()))?;
    Ok(Json(Data::new(cpo.into())))
}

/// Set the team's identity as an OCPI CPO: in every EVSE id it publishes and in the credentials
/// its providers get.
#[utoipa::path(
    put,
    path = "/api/v3/teams/{team_uuid}/ocpi",
    tag = "Roaming",
    params(("team_uuid" = String, Path, format = "uuid")),
    request_body = CpoRequest,
    responses(
        (status = 200, body = Data<CpoBody>),
        (status = 422, body = ValidationErrorBody, description = "A field of the body is invalid"),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn set_identity(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_uuid): Path<String>,
    mut input: Input,
) -> Result<Json<Data<CpoBody>>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let country_code = code(&mut input, "country_code", 2, false);
    let party_id = code(&mut input, "party_id", 3, true);
    let name = input.required_string("name", 100.0);
    let website = input.string("website", Rules::optional().nullable().max(255.0));
    if let Some(Some(url)) = &website
        && !(url.starts_with("https://") || url.starts_with("http://"))
    {
        input.fail("website", "The website must be an http(s) URL.");
    }
    input.finish()?;
    let (Some(country_code), Some(party_id), Some(name)) = (country_code, party_id, name) else {
        return Err(ApiError::Internal("a valid identity without fields".into()));
    };
    let website = website.flatten();
    let cpo = (state.store)
        .ocpi_save_cpo(team.id, &country_code, &party_id, &name, website.as_deref())
        .await?;
    Ok(Json(Data::new(cpo.into())))
}

/// A code of `length` capital letters (and digits when `digits`), as the provider's are.
fn code(input: &mut Input, field: &str, length: usize, digits: bool) -> Option<String> {
    let text = input.required_string(field, length as f64)?;
    let ok = text.len() == length
        && (text.bytes()).all(|b| b.is_ascii_uppercase() || (digits && b.is_ascii_digit()));
    if !ok {
        let what = if digits {
            "capital letters or digits"
        } else {
            "capital letters"
        };
        let name = field.replace('_', " ");
        input.fail(field, format!("The {name} must be {length} {what}."));
        return None;
    }
    Some(text)
}

/// A provider's OCPI connection, without its tokens.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConnectionBody {
    /// `pending` (token A issued, or cms registering) or `registered`.
    #[schema(example = "registered")]
    pub status: String,
    /// The eMSP's versions URL, once known.
    #[schema(required = true)]
    pub versions_url: Option<String>,
    /// The eMSP's roles from its credentials.
    #[schema(required = true, value_type = Option<Vec<Object>>)]
    pub roles: Option<serde_json::Value>,
    /// The eMSP's 2.2.1 modules: `identifier`, `role`, `url`.
    #[schema(required = true, value_type = Option<Vec<Object>>)]
    pub endpoints: Option<serde_json::Value>,
    pub created_at: String,
    pub updated_at: String,
}

async fn connection_body(state: &AppState, party: Party) -> Result<ConnectionBody, ApiError> {
    let (created_at, updated_at) = (state.store.ocpi_party_times(party.provider_id).await?)
        .ok_or_else(|| ApiError::NotFound("The provider has no OCPI connection.".into()))?;
    let json = |text: Option<String>| text.and_then(|t| serde_json::from_str(&t).ok());
    Ok(ConnectionBody {
        status: party.status,
        versions_url: party.versions_url,
        roles: json(party.roles),
        endpoints: json(party.endpoints),
        created_at,
        updated_at,
    })
}

/// The provider's OCPI connection.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/providers/{provider_uuid}/ocpi",
    tag = "Roaming",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("provider_uuid" = String, Path, format = "uuid"),
    ),
    responses(
        (status = 200, body = Data<ConnectionBody>),
        (status = 404, body = ErrorBody, description = "Not a team of the caller, or not its provider, or the provider has no connection"),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn show_connection(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, provider_uuid)): Path<(String, String)>,
) -> Result<Json<Data<ConnectionBody>>, ApiError> {
    caller.authorize()?;
    let (_, provider) = team_provider(&state, &caller, &team_uuid, &provider_uuid).await?;
    let party = (state.store.ocpi_party_of_provider(provider.id).await?)
        .ok_or_else(|| ApiError::NotFound("The provider has no OCPI connection.".into()))?;
    Ok(Json(Data::new(connection_body(&state, party).await?)))
}

/// Unregister: the eMSP is told (`DELETE` on its credentials, when it is registered and
/// reachable) and its tokens open nothing from now on. Answers `{}`.
#[utoipa::path(
    delete,
    path = "/api/v3/teams/{team_uuid}/providers/{provider_uuid}/ocpi",
    tag = "Roaming",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("provider_uuid" = String, Path, format = "uuid"),
    ),
    responses(
        (status = 200, description = "Unregistered", body = EmptyBody),
        (status = 404, body = ErrorBody, description = "Not a team of the caller, or not its provider, or the provider has no connection"),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn unregister(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, provider_uuid)): Path<(String, String)>,
) -> Result<Json<EmptyBody>, ApiError> {
    caller.authorize()?;
    let (_, provider) = team_provider(&state, &caller, &team_uuid, &provider_uuid).await?;
    let party = (state.store.ocpi_party_of_provider(provider.id).await?)
        .ok_or_else(|| ApiError::NotFound("The provider has no OCPI connection.".into()))?;
    if let (true, Some(url), Some(token)) = (
        party.is_registered(),
        party
            .endpoint("credentials", "RECEIVER")
            .or(party.endpoint("credentials", "SENDER")),
        party.outgoing_token.as_deref(),
    ) {
        let client = PartyClient::new(state.ocpi.allow_private);
        if let Err(e) = client.delete_credentials(&url, token).await {
            // The connection ends on cms's side all the same: its tokens no longer open cms.
            tracing::warn!(provider = %provider.uuid, error = %e.message, "the eMSP was not told of the unregistration");
        }
    }
    state.store.ocpi_delete_party(provider.id).await?;
    Ok(Json(EmptyBody {}))
}

/// A token A, shown once.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenABody {
    /// The token the eMSP registers with (OCPI's CREDENTIALS_TOKEN_A); cms keeps only its hash.
    pub token: String,
    /// Where the eMSP starts: cms's OCPI versions.
    pub versions_url: String,
}

/// Issue a token A for the provider's eMSP to register with cms: give it the token and the
/// versions URL; it calls `POST /ocpi/2.2.1/credentials`. A token issued before and not yet
/// used stops working.
#[utoipa::path(
    post,
    path = "/api/v3/teams/{team_uuid}/providers/{provider_uuid}/ocpi/token",
    tag = "Roaming",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("provider_uuid" = String, Path, format = "uuid"),
    ),
    responses(
        (status = 201, body = Data<TokenABody>),
        (status = 409, body = ErrorBody, description = "The provider is registered (unregister first), or the team has no OCPI identity"),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn issue_token(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, provider_uuid)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<(StatusCode, Json<Data<TokenABody>>), ApiError> {
    caller.authorize()?;
    let (team_id, provider) = team_provider(&state, &caller, &team_uuid, &provider_uuid).await?;
    ready_to_connect(&state, team_id, provider.id).await?;
    let base = base_url(&state, &headers).ok_or_else(no_host)?;
    let token = fresh_token();
    let connection = PartyConnection {
        incoming_token_hash: token_hash(&token),
        outgoing_token: None,
        status: "pending".into(),
        versions_url: None,
        endpoints: None,
        roles: None,
    };
    state
        .store
        .ocpi_save_party(provider.id, &connection)
        .await?;
    let body = TokenABody {
        token,
        versions_url: format!("{base}/ocpi/versions"),
    };
    Ok((StatusCode::CREATED, Json(Data::new(body))))
}

/// The body of `POST .../ocpi/register`.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct RegisterRequest {
    /// The eMSP's OCPI versions URL.
    #[schema(max_length = 255)]
    versions_url: String,
    /// The token A the eMSP gave for cms to register with.
    #[schema(max_length = 64)]
    token: String,
}

/// Register cms with the provider's eMSP: cms reads its versions and 2.2.1 endpoints with the
/// token A it gave, sends cms's credentials (a new token for the eMSP to call cms with), and
/// keeps the token the eMSP answers with. Answers the connection, registered.
#[utoipa::path(
    post,
    path = "/api/v3/teams/{team_uuid}/providers/{provider_uuid}/ocpi/register",
    tag = "Roaming",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("provider_uuid" = String, Path, format = "uuid"),
    ),
    request_body = RegisterRequest,
    responses(
        (status = 200, body = Data<ConnectionBody>),
        (status = 409, body = ErrorBody, description = "The provider is registered (unregister first), or the team has no OCPI identity"),
        (status = 422, body = ValidationErrorBody, description = "A field of the body is invalid, or the eMSP could not be registered with (`versions_url` says why)"),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn register(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, provider_uuid)): Path<(String, String)>,
    headers: HeaderMap,
    mut input: Input,
) -> Result<Json<Data<ConnectionBody>>, ApiError> {
    caller.authorize()?;
    let (team_id, provider) = team_provider(&state, &caller, &team_uuid, &provider_uuid).await?;
    let versions_url = input.required_string("versions_url", 255.0);
    if let Some(url) = &versions_url
        && !(url.starts_with("https://") || url.starts_with("http://"))
    {
        input.fail("versions_url", "The versions url must be an http(s) URL.");
    }
    let token = input.required_string("token", 64.0);
    input.finish()?;
    let (Some(versions_url), Some(token_a)) = (versions_url, token) else {
        return Err(ApiError::Internal(
            "a valid registration without fields".into(),
        ));
    };
    ready_to_connect(&state, team_id, provider.id).await?;
    let base = base_url(&state, &headers).ok_or_else(no_host)?;
    let failed = |message: String| ApiError::invalid("versions_url", message);
    let client = PartyClient::new(state.ocpi.allow_private);
    let version = (client.version_221(&versions_url, &token_a).await)
        .map_err(|e| failed(format!("The eMSP could not be used: {}", e.message)))?;
    let credentials_url = (version.module("credentials"))
        .ok_or_else(|| failed("The eMSP lists no credentials module for 2.2.1.".into()))?
        .to_string();
    // Token B: the eMSP calls cms with it, from its first look at cms's versions on.
    let token_b = fresh_token();
    let endpoints = serde_json::to_string(&version.endpoints).expect("endpoints serialise");
    let mut connection = PartyConnection {
        incoming_token_hash: token_hash(&token_b),
        outgoing_token: Some(token_a.clone()),
        status: "pending".into(),
        versions_url: Some(versions_url.clone()),
        endpoints: Some(endpoints),
        roles: None,
    };
    state
        .store
        .ocpi_save_party(provider.id, &connection)
        .await?;
    let ours = cms_credentials_for_rest(&state, team_id, &base, token_b).await?;
    let theirs = client
        .send_credentials(REGISTER, &credentials_url, &token_a, &ours)
        .await;
    let theirs = match theirs {
        Ok(theirs) => theirs,
        Err(e) => {
            state.store.ocpi_delete_party(provider.id).await?;
            return Err(failed(format!(
                "The eMSP refused cms's credentials: {}",
                e.message
            )));
        }
    };
    if let Some(problem) = theirs.problem() {
        state.store.ocpi_delete_party(provider.id).await?;
        return Err(failed(format!(
            "The eMSP answered invalid credentials: {problem}"
        )));
    }
    connection.outgoing_token = Some(theirs.token.clone());
    connection.status = "registered".into();
    connection.roles = Some(serde_json::to_string(&theirs.roles).expect("roles serialise"));
    if theirs.url != versions_url {
        connection.versions_url = Some(theirs.url.clone());
    }
    state
        .store
        .ocpi_save_party(provider.id, &connection)
        .await?;
    let party = (state.store.ocpi_party_of_provider(provider.id).await?)
        .ok_or_else(|| ApiError::Internal("a registered party was not stored".into()))?;
    Ok(Json(Data::new(connection_body(&state, party).await?)))
}

async fn cms_credentials_for_rest(
    state: &AppState,
    team_id: i64,
    base: &str,
    token: String,
) -> Result<Credentials, ApiError> {
    cms_credentials(state, team_id, base, token)
        .await
        .map_err(|e| ApiError::Conflict(e.message))
}

/// A provider may be connected when its team has an OCPI identity and it is not registered.
async fn ready_to_connect(
    state: &AppState,
    team_id: i64,
    provider_id: i64,
) -> Result<(), ApiError> {
    if state.store.ocpi_cpo(team_id).await?.is_none() {
        return Err(ApiError::Conflict(
            "Set the team's OCPI identity first (PUT /api/v3/teams/{team_uuid}/ocpi).".into(),
        ));
    }
    let party = state.store.ocpi_party_of_provider(provider_id).await?;
    if party.is_some_and(|p| p.is_registered()) {
        return Err(ApiError::Conflict(
            "The provider is registered: unregister it first (DELETE .../ocpi).".into(),
        ));
    }
    Ok(())
}

fn no_host() -> ApiError {
    ApiError::BadRequest("The request has no Host header; set --ocpi-public-url.".into())
}
