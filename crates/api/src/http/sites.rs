//! Sites: list, create, show, update (endpoint 6) and delete; and the v2 list of a site's
//! connectors as one of the caller's teams sees them (endpoint 10).

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules};
use crate::http::lookup::{not_found, owned_site, path_number};
use crate::http::pagination::{PER_PAGE, Page, page_number, page_offset};
use crate::http::schema::{Data, EmptyBody, ErrorBody, PermissionsBody, ValidationErrorBody};
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use cms_store::sites::{AUTHORIZATION_MODES, Site, SiteAuthorization, SiteChanges};
use cms_store::smart_charging::{MODE_DISABLED, MODE_DYNAMIC};
use cms_store::teams::Team;
use cms_store::{ConnectorRow, StoreError};
use serde::Serialize;
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, update, destroy))
        .routes(routes!(team_site_connectors))
}

/// A site, with what the caller may do with it.
#[derive(Serialize, ToSchema)]
pub struct SiteBody {
    #[schema(format = "uuid")]
    pub uuid: String,
    pub id: i64,
    pub name: String,
    /// The one-line address: `Stationsplein 12A, 1012 AB Amsterdam`.
    pub address: Option<String>,
    pub street: String,
    pub postal_code: String,
    pub house_number: i64,
    pub house_number_addition: Option<String>,
    pub city: String,
    /// At most 2 characters (ISO 3166-1 alpha-2).
    pub country: String,
    /// The smart-charging mode: `disabled`, `static` (a fixed grid limit) or `dynamic` (the
    /// limit less what a CT meter measures); set through `PUT .../smart-charging`.
    #[schema(value_type = crate::http::smart_charging::SmartChargingMode)]
    pub smart_charging: String,
    /// The site's chargers the caller sees.
    pub chargers_count: i64,
    /// Who may charge: `open` (any tag is accepted) or `id_tags` (the tags of the owner team
    /// and of the teams with access to the site).
    #[schema(value_type = SiteAuthorizationMode)]
    pub authorization: String,
    /// Whether cms keeps the chargers' local authorization lists equal to the site's tags.
    pub local_authorization_list: bool,
    /// The tariff (one of the owner team's) that prices the transactions of the site's
    /// chargers; null: they are not priced.
    #[schema(required = true, format = "uuid")]
    pub tariff_uuid: Option<String>,
    /// An IANA time zone name: the tariff's time-of-day restrictions follow it.
    #[schema(example = "Europe/Amsterdam")]
    pub time_zone: String,
    /// Whether the driver's price and the running and final cost are shown on the site's
    /// chargers: those holding the `pro` licence whose configuration says they display them
    /// (docs/tariffs.md).
    pub show_prices: bool,
    pub capabilities: CapabilitiesBody,
    pub created_at: String,
    pub updated_at: String,
    pub permissions: PermissionsBody,
}

/// Who may charge at a site (see `cms_store::sites::AUTHORIZATION_MODES`).
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)] // Documents the allowed values.
pub enum SiteAuthorizationMode {
    Open,
    IdTags,
}

#[derive(Serialize, ToSchema)]
pub struct CapabilitiesBody {
    pub smart_charging: bool,
    pub load_management: LoadManagementBody,
}

/// Load management the site is equipped for: `dynamic` in the `dynamic` smart-charging mode
/// (a CT meter measures the grid connection).
#[derive(Serialize, ToSchema)]
pub struct LoadManagementBody {
    pub dynamic: bool,
    pub peak_shaving: bool,
    pub solar: bool,
}

impl From<Site> for SiteBody {
    fn from(s: Site) -> Self {
        SiteBody {
            capabilities: CapabilitiesBody {
                smart_charging: s.smart_charging != MODE_DISABLED,
                load_management: LoadManagementBody {
                    dynamic: s.smart_charging == MODE_DYNAMIC,
                    peak_shaving: false,
                    solar: false,
                },
            },
            uuid: s.uuid,
            id: s.id,
            name: s.name,
            address: s.address,
            street: s.street,
            postal_code: s.postal_code,
            house_number: s.house_number,
            house_number_addition: s.house_number_addition,
            city: s.city,
            country: s.country,
            smart_charging: s.smart_charging,
            chargers_count: s.chargers_count,
            authorization: s.authorization_mode,
            local_authorization_list: s.local_authorization_list,
            tariff_uuid: s.tariff_uuid,
            time_zone: s.time_zone,
            show_prices: s.show_prices,
            created_at: s.created_at,
            updated_at: s.updated_at,
            permissions: s.permissions.into(),
        }
    }
}

