//! A charger's proxy set-up (endpoints 1 and 2): the vendor role it plays among chargers that
//! share one uplink, and the proxy servers it relays through.
//!
//! The reference shows `vendor_role` (`ROLE_FOLLOWER`) and `servers` (`null`) in its sample
//! only; here `vendor_role` is required and one of [`VENDOR_ROLES`], and `servers` is `null`
//! or a list of at most [`MAX_SERVERS`] `{websocket_url, role}`, which replaces the charger's
//! list (`null` or absent empties it).

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules};
use crate::http::lookup::{forbidden_unless, not_found, visible_charger};
use crate::http::schema::{Data, ErrorBody};
use axum::Json;
use axum::extract::{Path, State};
use cms_bus::ProxyUrl;
use cms_bus::proxy_url::{masked, unmasked};
use cms_store::StoreError;
use cms_store::proxy::{NewProxyServer, ProxyServer};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashSet;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show_proxy, set_proxy))
}

/// The vendor roles a charger may be given.
pub const VENDOR_ROLES: [&str; 3] = ["ROLE_LEADER", "ROLE_FOLLOWER", "ROLE_STANDALONE"];

/// The roles of a proxy server.
pub const SERVER_ROLES: [&str; 2] = ["leader", "follower"];

/// The most proxy servers a charger may have.
pub const MAX_SERVERS: usize = 10;

/// A proxy server of a charger.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProxyServerBody {
    /// A secure websocket URL, `wss://[user[:password]@]host[:port]/path`; a password is
    /// shown as `***`.
    #[schema(format = "uri", example = "wss://proxy.example.com/ocpp")]
    pub websocket_url: String,
    #[schema(value_type = ServerRole)]
    pub role: String,
    /// How the gateway holding the charger is connected to this server now: `connected` or
    /// `disconnected` (also while the charger itself is offline).
    #[schema(example = "connected")]
    pub connection_status: String,
    /// When the gateway last connected to it for this charger; null if never.
    pub last_connected_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<ProxyServer> for ProxyServerBody {
    fn from(s: ProxyServer) -> Self {
        ProxyServerBody {
            websocket_url: masked(&s.websocket_url),
            role: s.role,
            connection_status: s.connection_status,
            last_connected_at: s.last_connected_at,
            created_at: s.created_at,
            updated_at: s.updated_at,
        }
    }
}

/// The role of a proxy server (see [`SERVER_ROLES`]).
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)] // Documents the allowed values.
pub enum ServerRole {
    Leader,
    Follower,
}

/// The vendor role of a charger (see [`VENDOR_ROLES`]).
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the allowed values.
pub enum VendorRole {
    #[schema(rename = "ROLE_LEADER")]
    Leader,
    #[schema(rename = "ROLE_FOLLOWER")]
    Follower,
    #[schema(rename = "ROLE_STANDALONE")]
    Standalone,
}

/// The body of `PUT /api/v3/chargers/{charger_uuid}/proxy`.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct ProxyBody {
    vendor_role: VendorRole,
    /// The charger's proxy servers, replacing those it had; `null` (or absent) for none. At
    /// most 10, each URL once.
    #[schema(max_items = 10)]
    servers: Option<Vec<NewProxyServerBody>>,
}

/// A proxy server as the operator lists it.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct NewProxyServerBody {
    /// `wss://[user[:password]@]host[:port]/path`, at most 255 characters; the credentials
    /// are sent as Basic auth. `***` as the password keeps the one stored for the same URL.
    #[schema(
        max_length = 255,
        pattern = "^wss://[^/\\s]+",
        example = "wss://proxy.example.com/ocpp"
    )]
    websocket_url: String,
    role: ServerRole,
}

/// The proxy servers of a charger (endpoint 2), in the order they were listed.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/proxy",
    tag = "Chargers > Proxy",
    params(("charger_uuid" = String, Path, format = "uuid")),
    responses(
        (status = 200, description = "The charger's proxy servers", body = Data<Vec<ProxyServerBody>>),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn show_proxy(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
) -> Result<Json<Data<Vec<ProxyServerBody>>>, ApiError> {
    caller.authorize()?;
    let charger = visible_charger(&state, &caller, &charger_uuid).await?;
    let servers = state.store.proxy_servers(charger.id).await?;
    Ok(Json(Data::new(
        servers.into_iter().map(Into::into).collect(),
    )))
}

/// Set a charger's vendor role and replace its proxy servers (endpoint 1).
#[utoipa::path(
    put,
    path = "/api/v3/chargers/{charger_uuid}/proxy",
    tag = "Chargers > Proxy",
    params(("charger_uuid" = String, Path, format = "uuid")),
    request_body = ProxyBody,
    responses(
        (status = 200, description = "The charger's proxy servers", body = Data<Vec<ProxyServerBody>>),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:write, or the caller's team does not own the charger's site, or the charger lacks the pro licence (servers given)"),
    ),
    security(("bearer" = ["chargers:write"]), ("oauth2" = ["chargers:write"]))
)]
pub async fn set_proxy(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
    mut input: Input,
) -> Result<Json<Data<Vec<ProxyServerBody>>>, ApiError> {
    caller.authorize()?;
    let charger = visible_charger(&state, &caller, &charger_uuid).await?;
    forbidden_unless(charger.permissions.full)?;
    let vendor_role = input
        .one_of("vendor_role", Rules::required(), &VENDOR_ROLES)
        .flatten();
    let servers = match input.array("servers", Rules::optional().nullable()) {
        Some(Some(items)) => {
            let stored = state.store.proxy_servers(charger.id).await?;
            let stored: Vec<&str> = stored.iter().map(|s| s.websocket_url.as_str()).collect();
            proxy_servers(&mut input, items, &stored)
        }
        _ => Vec::new(),
    };
    input.finish()?;
    // Relaying is a `pro` feature; emptying the list is always allowed.
    if !servers.is_empty() && !charger.license_pro {
        return Err(super::licenses::unlicensed("pro"));
    }
    let Some(vendor_role) = vendor_role else {
        return Err(ApiError::Internal(
            "validation passed without a vendor role".into(),
        ));
    };
    match state
        .store
        .set_proxy(charger.id, &vendor_role, &servers)
        .await
    {
        Ok(servers) => Ok(Json(Data::new(
            servers.into_iter().map(Into::into).collect(),
        ))),
        Err(StoreError::NotFound(_)) => Err(not_found("Charger")),
        Err(e) => Err(e.into()),
    }
}

