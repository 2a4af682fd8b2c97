//! The tokens module in the RECEIVER role (docs/ocpi.md, "Tokens"): an eMSP pushes its
//! drivers' tokens (PUT, PATCH) and reads them back (GET) at
//! `/ocpi/2.2.1/tokens/{country_code}/{party_id}/{token_uid}[?type=...]`. Each token is kept,
//! and is its provider's id tag, so gateways answer its driver from memory or, as its whitelist
//! says, after asking the eMSP.
//!
//! The path names the calling party itself; another party's path is 404 (its tokens are never
//! read or written). A token the party never pushed is 404 with 2004.

use super::auth::Registered;
use super::reply::{self, OcpiError};
use crate::http::AppState;
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use cms_ocpi::status;
use cms_ocpi::tokens::{Token, TokenType};
use cms_store::StoreError;
use cms_store::ocpi::parties::Party;
use cms_store::ocpi::tokens::TokenWrite;
use serde_json::Value;
use std::collections::HashMap;

pub fn routes() -> Router<AppState> {
    Router::new().route(
        "/2.2.1/tokens/{country_code}/{party_id}/{token_uid}",
        get(read).put(put).patch(patch),
    )
}

type TokenPath = Result<Path<(String, String, String)>, PathRejection>;
type TypeQuery = Result<Query<HashMap<String, String>>, QueryRejection>;

/// The token a request names: the party's own, by uid and type.
struct Named {
    uid: String,
    token_type: TokenType,
}

/// The token the path and `?type=` name, when the path is the calling party's own.
fn named(party: &Party, path: TokenPath, query: TypeQuery) -> Result<Named, OcpiError> {
    let Path((country_code, party_id, uid)) =
        path.map_err(|e| OcpiError::invalid(format!("Invalid path: {e}")))?;
    let Query(query) = query.map_err(|e| OcpiError::invalid(format!("Invalid query: {e}")))?;
    let own = country_code.eq_ignore_ascii_case(&party.country_code)
        && party_id.eq_ignore_ascii_case(&party.party_id);
    if !own {
        return Err(OcpiError::not_found(
            "No such token: the path names another party than the caller.",
        ));
    }
    if uid.is_empty() || uid.len() > 36 {
        return Err(OcpiError::invalid("token_uid: 1 to 36 characters."));
    }
    let token_type = match query.get("type") {
        None => TokenType::Rfid,
        Some(text) => TokenType::parse(text).ok_or_else(|| {
            OcpiError::invalid("type: one of AD_HOC_USER, APP_USER, OTHER and RFID.")
        })?,
    };
    Ok(Named { uid, token_type })
}

/// GET: the token as cms holds it.
async fn read(
    Registered(party): Registered,
    State(state): State<AppState>,
    path: TokenPath,
    query: TypeQuery,
) -> Result<Response, OcpiError> {
    let named = named(&party, path, query)?;
    let token = stored(&state, &party, &named).await?;
    Ok(reply::ok(token))
}

/// PUT: the token created, or replaced whole.
async fn put(
    Registered(party): Registered,
    State(state): State<AppState>,
    path: TokenPath,
    query: TypeQuery,
    body: Bytes,
) -> Result<Response, OcpiError> {
    let named = named(&party, path, query)?;
    let value: Value = reply::body(&body)?;
    let token = Token::from_json(value).map_err(invalid_token)?;
    write(&state, &party, &named, &token).await
}

/// PATCH: the fields given replace the token's (`last_updated` among them).
async fn patch(
    Registered(party): Registered,
    State(state): State<AppState>,
    path: TokenPath,
    query: TypeQuery,
    body: Bytes,
) -> Result<Response, OcpiError> {
    let named = named(&party, path, query)?;
    let fields: Value = reply::body(&body)?;
    let token = stored(&state, &party, &named).await?;
    let token = token.patched(&fields).map_err(invalid_token)?;
    write(&state, &party, &named, &token).await
}

/// The party's token the request names; 404 with 2004 when it has none.
async fn stored(state: &AppState, party: &Party, named: &Named) -> Result<Token, OcpiError> {
    let token_type = named.token_type.as_str();
    let stored = (state.store)
        .ocpi_token(party.provider_id, &named.uid, token_type)
        .await?
        .ok_or_else(OcpiError::unknown_token)?;
    let body = serde_json::from_str(&stored.body).map_err(|e| {
        tracing::error!(error = %e, "a stored OCPI token cannot be read");
        OcpiError::server("A stored token cannot be read.")
    })?;
    Token::from_json(body).map_err(|e| {
        tracing::error!(error = %e, "a stored OCPI token is not valid");
        OcpiError::server("A stored token cannot be read.")
    })
}

/// Writes `token` as the one the request names: it must be that token, of the calling party.
async fn write(
    state: &AppState,
    party: &Party,
    named: &Named,
    token: &Token,
) -> Result<Response, OcpiError> {
    let owner = token.country_code.eq_ignore_ascii_case(&party.country_code)
        && token.party_id.eq_ignore_ascii_case(&party.party_id);
    if !owner {
        return Err(OcpiError::invalid(
            "country_code and party_id: the token's must be the caller's, as in the path.",
        ));
    }
    if !token.uid.eq_ignore_ascii_case(&named.uid) {
        return Err(OcpiError::invalid(
            "uid: must be the token_uid of the path.",
        ));
    }
    if token.token_type != named.token_type {
        return Err(OcpiError::invalid(
            "type: must be the type the request names (?type=, RFID by default).",
        ));
    }
    let body = serde_json::to_string(token).map_err(|e| OcpiError::server(e.to_string()))?;
    let write = TokenWrite {
        uid: token.uid.clone(),
        token_type: token.token_type.as_str().into(),
        body,
        whitelist: token.whitelist.as_str().into(),
        valid: token.valid,
        last_updated: cms_ocpi::time::format(token.last_updated),
        group_id: token.group_id.clone(),
    };
    match state.store.ocpi_put_token(party.provider_id, &write).await {
        Ok(()) => Ok(reply::done()),
        // The team that has the provider holds as many id tags as it may.
        Err(StoreError::QuotaReached(reached)) => Err(OcpiError::new(
            StatusCode::BAD_REQUEST,
            status::CLIENT_ERROR,
            reached.to_string(),
        )),
        Err(e) => Err(e.into()),
    }
}

fn invalid_token(why: String) -> OcpiError {
    OcpiError::invalid(format!("Invalid token: {why}"))
}
