//! A team's tariffs (beyond the reference's shown endpoints; docs/tariffs.md): what charging
//! costs at the team's sites, in the OCPI 2.2.1 shape. As a team's id tags: any member manages
//! them with the teams scopes; a team the caller does not belong to is a 404.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::Input;
use crate::http::lookup::not_found;
use crate::http::pagination::Page;
use crate::http::schema::{Data, EmptyBody, ErrorBody, ValidationErrorBody};
use crate::http::team_owned::{owned, page_of};
use crate::http::teams::member_team;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use cms_store::StoreError;
use cms_store::tariffs::{NewTariff, TariffRow};
use cms_store::teams::Team;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(show, replace, destroy))
}

/// A tariff of a team.
#[derive(Debug, Serialize, ToSchema)]
pub struct TariffBody {
    #[schema(format = "uuid")]
    pub uuid: String,
    pub name: String,
    /// ISO 4217.
    #[schema(example = "EUR")]
    pub currency: String,
    /// OCPI 2.2.1 tariff elements: `price_components` (`type` ENERGY, TIME, FLAT or
    /// PARKING_TIME; `price` excluding VAT, a decimal string; `vat` percent or null;
    /// `step_size`) and optional `restrictions`.
    #[schema(value_type = Vec<Object>)]
    pub elements: Value,
    /// `{excl_vat, incl_vat}`, decimal strings; a session never costs less.
    #[schema(required = true, value_type = Option<Object>)]
    pub min_price: Value,
    /// `{excl_vat, incl_vat}`, decimal strings; a session never costs more.
    #[schema(required = true, value_type = Option<Object>)]
    pub max_price: Value,
    /// 1 when created, one more with each replace: a transaction is priced with the version
    /// in force when its start reached cms.
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

impl TryFrom<TariffRow> for TariffBody {
    type Error = ApiError;

    fn try_from(t: TariffRow) -> Result<Self, ApiError> {
        let rules: Value = serde_json::from_str(&t.body)
            .map_err(|e| ApiError::Internal(format!("tariff {} unreadable: {e}", t.uuid)))?;
        Ok(TariffBody {
            uuid: t.uuid,
            name: t.name,
            currency: t.currency,
            elements: rules["elements"].clone(),
            min_price: rules["min_price"].clone(),
            max_price: rules["max_price"].clone(),
            version: t.version,
            created_at: t.created_at,
            updated_at: t.updated_at,
        })
    }
}

/// The body of a tariff's create and replace.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct TariffRequest {
    #[schema(max_length = 255)]
    name: String,
    /// ISO 4217.
    #[schema(example = "EUR")]
    currency: String,
    /// 1 to 100 OCPI 2.2.1 tariff elements, each with 1 to 10 price components.
    #[schema(value_type = Vec<Object>)]
    elements: Value,
    #[schema(value_type = Option<Object>)]
    min_price: Option<Value>,
    #[schema(value_type = Option<Object>)]
    max_price: Option<Value>,
}

/// Reads and checks a tariff: 422 naming each failing field (`elements.0.price_components.1.price`).
fn read(input: &mut Input) -> Option<NewTariff> {
    let name = input.required_string("name", 255.0);
    let tariff = match cms_tariffs::read_tariff(&input.all_fields()) {
        Ok(tariff) => Some(tariff),
        Err(failures) => {
            for (field, message) in failures {
                input.fail(&field, message);
            }
            None
        }
    };
    let (name, tariff) = (name?, tariff?);
    let body = serde_json::to_string(&tariff).ok()?;
    Some(NewTariff {
        name,
        currency: tariff.currency,
        body,
    })
}

/// The team's tariffs, oldest first, 25 a page.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/tariffs",
    tag = "Tariffs",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("page" = Option<i64>, Query, description = "Page number, from 1"),
    ),
    responses(
        (status = 200, description = "A page of the team's tariffs", body = Page<TariffBody>),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_uuid): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<Page<TariffBody>>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let path = format!("/api/v3/teams/{}/tariffs", team.uuid);
    let fetch = |limit, offset| state.store.tariffs(team.id, limit, offset);
    page_of(&query, &path, fetch, TariffBody::try_from).await
}

