//! The credentials module (2.2.1 "credentials"): a provider's eMSP registers with cms (POST,
//! with the token A the operator gave it), rotates (PUT), reads cms's credentials (GET) and
//! unregisters (DELETE). cms answers with the token C the party calls it with from then on;
//! only its hash is kept, so C is never shown again (GET answers the token the caller used).

use super::auth::{AnyParty, BaseUrl, Registered};
use super::client::PartyClient;
use super::reply::{OcpiError, body, done, ok};
use crate::http::AppState;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use axum::routing::get;
use cms_ocpi::credentials::{BusinessDetails, Credentials, CredentialsRole};
use cms_ocpi::token_header::{new_token, token_of};
use cms_store::ocpi::parties::{Party, PartyConnection};
use cms_store::ocpi::token_hash;

pub fn routes() -> Router<AppState> {
    Router::new().route(
        "/2.2.1/credentials",
        get(show).post(register).put(rotate).delete(unregister),
    )
}

/// cms's credentials for `team_id`, with `token` as the one to call it with.
pub(crate) async fn cms_credentials(
    state: &AppState,
    team_id: i64,
    base: &str,
    token: String,
) -> Result<Credentials, OcpiError> {
    let cpo = (state.store.ocpi_cpo(team_id).await?).ok_or_else(|| {
        OcpiError::server(
            "The operator has not set its OCPI identity (PUT /api/v3/teams/{uuid}/ocpi).",
        )
    })?;
    Ok(Credentials {
        token,
        url: format!("{base}/ocpi/versions"),
        roles: vec![CredentialsRole {
            role: "CPO".into(),
            business_details: BusinessDetails {
                name: cpo.name,
                website: cpo.website,
                logo: None,
            },
            party_id: cpo.party_id,
            country_code: cpo.country_code,
        }],
    })
}

/// A new credentials token, from the OS's randomness.
pub(crate) fn fresh_token() -> String {
    let mut random = [0u8; 43];
    getrandom::fill(&mut random).expect("the OS gives randomness");
    new_token(&random)
}

/// `GET`: cms's credentials, as the registered party calls it.
async fn show(
    State(state): State<AppState>,
    Registered(party): Registered,
    BaseUrl(base): BaseUrl,
    headers: HeaderMap,
) -> Result<Response, OcpiError> {
    let token = caller_token(&headers)?;
    Ok(ok(
        cms_credentials(&state, party.team_id, &base, token).await?
    ))
}

/// `POST`: a party with token A registers.
async fn register(
    State(state): State<AppState>,
    AnyParty(party): AnyParty,
    BaseUrl(base): BaseUrl,
    bytes: Bytes,
) -> Result<Response, OcpiError> {
    if party.is_registered() {
        return Err(OcpiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            cms_ocpi::status::CLIENT_ERROR,
            "Already registered: PUT to update, DELETE to unregister.",
        ));
    }
    exchange(&state, &party, &base, &bytes).await
}

/// `PUT`: a registered party gives new credentials (a new token B, a new URL) and gets a new
/// token C.
async fn rotate(
    State(state): State<AppState>,
    Registered(party): Registered,
    BaseUrl(base): BaseUrl,
    bytes: Bytes,
) -> Result<Response, OcpiError> {
    exchange(&state, &party, &base, &bytes).await
}

/// `DELETE`: the party unregisters; its tokens open nothing from now on.
async fn unregister(
    State(state): State<AppState>,
    Registered(party): Registered,
) -> Result<Response, OcpiError> {
    state.store.ocpi_delete_party(party.provider_id).await?;
    tracing::info!(provider = %party.provider_uuid, "an OCPI party unregistered");
    Ok(done())
}

/// Reads the party's credentials, reaches its 2.2.1 endpoints with its token B, and makes a
/// token C for it: the party is registered with them.
async fn exchange(
    state: &AppState,
    party: &Party,
    base: &str,
    bytes: &[u8],
) -> Result<Response, OcpiError> {
    let theirs: Credentials = body(bytes)?;
    if let Some(problem) = theirs.problem() {
        return Err(OcpiError::invalid(problem));
    }
    if !theirs.names(&party.country_code, &party.party_id) {
        return Err(OcpiError::invalid(format!(
            "The credentials' roles do not name this provider's party ({} {}).",
            party.country_code, party.party_id
        )));
    }
    let client = PartyClient::new(state.ocpi.allow_private);
    let version = (client.version_221(&theirs.url, &theirs.token).await)
        .map_err(|e| OcpiError::new(StatusCode::BAD_REQUEST, e.code, e.message))?;
    let token_c = fresh_token();
    let ours = cms_credentials(state, party.team_id, base, token_c.clone()).await?;
    let connection = PartyConnection {
        incoming_token_hash: token_hash(&token_c),
        outgoing_token: Some(theirs.token.clone()),
        status: "registered".into(),
        versions_url: Some(theirs.url.clone()),
        endpoints: Some(serde_json::to_string(&version.endpoints).expect("endpoints serialise")),
        roles: Some(serde_json::to_string(&theirs.roles).expect("roles serialise")),
    };
    state
        .store
        .ocpi_save_party(party.provider_id, &connection)
        .await?;
    tracing::info!(provider = %party.provider_uuid, "an OCPI party registered");
    Ok(ok(ours))
}

fn caller_token(headers: &HeaderMap) -> Result<String, OcpiError> {
    (headers.get(axum::http::header::AUTHORIZATION))
        .and_then(|value| value.to_str().ok())
        .and_then(token_of)
        .ok_or_else(OcpiError::unauthorized)
}

/// What [`Method`] a handshake uses, for the callers in the REST API.
pub(crate) const REGISTER: Method = Method::POST;