/// Checks the items of `servers`, recording failures under `servers.N.field` as Laravel keys
/// nested fields; returns the valid ones.
/// `stored`: the charger's URLs now, whose passwords a masked URL keeps.
pub(crate) fn proxy_servers(
    input: &mut Input,
    items: Vec<Value>,
    stored: &[&str],
) -> Vec<NewProxyServer> {
    if items.len() > MAX_SERVERS {
        input.fail(
            "servers",
            format!("The servers field must not have more than {MAX_SERVERS} items."),
        );
        return Vec::new();
    }
    let mut servers = Vec::with_capacity(items.len());
    let mut seen = HashSet::new();
    let mut leader_seen = false;
    for (n, item) in items.into_iter().enumerate() {
        let Value::Object(fields) = item else {
            input.fail(
                &format!("servers.{n}"),
                format!("The servers.{n} field must be an object."),
            );
            continue;
        };
        // The item's fields under their nested names, so that messages and keys name them.
        let mut item = Input::new(
            fields
                .into_iter()
                .map(|(k, v)| (format!("servers.{n}.{k}"), v))
                .collect(),
        );
        let url_field = format!("servers.{n}.websocket_url");
        let url = item.required_string(&url_field, 255.0);
        let url = match url.map(|u| (unmasked(&u, stored.iter().copied()), u)) {
            Some((None, _)) => {
                let why = format!(
                    "The servers.{n}.websocket url field hides a password this server does not have."
                );
                item.fail(&url_field, why);
                None
            }
            Some((Some(url), _)) => Some(url),
            None => None,
        };
        let url = url.and_then(|url| match secure_proxy_url(&url) {
            Some(url) => Some(url),
            None => {
                item.fail(
                    &url_field,
                    format!("The servers.{n}.websocket url field must be a wss:// URL."),
                );
                None
            }
        });
        if let Some(url) = &url
            && !seen.insert(masked(url.as_str()))
        {
            item.fail(
                &url_field,
                format!("The servers.{n}.websocket url field has a duplicate value."),
            );
        }
        let role = item
            .one_of(
                &format!("servers.{n}.role"),
                Rules::required(),
                &SERVER_ROLES,
            )
            .flatten();
        if role.as_deref() == Some("leader") && std::mem::replace(&mut leader_seen, true) {
            item.fail(
                &format!("servers.{n}.role"),
                format!("The servers.{n}.role field may be leader for one server only."),
            );
        }
        match (item.finish(), url, role) {
            (Ok(()), Some(websocket_url), Some(role)) => servers.push(NewProxyServer {
                websocket_url,
                role,
            }),
            (Err(ApiError::Validation(errors)), _, _) => {
                for (field, messages) in errors {
                    for message in messages {
                        input.fail(&field, message);
                    }
                }
            }
            _ => {}
        }
    }
    servers
}

/// `url` if it is a proxy URL the API takes: the relay would dial a `ws` URL too, but a
/// charger's traffic leaves cms encrypted or not at all.
fn secure_proxy_url(url: &str) -> Option<ProxyUrl> {
    ProxyUrl::parse(url).ok().filter(ProxyUrl::is_secure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_servers_are_secure_websocket_urls() {
        for good in [
            "wss://proxy.example.com",
            "wss://proxy.example.com/ocpp",
            "wss://10.0.0.1:8443/ocpp/CP-1",
            "wss://[::1]:8443/ocpp",
            "wss://ops:s3cret@proxy.example.com/ocpp",
            "wss://ops@proxy.example.com/ocpp",
            "wss://proxy.example.com:65535/ocpp",
        ] {
            assert!(secure_proxy_url(good).is_some(), "{good}");
        }
        for bad in [
            "ws://proxy.example.com",
            "https://proxy.example.com",
            "wss://",
            "wss:///path",
            "wss://host:port/x",
            "wss://127.0.0.1:99999/x",
            "wss://host:65536/x",
            "wss://host:0/x",
            "wss://host:/x",
            "wss://host:+443/x",
            "wss://@host/x",
            "wss://:pw@host/x",
            "wss://host/a b",
            "wss://host/ocpp?token=x",
            "wss://host/ocpp#x",
        ] {
            assert!(secure_proxy_url(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn the_documented_roles_are_the_accepted_ones() {
        let schema = |s: utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>| {
            serde_json::to_value(s).expect("a schema serialises")["enum"].clone()
        };
        use utoipa::PartialSchema;
        assert_eq!(
            schema(VendorRole::schema()),
            serde_json::json!(VENDOR_ROLES)
        );
        assert_eq!(
            schema(ServerRole::schema()),
            serde_json::json!(SERVER_ROLES)
        );
    }
}
