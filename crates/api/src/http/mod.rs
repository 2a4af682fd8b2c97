//! The REST API and the operational endpoints of the HTTP listener.

pub(crate) mod access;
pub(crate) mod actions;
pub mod auth;
pub(crate) mod charger_rows;
pub(crate) mod chargers;
mod charging_limits;
mod conditional;
mod diagnostics;
mod error;
pub mod error_responses;
mod fleet;
mod fleet_stream;
pub mod fuzzing;
pub mod id_tag_input;
mod id_tags;
pub mod input;
mod local_list_state;
mod lookup;
mod meters;
mod oauth;
mod oauth_grants;
mod openapi;
mod ops;
mod pagination;
pub(crate) mod providers;
mod reservations;
mod roaming_pushes;
pub mod schema;
mod secret_settings;
mod security_events;
mod settings;
mod settings_bodies;
mod settings_v201;
mod site_roaming;
mod site_teams;
mod sites;
mod smart_charging;
mod state;
mod station_certificates;
mod stream_slots;
mod streams;
mod tariffs;
mod team_owned;
mod team_transactions;
pub(crate) mod teams;
mod tokens;
mod transaction_meter_values;
pub(crate) mod transactions;
mod webhook_deliveries;
mod webhooks;

pub use actions::ActionBody;
pub use error::ApiError;
pub use ops::{MetricsOnRest, api_ops_router};
pub use state::{AppState, Shared};
pub use stream_slots::{
    DEFAULT_STREAM_MAX_LIFE, DEFAULT_STREAMS_PER_USER, StreamLimits, StreamSlots,
};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use cms_http_server::request_metrics;
use std::sync::Arc;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

/// The REST API with its OpenAPI document: each group's routes come with their annotations
/// (the tests' document; the served one has the roaming connections too).
#[cfg(test)]
pub fn api_routes() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    api_routes_with(OpenApiRouter::new())
}

/// [`api_routes`] and `more` (the roaming connections' routes, crate::ocpi::connections).
pub fn api_routes_with(
    more: OpenApiRouter<AppState>,
) -> (Router<AppState>, utoipa::openapi::OpenApi) {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(chargers::routes())
        .merge(actions::routes())
        .merge(reservations::routes())
        .merge(diagnostics::routes())
        .merge(settings::routes())
        .merge(meters::routes())
        .merge(sites::routes())
        .merge(site_teams::routes())
        .merge(smart_charging::routes())
        .merge(teams::routes())
        .merge(id_tags::routes())
        .merge(tariffs::routes())
        .merge(providers::routes())
        .merge(roaming_pushes::routes())
        .merge(site_roaming::routes())
        .merge(streams::routes())
        .merge(fleet::routes())
        .merge(fleet_stream::routes())
        .merge(tokens::routes())
        .merge(transactions::routes())
        .merge(transaction_meter_values::routes())
        .merge(local_list_state::routes())
        .merge(charging_limits::routes())
        .merge(team_transactions::routes())
        .merge(oauth::routes())
        .merge(oauth_grants::routes())
        .merge(webhooks::routes())
        .merge(webhook_deliveries::routes())
        .merge(security_events::routes())
        .merge(station_certificates::routes())
        .merge(more)
        .split_for_parts()
}

/// The REST API with `more_api` in it and its document, and `more` beside it (OCPI's
/// endpoints, which answer in their own envelope: crate::ocpi).
pub fn router(
    state: AppState,
    more_api: OpenApiRouter<AppState>,
    more: Router<AppState>,
) -> Router {
    let (api, document) = api_routes_with(more_api);
    let mut document = serde_json::to_value(&document).expect("the OpenAPI document serialises");
    actions::document_request_schemas(&mut document);
    openapi::standard_responses(&mut document);
    // Each route's scope, as its documentation declares it (Caller::authorize).
    let api = api.layer(axum::Extension(Arc::new(openapi::DeclaredScopes::of(
        &mut document,
    ))));
    let document =
        Arc::new(serde_json::to_string_pretty(&document).expect("the OpenAPI document serialises"));
    let api = api
        .route(
            "/api/openapi.json",
            get(move || {
                let document = document.clone();
                async move { ([(CONTENT_TYPE, "application/json")], document.to_string()) }
            }),
        )
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .layer(DefaultBodyLimit::max(input::BODY_LIMIT))
        .layer(axum::middleware::from_fn(refuse_nul));
    let access = state.clone();
    Router::new()
        .merge(api)
        .merge(more)
        .layer(axum::middleware::from_fn_with_state(
            access,
            access_in_force,
        ))
        .merge(ops::on_rest_listener(state.ops_listener))
        // The operator console, from the same origin as the API it reads.
        .merge(cms_console::routes())
        .fallback(|| async { ApiError::NotFound("Not Found.".into()) })
        // Last, over every route and the fallback: it reads the route each request matched.
        .layer(axum::middleware::from_fn(request_metrics::record))
        .with_state(state)
}