/// The site update (endpoint 6): every field optional.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct SiteUpdateRequest {
    #[schema(max_length = 255)]
    name: Option<String>,
    #[schema(max_length = 255)]
    street: Option<String>,
    #[schema(minimum = 0)]
    house_number: Option<i64>,
    #[schema(max_length = 255)]
    house_number_addition: Option<String>,
    #[schema(max_length = 255)]
    postal_code: Option<String>,
    #[schema(max_length = 255)]
    city: Option<String>,
    #[schema(max_length = 2)]
    country: Option<String>,
    authorization: Option<SiteAuthorizationMode>,
    local_authorization_list: Option<bool>,
    /// A tariff of the site's owner team, or null to stop pricing. Transactions keep the
    /// tariff they started under.
    #[schema(format = "uuid")]
    tariff_uuid: Option<String>,
    /// An IANA time zone name (default `UTC`).
    #[schema(max_length = 64, example = "Europe/Amsterdam")]
    time_zone: Option<String>,
    /// Show prices and costs on the site's chargers (default false).
    show_prices: Option<bool>,
}

/// A new site: the update's fields, all but `house_number_addition` required, and its team.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct SiteCreateRequest {
    #[schema(max_length = 255)]
    name: String,
    #[schema(max_length = 255)]
    street: String,
    #[schema(minimum = 0)]
    house_number: i64,
    #[schema(max_length = 255)]
    house_number_addition: Option<String>,
    #[schema(max_length = 255)]
    postal_code: String,
    #[schema(max_length = 255)]
    city: String,
    #[schema(max_length = 2)]
    country: String,
    /// Default `open`.
    authorization: Option<SiteAuthorizationMode>,
    /// Default false.
    local_authorization_list: Option<bool>,
    /// The owner team, one the caller belongs to; default: the caller's personal team.
    #[schema(format = "uuid")]
    team_uuid: Option<String>,
}

