//! A site's roaming settings (docs/api.md "Site roaming", docs/ocpi.md "Locations and
//! tariffs"): what its OCPI Location needs beyond the site's own fields (coordinates, parking
//! type, facilities, opening times) and the providers of its owner team it is published to.
//! A site is private until published. As for changing the site: its owner team, with the sites
//! scopes; a guest is refused (403).
//!
//! The pushes that tell parties of a change are enqueued here and by the hooks the site, tariff
//! and provider updates call ([`site_changed`], [`tariff_changed`], [`provider_changed`]).

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules};
use crate::http::lookup::{not_found, owned_site};
use crate::http::schema::{Data, ErrorBody, ValidationErrorBody};
use axum::Json;
use axum::extract::{Path, State};
use cms_ocpi::locations as ocpi;
use cms_store::ocpi::locations::{NewSiteRoaming, SiteRoaming};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show, update))
}

/// A site's roaming settings: all null (and no provider) until first set.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct SiteRoamingBody {
    /// Decimal degrees, 5 to 7 decimals (OCPI's form).
    #[schema(required = true, example = "52.37403")]
    pub latitude: Option<String>,
    #[schema(required = true, example = "4.88969")]
    pub longitude: Option<String>,
    /// An OCPI ParkingType: `ALONG_MOTORWAY`, `PARKING_GARAGE`, `PARKING_LOT`, `ON_DRIVEWAY`,
    /// `ON_STREET`, `UNDERGROUND_GARAGE`.
    #[schema(required = true)]
    pub parking_type: Option<String>,
    /// OCPI Facility values (`CAFE`, `WIFI`, ...).
    pub facilities: Vec<String>,
    /// An OCPI Hours object; null: open 24/7.
    #[schema(required = true, value_type = Option<Object>)]
    pub opening_times: Option<Value>,
    /// The providers (of the site's owner team) whose eMSPs see the site.
    pub provider_uuids: Vec<String>,
    #[schema(required = true)]
    pub updated_at: Option<String>,
}

impl From<SiteRoaming> for SiteRoamingBody {
    fn from(r: SiteRoaming) -> Self {
        SiteRoamingBody {
            latitude: Some(r.latitude),
            longitude: Some(r.longitude),
            parking_type: r.parking_type,
            facilities: r.facilities,
            opening_times: (r.opening_times.as_deref()).and_then(|t| serde_json::from_str(t).ok()),
            provider_uuids: r.provider_uuids,
            updated_at: Some(r.updated_at),
        }
    }
}

/// The body of `PUT .../roaming`: every field replaced.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct SiteRoamingRequest {
    #[schema(example = "52.37403", pattern = r"^-?[0-9]{1,2}\.[0-9]{5,7}$")]
    latitude: String,
    #[schema(example = "4.88969", pattern = r"^-?[0-9]{1,3}\.[0-9]{5,7}$")]
    longitude: String,
    parking_type: Option<String>,
    /// OCPI Facility values, each at most once.
    #[schema(max_items = 20)]
    facilities: Option<Vec<String>>,
    /// An OCPI Hours object (`twentyfourseven`, `regular_hours`, `exceptional_openings`,
    /// `exceptional_closings`); null or absent: open 24/7.
    #[schema(value_type = Option<Object>)]
    opening_times: Option<Value>,
    /// Providers of the site's owner team; `[]`: private.
    #[schema(format = "uuid", max_items = 100)]
    provider_uuids: Vec<String>,
}

