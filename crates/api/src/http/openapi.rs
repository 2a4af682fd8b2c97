//! The OpenAPI 3.1 document of the REST API, assembled from the handlers' own annotations
//! (`#[utoipa::path]`) and types (`#[derive(ToSchema)]`) by the router, so that the document
//! and the routes cannot drift apart. Served at `/api/openapi.json`.

use cms_store::Scope;
use utoipa::openapi::security::{
    AuthorizationCode, Flow, HttpAuthScheme, HttpBuilder, OAuth2, Scopes, SecurityScheme,
};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "cms: Charging Management Service",
        description = "Teams, sites, chargers, connectors, transactions, meter values, meters, \
            proxy servers, site access and invites, team domains, id tags, and the OCPP calls sent to \
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