/// Add a tariff to a team the caller belongs to.
#[utoipa::path(
    post,
    path = "/api/v3/teams/{team_uuid}/tariffs",
    tag = "Tariffs",
    params(("team_uuid" = String, Path, format = "uuid")),
    request_body = TariffRequest,
    responses(
        (status = 201, description = "The new tariff", body = Data<TariffBody>),
        (status = 422, body = ValidationErrorBody, description = "A field of the body is invalid; the error names it (`elements.0.price_components.1.price`)"),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_uuid): Path<String>,
    mut input: Input,
) -> Result<(StatusCode, Json<Data<TariffBody>>), ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let new = read(&mut input);
    input.finish()?;
    let new = new.ok_or_else(|| ApiError::Internal("a valid tariff without fields".into()))?;
    let tariff = state.store.create_tariff(team.id, &new).await?;
    Ok((StatusCode::CREATED, Json(Data::new(tariff.try_into()?))))
}

/// A tariff of a team the caller belongs to.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/tariffs/{tariff_uuid}",
    tag = "Tariffs",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("tariff_uuid" = String, Path, format = "uuid"),
    ),
    responses(
        (status = 200, body = Data<TariffBody>),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, tariff_uuid)): Path<(String, String)>,
) -> Result<Json<Data<TariffBody>>, ApiError> {
    caller.authorize()?;
    let (_, tariff) = team_tariff(&state, &caller, &team_uuid, &tariff_uuid).await?;
    Ok(Json(Data::new(tariff.try_into()?)))
}

/// Replace a tariff: its next version. Transactions keep the version they started with.
#[utoipa::path(
    put,
    path = "/api/v3/teams/{team_uuid}/tariffs/{tariff_uuid}",
    tag = "Tariffs",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("tariff_uuid" = String, Path, format = "uuid"),
    ),
    request_body = TariffRequest,
    responses(
        (status = 200, body = Data<TariffBody>),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn replace(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, tariff_uuid)): Path<(String, String)>,
    mut input: Input,
) -> Result<Json<Data<TariffBody>>, ApiError> {
    caller.authorize()?;
    let (team, _) = team_tariff(&state, &caller, &team_uuid, &tariff_uuid).await?;
    let new = read(&mut input);
    input.finish()?;
    let new = new.ok_or_else(|| ApiError::Internal("a valid tariff without fields".into()))?;
    let tariff = state
        .store
        .replace_tariff(team.id, &tariff_uuid, &new)
        .await?;
    super::site_roaming::tariff_changed(&state, &tariff_uuid).await?;
    Ok(Json(Data::new(
        tariff.ok_or_else(not_found_tariff)?.try_into()?,
    )))
}

/// Delete a tariff no site prices with: answers `{}`; 409 while a site uses it.
#[utoipa::path(
    delete,
    path = "/api/v3/teams/{team_uuid}/tariffs/{tariff_uuid}",
    tag = "Tariffs",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("tariff_uuid" = String, Path, format = "uuid"),
    ),
    responses(
        (status = 200, description = "Deleted", body = EmptyBody),
        (status = 409, body = ErrorBody, description = "A site prices with the tariff"),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn destroy(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, tariff_uuid)): Path<(String, String)>,
) -> Result<Json<EmptyBody>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    match state.store.delete_tariff(team.id, &tariff_uuid).await {
        Ok(true) => Ok(Json(EmptyBody {})),
        Ok(false) => Err(not_found_tariff()),
        Err(StoreError::Conflict(message)) => Err(ApiError::Conflict(message)),
        // A site or provider took it between the check and the delete (a foreign key said so).
        Err(e) if e.is_refusal() => Err(ApiError::Conflict("The tariff is in use.".into())),
        Err(e) => Err(e.into()),
    }
}

/// The team's tariff, for a member of the team.
async fn team_tariff(
    state: &AppState,
    caller: &Caller,
    team_uuid: &str,
    tariff_uuid: &str,
) -> Result<(Team, TariffRow), ApiError> {
    let find = |team_id| state.store.tariff(team_id, tariff_uuid);
    owned(state, caller, team_uuid, "Tariff", find).await
}

fn not_found_tariff() -> ApiError {
    not_found("Tariff")
}
