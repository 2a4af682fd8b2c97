//! The OpenAPI 3.1 document of the REST API, assembled from the handlers' own annotations
//! (`#[utoipa::path]`) and types (`#[derive(ToSchema)]`) by the router, so that the document
//! and the routes cannot drift apart. Served at `/api/openapi.json`.

use crate::http::error_responses;
use axum::http::Method;
use cms_store::Scope;
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};
use utoipa::openapi::security::{
    AuthorizationCode, Flow, HttpAuthScheme, HttpBuilder, OAuth2, Scopes, SecurityScheme,
};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "cms: Charging Management Service",
        description = "Teams, sites, chargers, connectors, transactions, meter values, meters, \
            proxy servers, site access and invites, team domains, id tags, webhooks, and the OCPP calls sent to \
            chargers (Chargers > Actions, Chargers > Settings). Every endpoint takes \
            `Authorization: Bearer <token>`: a personal access token or an OAuth 2.0 access \
            token, each carrying scopes."
    ),
    modifiers(&Security),
    components(schemas(
        crate::http::schema::ErrorBody,
        crate::http::schema::ValidationErrorBody,
        crate::http::schema::PermissionsBody
    ))
)]
pub struct ApiDoc;

/// The two ways to send a credential, both as a bearer token.
struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "A personal access token or an OAuth 2.0 access token.",
                    ))
                    .build(),
            ),
        );
        let scopes = Scopes::from_iter(
            Scope::DESCRIBED
                .iter()
                .map(|(name, description)| (name.to_string(), description.to_string())),
        );
        components.add_security_scheme(
            "oauth2",
            SecurityScheme::OAuth2(OAuth2::new([Flow::AuthorizationCode(
                AuthorizationCode::new("/oauth/authorize", "/oauth/token", scopes),
            )])),
        );
    }
}

/// The operations' methods, as the document's path items name them.
const METHODS: [(&str, Method); 8] = [
    ("get", Method::GET),
    ("put", Method::PUT),
    ("post", Method::POST),
    ("delete", Method::DELETE),
    ("options", Method::OPTIONS),
    ("head", Method::HEAD),
    ("patch", Method::PATCH),
    ("trace", Method::TRACE),
];

/// The scope an operation's `security` demands: each names one, for both schemes.
fn declared_scope(operation: &Value) -> Option<&str> {
    let requirements = operation["security"].as_array()?;
    let scopes: BTreeSet<&str> = requirements
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|r| r.values())
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut scopes = scopes.into_iter();
    let scope = scopes.next()?;
    assert!(
        scopes.next().is_none(),
        "an operation demands one scope: {operation}"
    );
    Some(scope)
}

/// Every operation of the document: (method, path, operation).
fn operations(document: &mut Value) -> Vec<(Method, String, &mut Value)> {
    let Some(paths) = document["paths"].as_object_mut() else {
        return Vec::new();
    };
    paths
        .iter_mut()
        .flat_map(|(path, item)| {
            let item = item.as_object_mut().into_iter().flatten();
            item.filter_map(move |(name, operation)| {
                let (_, method) = METHODS.iter().find(|(n, _)| n == name)?;
                Some((method.clone(), path.clone(), operation))
            })
        })
        .collect()
}

/// The scope each route demands, read from its operation's `security` in the document: the
/// one place a route's scope is written. Handlers check it with `Caller::authorize`.
pub struct DeclaredScopes(HashMap<String, HashMap<Method, &'static str>>);

impl DeclaredScopes {
    /// Of the served document; a scope it declares that cms does not know is a bug (panics).
    pub fn of(document: &mut Value) -> DeclaredScopes {
        let mut routes: HashMap<String, HashMap<Method, &'static str>> = HashMap::new();
        for (method, path, operation) in operations(document) {
            let Some(scope) = declared_scope(operation) else {
                continue;
            };
            let known = Scope::DESCRIBED.iter().find(|(name, _)| *name == scope);
            let (scope, _) = known.unwrap_or_else(|| panic!("{path} declares scope {scope}"));
            routes.entry(path).or_default().insert(method, *scope);
        }
        DeclaredScopes(routes)
    }

    /// The scope of `method` on the route `path` (its template); HEAD is GET's.
    pub fn scope(&self, method: &Method, path: &str) -> Option<&'static str> {
        let method = if *method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        self.0.get(path)?.get(method).copied()
    }
}

/// Adds to each operation that declares a scope the answers every such operation gives, unless
/// it describes them itself (with more reasons): 401 without a valid token, 403 when the token
/// lacks the scope, and those of its path and input (crate::http::error_responses: the 404 of
/// what its path names, the 422 of its body or query, the 400 of a body that is no JSON
/// object). So they are written once, here and there, not by every handler.
pub fn standard_responses(document: &mut Value) {
    let body = |schema: &str| json!({"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}});
    for (_, path, operation) in operations(document) {
        let Some(scope) = declared_scope(operation).map(str::to_string) else {
            continue;
        };
        let mut standard = vec![
            (
                "401",
                "No token, or one that is not valid (any more)".to_string(),
                "ErrorBody",
            ),
            ("403", format!("The token lacks {scope}"), "ErrorBody"),
        ];
        standard.extend(error_responses::standard(&path, operation));
        let Some(responses) = operation["responses"].as_object_mut() else {
            continue;
        };
        for (status, description, schema) in standard {
            responses
                .entry(status)
                .or_insert_with(|| json!({"description": description, "content": body(schema)}));
        }
        // By status, as written by hand.
        let mut sorted: Vec<(String, Value)> = std::mem::take(responses).into_iter().collect();
        sorted.sort_by(|(a, _), (b, _)| a.cmp(b));
        responses.extend(sorted);
    }
}
