//! Who calls: the party whose credentials token the `Authorization: Token ...` header carries
//! (base64 or as is, cms_ocpi::token_header). A token no party has is 401; a party that has not
//! registered yet (token A) reaches versions and credentials only ([`Registered`]).

use super::reply::OcpiError;
use crate::http::AppState;
use axum::extract::FromRequestParts;
use axum::http::header::{AUTHORIZATION, HOST};
use axum::http::request::Parts;
use cms_store::ocpi::parties::Party;

/// Any party with a valid token, registered or not (versions, credentials).
#[derive(Debug, Clone)]
pub struct AnyParty(pub Party);

/// A registered party (every module but versions and credentials).
#[derive(Debug, Clone)]
pub struct Registered(pub Party);

impl FromRequestParts<AppState> for AnyParty {
    type Rejection = OcpiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, OcpiError> {
        let token = (parts.headers.get(AUTHORIZATION))
            .and_then(|value| value.to_str().ok())
            .and_then(cms_ocpi::token_header::token_of)
            .ok_or_else(OcpiError::unauthorized)?;
        let party = state.store.ocpi_party_by_token(&token).await?;
        party.map(AnyParty).ok_or_else(OcpiError::unauthorized)
    }
}

impl FromRequestParts<AppState> for Registered {
    type Rejection = OcpiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, OcpiError> {
        let AnyParty(party) = AnyParty::from_request_parts(parts, state).await?;
        if !party.is_registered() {
            return Err(OcpiError::not_registered());
        }
        Ok(Registered(party))
    }
}

/// Where cms's OCPI endpoints are reached: `--ocpi-public-url`, or this request's scheme and
/// `Host` (the listener's TLS decides the scheme). No trailing slash.
pub struct BaseUrl(pub String);

impl FromRequestParts<AppState> for BaseUrl {
    type Rejection = OcpiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, OcpiError> {
        base_url(state, &parts.headers)
            .map(BaseUrl)
            .ok_or_else(|| OcpiError::invalid("The request has no Host header."))
    }
}

/// `--ocpi-public-url`, or the scheme and `Host` of a request with `headers`.
pub fn base_url(state: &AppState, headers: &axum::http::HeaderMap) -> Option<String> {
    if let Some(url) = &state.ocpi.public_url {
        return Some(url.clone());
    }
    let host = headers.get(HOST)?.to_str().ok()?;
    let scheme = if state.tls { "https" } else { "http" };
    Some(format!("{scheme}://{host}"))
}