/// Marks the answer of a request that wrote nothing access or a charger's row depends on
/// (an action sent to a charger): [`access_in_force`] has nothing to catch up on after it.
#[derive(Debug, Clone, Copy)]
pub struct ChangesNoAccess;

/// A request that changed something (any method but GET, HEAD and OPTIONS, answered 2xx)
/// is answered once this replica has read the access change log again, and forgot when it
/// last checked its chargers' rows: a token revoked or an access removed through it is refused
/// by it from its answer on, not a poll later, and a charger changed through it is listed
/// changed. In `cms up`, also once its gateway has read the registry and id tag change logs:
/// a charger registered, or a password changed, is in force at the handshake from the answer
/// on.
async fn access_in_force(
    State(state): State<AppState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let reading = matches!(
        *request.method(),
        axum::http::Method::GET | axum::http::Method::HEAD | axum::http::Method::OPTIONS
    );
    let response = next.run(request).await;
    let changed_access = response.extensions().get::<ChangesNoAccess>().is_none();
    if !reading && changed_access && response.status().is_success() {
        state.charger_rows.forget_checks();
        // A charger registered, renamed or moved: the filters see it at the next read.
        state.fleet.resync_soon();
        let access = async {
            if let Err(e) = state.access.catch_up(&state.store).await {
                tracing::warn!(error = %e, "cannot read the access change log");
            }
        };
        let gateway = async {
            if let Some(gateway) = state.gateway.get() {
                gateway.read_changes().await;
            }
        };
        tokio::join!(access, gateway);
    }
    response
}

/// Where a request's address holds what no text in the store may (PostgreSQL refuses a NUL):
/// a path naming one names nothing (404), and a query string carrying one is malformed (400).
/// Nor can a path whose escapes decode to something other than UTF-8 name anything (axum's
/// path reader would refuse it in plain text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unreadable {
    Path,
    Query,
}

/// What the REST API and OCPI's endpoints say of a query string with a NUL.
pub(crate) const NUL_IN_QUERY: &str = "The query string must not contain NUL characters.";

pub(crate) fn unreadable(uri: &axum::http::Uri) -> Option<Unreadable> {
    let path = uri.path();
    if path.contains("%00")
        || percent_encoding::percent_decode_str(path)
            .decode_utf8()
            .is_err()
    {
        return Some(Unreadable::Path);
    }
    uri.query()
        .is_some_and(|q| q.contains("%00"))
        .then_some(Unreadable::Query)
}

/// The REST API's answer to an [`Unreadable`] address.
async fn refuse_nul(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    match unreadable(request.uri()) {
        Some(Unreadable::Path) => ApiError::NotFound("Not Found.".into()).into_response(),
        Some(Unreadable::Query) => ApiError::BadRequest(NUL_IN_QUERY.into()).into_response(),
        None => next.run(request).await,
    }
}

/// `uri` with every uuid-shaped path segment in lower case, when one is not: a uuid in a path
/// names the same resource in capitals (RFC 9562 compares uuids case-insensitively; Swift's
/// `uuidString`, for one, writes them so), and the store keeps them in lower case. Applied
/// before routing (the server's [`cms_http_server::UriRewrite`]), as the path parameters are
/// read while routing.
pub fn with_lowercase_uuids(uri: &axum::http::Uri) -> Option<axum::http::Uri> {
    let is_upper_uuid = |segment: &str| {
        segment.len() == 36
            && segment.bytes().any(|b| b.is_ascii_uppercase())
            && segment.bytes().enumerate().all(|(i, b)| match i {
                8 | 13 | 18 | 23 => b == b'-',
                _ => b.is_ascii_hexdigit(),
            })
    };
    let path = uri.path();
    if !path.split('/').any(is_upper_uuid) {
        return None;
    }
    let path: Vec<String> = path
        .split('/')
        .map(|s| match is_upper_uuid(s) {
            true => s.to_ascii_lowercase(),
            false => s.to_string(),
        })
        .collect();
    let mut parts = uri.clone().into_parts();
    let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
    parts.path_and_query = format!("{}{query}", path.join("/")).parse().ok();
    axum::http::Uri::from_parts(parts).ok()
}

/// From memory: a flood of probes costs the store nothing (crate::readiness).
async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    if state.ready.is_ready() {
        (StatusCode::OK, "ready\n")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready\n")
    }
}