/// The site's roaming settings.
#[utoipa::path(
    get,
    path = "/api/v3/sites/{site_uuid}/roaming",
    tag = "Roaming",
    params(("site_uuid" = String, Path, format = "uuid")),
    responses(
        (status = 200, body = Data<SiteRoamingBody>),
        (status = 403, body = ErrorBody, description = "A guest of the site, or the token lacks sites:read"),
    ),
    security(("bearer" = ["sites:read"]), ("oauth2" = ["sites:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(site_uuid): Path<String>,
) -> Result<Json<Data<SiteRoamingBody>>, ApiError> {
    caller.authorize()?;
    let site_id = owned_site(&state, &caller, &site_uuid).await?;
    let roaming = state.store.ocpi_site_roaming(site_id).await?;
    Ok(Json(Data::new(roaming.map(Into::into).unwrap_or_default())))
}

/// Set the site's roaming settings and the providers it is published to. The eMSPs of
/// providers it is newly or still published to are pushed its Location (and tariff); those it
/// no longer is, each of its EVSEs `REMOVED`.
#[utoipa::path(
    put,
    path = "/api/v3/sites/{site_uuid}/roaming",
    tag = "Roaming",
    params(("site_uuid" = String, Path, format = "uuid")),
    request_body = SiteRoamingRequest,
    responses(
        (status = 200, body = Data<SiteRoamingBody>),
        (status = 403, body = ErrorBody, description = "A guest of the site, or the token lacks sites:write"),
        (status = 409, body = ErrorBody, description = "Published while the team has no OCPI identity"),
        (status = 422, body = ValidationErrorBody, description = "A field of the body is invalid, or the site's country is not an ISO 3166-1 alpha-2 code (`provider_uuids` says so)"),
    ),
    security(("bearer" = ["sites:write"]), ("oauth2" = ["sites:write"]))
)]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(site_uuid): Path<String>,
    mut input: Input,
) -> Result<Json<Data<SiteRoamingBody>>, ApiError> {
    caller.authorize()?;
    let site_id = owned_site(&state, &caller, &site_uuid).await?;
    let site = (state
        .store
        .site_visible_to(caller.user_id(), &site_uuid)
        .await?)
        .ok_or_else(|| not_found("Site"))?;
    let latitude = coordinate(&mut input, "latitude", ocpi::is_latitude, 2);
    let longitude = coordinate(&mut input, "longitude", ocpi::is_longitude, 3);
    let parking_type = input
        .one_of(
            "parking_type",
            Rules::optional().nullable(),
            &ocpi::PARKING_TYPES,
        )
        .flatten();
    let facilities = facilities(&mut input);
    let opening_times = opening_times(&mut input);
    let mut provider_ids = Vec::new();
    if let Some(uuids) = input
        .array("provider_uuids", Rules::required().max(MAX_PROVIDERS))
        .flatten()
    {
        for (i, uuid) in uuids.iter().enumerate() {
            let provider = match uuid.as_str() {
                Some(uuid) => state.store.provider(site.team_id, uuid).await?,
                None => None,
            };
            match provider {
                Some(provider) => provider_ids.push(provider.id),
                None => input.fail(
                    &format!("provider_uuids.{i}"),
                    "The selected provider uuid is invalid.",
                ),
            }
        }
        if !uuids.is_empty() && !ocpi::is_alpha_2(&site.country) {
            input.fail(
                "provider_uuids",
                format!(
                    "The site's country ({}) is not an ISO 3166-1 alpha-2 code: correct the \
                     site before publishing it.",
                    site.country
                ),
            );
        }
    }
    input.finish()?;
    let (Some(latitude), Some(longitude)) = (latitude, longitude) else {
        return Err(ApiError::Internal(
            "valid roaming settings without coordinates".into(),
        ));
    };
    if !provider_ids.is_empty() && state.store.ocpi_cpo(site.team_id).await?.is_none() {
        return Err(ApiError::Conflict(
            "Set the team's OCPI identity first (PUT /api/v3/teams/{team_uuid}/ocpi).".into(),
        ));
    }
    let new = NewSiteRoaming {
        latitude,
        longitude,
        parking_type,
        facilities,
        opening_times: opening_times.map(|hours| hours.to_string()),
        provider_ids,
    };
    let change = state.store.ocpi_save_site_roaming(site_id, &new).await?;
    state.store.ocpi_push_publication(site_id, &change).await?;
    let roaming = state.store.ocpi_site_roaming(site_id).await?;
    Ok(Json(Data::new(roaming.map(Into::into).unwrap_or_default())))
}

/// The most providers a site is published to in one request (each is looked up).
const MAX_PROVIDERS: f64 = 100.0;

/// A required coordinate in OCPI's form (`whole` digits at most before the point).
fn coordinate(
    input: &mut Input,
    field: &str,
    valid: fn(&str) -> bool,
    whole: usize,
) -> Option<String> {
    let text = input.required_string(field, 12.0)?;
    if valid(&text) {
        return Some(text);
    }
    let bound = if whole == 2 { 90 } else { 180 };
    input.fail(
        field,
        format!(
            "The {field} must be decimal degrees with 5 to 7 decimals, at most {bound} either \
             way (52.37403)."
        ),
    );
    None
}

/// Optional OCPI Facility values, each once.
fn facilities(input: &mut Input) -> Vec<String> {
    let items = input
        .array(
            "facilities",
            Rules::optional()
                .nullable()
                .max(ocpi::FACILITIES.len() as f64),
        )
        .flatten()
        .unwrap_or_default();
    let mut kept = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item.as_str() {
            Some(f) if ocpi::FACILITIES.contains(&f) => {
                if !kept.iter().any(|k| k == f) {
                    kept.push(f.to_string());
                }
            }
            _ => input.fail(
                &format!("facilities.{i}"),
                "The selected facility is invalid.",
            ),
        }
    }
    kept
}

/// Optional OCPI Hours, checked; `None`: 24/7.
fn opening_times(input: &mut Input) -> Option<Value> {
    let hours = input
        .object("opening_times", Rules::optional().nullable())
        .flatten()?;
    let hours = Value::Object(hours);
    let problems = ocpi::hours_problems(&hours);
    for (path, message) in &problems {
        let field = match path.is_empty() {
            true => "opening_times".to_string(),
            false => format!("opening_times.{path}"),
        };
        input.fail(
            &field,
            format!("The {} {message}.", field.replace('_', " ")),
        );
    }
    problems.is_empty().then_some(hours)
}

/// After the site was updated: its Location (and tariff) to the parties it is published to.
pub(crate) async fn site_changed(state: &AppState, site_id: i64) -> Result<(), ApiError> {
    Ok(state.store.ocpi_push_site(site_id).await?)
}

/// After a tariff was replaced: it to the parties whose drivers it prices at a published site.
pub(crate) async fn tariff_changed(state: &AppState, tariff_uuid: &str) -> Result<(), ApiError> {
    Ok(state.store.ocpi_push_tariff(tariff_uuid).await?)
}

/// After a provider was replaced (its tariff): the sites published to it, to its party.
pub(crate) async fn provider_changed(state: &AppState, provider_id: i64) -> Result<(), ApiError> {
    Ok(state.store.ocpi_push_provider(provider_id).await?)
}