/// A connector of the v2 site connectors list.
#[derive(Serialize, ToSchema)]
pub struct ConnectorV2Body {
    pub id: i64,
    pub charger_id: i64,
    /// The connector's number on its charger.
    pub connector_id: i64,
    pub status: String,
    pub error: String,
    pub error_info: Option<String>,
    pub max_amperage: Option<i64>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<ConnectorRow> for ConnectorV2Body {
    fn from(c: ConnectorRow) -> Self {
        ConnectorV2Body {
            id: c.id,
            charger_id: c.charger_id,
            connector_id: c.connector_id,
            status: c.status,
            error: c.error,
            error_info: c.error_info,
            max_amperage: c.max_amperage,
            created_at: c.created_at,
            updated_at: c.updated_at,
        }
    }
}

async fn site_body(state: &AppState, caller: &Caller, uuid: &str) -> Result<SiteBody, ApiError> {
    let site = state.store.site_visible_to(caller.user_id(), uuid).await?;
    Ok(site.ok_or_else(|| not_found("Site"))?.into())
}

/// Reads `team_uuid`, a team the caller belongs to (default: the caller's personal team).
/// `None` when it is not one (the failure is recorded).
pub(super) async fn read_acting_team(
    state: &AppState,
    caller: &Caller,
    input: &mut Input,
) -> Result<Option<Team>, ApiError> {
    let team_uuid = match input.string("team_uuid", Rules::optional().nullable().max(255.0)) {
        Some(uuid) => uuid,
        None if input.has("team_uuid") => return Ok(None),
        None => None,
    };
    let team = state
        .store
        .acting_team(caller.user_id(), team_uuid.as_deref())
        .await?;
    if team.is_none() {
        input.fail("team_uuid", "The selected team uuid is invalid.");
    }
    Ok(team)
}

/// Reads the site fields: all required when `creating`, else those present.
pub(crate) fn read_site(input: &mut Input, creating: bool) -> SiteChanges {
    // A present field must have a value, as Laravel's `sometimes|required`.
    let rules = |input: &Input, field: &str| (creating || input.has(field)).then(Rules::required);
    let text = |input: &mut Input, field: &str, max: f64| {
        let rules = rules(input, field)?;
        input.string(field, rules.max(max)).flatten()
    };
    let name = text(input, "name", 255.0);
    let street = text(input, "street", 255.0);
    let postal_code = text(input, "postal_code", 255.0);
    let city = text(input, "city", 255.0);
    let country = text(input, "country", 2.0);
    let house_number = rules(input, "house_number").and_then(|rules| {
        let number = input.number("house_number", rules.min(0.0)).flatten()?;
        // The store keeps whole numbers.
        if number.fract() != 0.0 || number > 1e15 {
            input.fail("house_number", "The house number field must be an integer.");
            return None;
        }
        Some(number as i64)
    });
    let addition_rules = Rules::optional().nullable().max(255.0);
    let house_number_addition = input
        .string("house_number_addition", addition_rules)
        .map(|addition| addition.filter(|a| !a.trim().is_empty()));
    let authorization_mode = input
        .one_of("authorization", Rules::optional(), &AUTHORIZATION_MODES)
        .flatten();
    let local_authorization_list = input
        .boolean("local_authorization_list", Rules::optional())
        .flatten();
    SiteChanges {
        name,
        street,
        house_number,
        house_number_addition,
        postal_code,
        city,
        country,
        authorization_mode,
        local_authorization_list,
        // Read by `read_site_pricing`, which asks the store.
        tariff_id: None,
        time_zone: None,
        show_prices: None,
    }
}

/// Reads `tariff_uuid` (a tariff of `team_id`, or null) and `time_zone` (an IANA name) into
/// `changes`.
async fn read_site_pricing(
    state: &AppState,
    input: &mut Input,
    team_id: i64,
    changes: &mut SiteChanges,
) -> Result<(), ApiError> {
    let rules = Rules::optional().nullable().max(255.0);
    changes.tariff_id = match input.string("tariff_uuid", rules) {
        Some(Some(uuid)) => match state.store.tariff(team_id, &uuid).await? {
            Some(tariff) => Some(Some(tariff.id)),
            None => {
                input.fail("tariff_uuid", "The selected tariff uuid is invalid.");
                None
            }
        },
        Some(None) => Some(None),
        None => None,
    };
    changes.time_zone = match input.string("time_zone", Rules::optional().max(64.0)) {
        Some(Some(name)) if cms_tariffs::time_zone(&name).is_some() => Some(name),
        Some(Some(_)) => {
            input.fail("time_zone", "The time zone field must be a valid timezone.");
            None
        }
        _ => None,
    };
    changes.show_prices = input.boolean("show_prices", Rules::optional()).flatten();
    Ok(())
}

/// List the sites the caller reaches: those its teams own and those they are guests of.
#[utoipa::path(
    get,
    path = "/api/v3/sites",
    tag = "Sites",
    params(("page" = Option<i64>, Query, description = "Page number, from 1")),
    responses(
        (status = 200, description = "A page of sites", body = Page<SiteBody>),
    ),
    security(("bearer" = ["sites:read"]), ("oauth2" = ["sites:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<SiteBody>>, ApiError> {
    caller.authorize()?;
    let page = page_number(query.get("page").map(String::as_str))?;
    let offset = page_offset(page);
    let (sites, total) = state
        .store
        .sites_visible_to(caller.user_id(), PER_PAGE, offset)
        .await?;
    let data = sites.into_iter().map(SiteBody::from).collect();
    Ok(Json(Page::new("/api/v3/sites", page, total, data)))
}

/// Create a site, owned by one of the caller's teams (default: the caller's personal team).
#[utoipa::path(
    post,
    path = "/api/v3/sites",
    tag = "Sites",
    request_body = SiteCreateRequest,
    responses(
        (status = 201, description = "The new site", body = Data<SiteBody>),
    ),
    security(("bearer" = ["sites:write"]), ("oauth2" = ["sites:write"]))
)]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    mut input: Input,
) -> Result<(StatusCode, Json<Data<SiteBody>>), ApiError> {
    caller.authorize()?;
    let site = read_site(&mut input, true);
    let team = read_acting_team(&state, &caller, &mut input).await?;
    input.finish()?;
    let authorization = site.authorization(SiteAuthorization::default());
    let (Some(team), Some(site)) = (team, site.complete()) else {
        return Err(ApiError::Internal(
            "a valid site without a team or field".into(),
        ));
    };
    let uuid = state
        .store
        .create_site_with(team.id, &site, &authorization)
        .await?;
    let body = site_body(&state, &caller, &uuid).await?;
    Ok((StatusCode::CREATED, Json(Data::new(body))))
}

/// Show a site the caller reaches.
#[utoipa::path(
    get,
    path = "/api/v3/sites/{site_uuid}",
    tag = "Sites",
    params(("site_uuid" = String, Path, format = "uuid")),
    responses(
        (status = 200, body = Data<SiteBody>),
    ),
    security(("bearer" = ["sites:read"]), ("oauth2" = ["sites:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(site_uuid): Path<String>,
) -> Result<Json<Data<SiteBody>>, ApiError> {
    caller.authorize()?;
    Ok(Json(Data::new(
        site_body(&state, &caller, &site_uuid).await?,
    )))
}

/// Update a site (endpoint 6): the fields given change. Only the owner team may.
#[utoipa::path(
    put,
    path = "/api/v3/sites/{site_uuid}",
    tag = "Sites",
    params(("site_uuid" = String, Path, format = "uuid")),
    request_body = SiteUpdateRequest,
    responses(
        (status = 200, body = Data<SiteBody>),
        (status = 403, body = ErrorBody, description = "A guest of the site, or the token lacks sites:write"),
    ),
    security(("bearer" = ["sites:write"]), ("oauth2" = ["sites:write"]))
)]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(site_uuid): Path<String>,
    mut input: Input,
) -> Result<Json<Data<SiteBody>>, ApiError> {
    caller.authorize()?;
    let site_id = owned_site(&state, &caller, &site_uuid).await?;
    let mut changes = read_site(&mut input, false);
    let site = state
        .store
        .site_visible_to(caller.user_id(), &site_uuid)
        .await?;
    let team_id = site.ok_or_else(|| not_found("Site"))?.team_id;
    read_site_pricing(&state, &mut input, team_id, &mut changes).await?;
    input.finish()?;
    state.store.update_site(site_id, changes).await?;
    super::site_roaming::site_changed(&state, site_id).await?;
    Ok(Json(Data::new(
        site_body(&state, &caller, &site_uuid).await?,
    )))
}

/// Delete a site without chargers, with every team's access to it. Only the owner team may.
#[utoipa::path(
    delete,
    path = "/api/v3/sites/{site_uuid}",
    tag = "Sites",
    params(("site_uuid" = String, Path, format = "uuid")),
    responses(
        (status = 200, description = "Deleted", body = EmptyBody),
        (status = 403, body = ErrorBody, description = "A guest of the site, or the token lacks sites:write"),
        (status = 422, body = ValidationErrorBody, description = "The site still has chargers"),
    ),
    security(("bearer" = ["sites:write"]), ("oauth2" = ["sites:write"]))
)]
pub async fn destroy(
    State(state): State<AppState>,
    caller: Caller,
    Path(site_uuid): Path<String>,
) -> Result<Json<EmptyBody>, ApiError> {
    caller.authorize()?;
    let site_id = owned_site(&state, &caller, &site_uuid).await?;
    match state.store.delete_site(site_id).await {
        Ok(()) => Ok(Json(EmptyBody {})),
        Err(StoreError::Conflict(message)) => Err(ApiError::invalid("site", message)),
        Err(e) => Err(e.into()),
    }
}

/// List a site's connectors as one of the caller's teams sees them (endpoint 10): all of the
/// site's for its owner team or a guest with every asset, else those of the listed chargers;
/// by charger, then number, 25 a page.
#[utoipa::path(
    get,
    path = "/api/v2/teams/{team_id}/sites/{site_id}/connectors",
    tag = "Sites",
    params(
        ("team_id" = i64, Path, description = "A team the caller belongs to"),
        ("site_id" = i64, Path, description = "A site the team reaches"),
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
    ),
    responses(
        (status = 200, body = Page<ConnectorV2Body>),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn team_site_connectors(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_id, site_id)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<ConnectorV2Body>>, ApiError> {
    caller.authorize()?;
    let team_id: i64 = path_number(&team_id, "Site")?;
    let site_id: i64 = path_number(&site_id, "Site")?;
    let page = page_number(query.get("page").map(String::as_str))?;
    let (connectors, total) = state
        .store
        .site_connectors_of_team(
            caller.user_id(),
            team_id,
            site_id,
            PER_PAGE,
            page_offset(page),
        )
        .await?
        .ok_or_else(|| not_found("Site"))?;
    let data = connectors.into_iter().map(ConnectorV2Body::from).collect();
    let path = format!("/api/v2/teams/{team_id}/sites/{site_id}/connectors");
    Ok(Json(Page::new(&path, page, total, data)))
}

#[cfg(test)]
mod tests {
    use super::{AUTHORIZATION_MODES, SiteAuthorizationMode};

    #[test]
    fn the_documented_authorization_modes_are_the_accepted_ones() {
        let schema = <SiteAuthorizationMode as utoipa::PartialSchema>::schema();
        let schema = serde_json::to_value(schema).expect("a schema serialises");
        assert_eq!(schema["enum"], serde_json::json!(AUTHORIZATION_MODES));
    }
}
