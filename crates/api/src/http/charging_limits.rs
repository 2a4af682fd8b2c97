//! A 2.0.1 station's own word on its smart charging (docs/smart-charging.md, "What a 2.0.1
//! station tells"): the external limits on its EVSEs, its EVs' needs and schedules, and the
//! profiles its latest GetChargingProfiles reported. Read from the store, no call to the
//! station; empty lists for a 1.6 charger, which tells none of it.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::lookup::visible_charger;
use crate::http::schema::{Data, ErrorBody};
use axum::Json;
use axum::extract::{Path, State};
use cms_store::smart_charging::station_reports::{EvNeeds, ExternalLimit, ReportedProfile};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(show))
}

#[derive(Serialize, ToSchema)]
pub struct ChargingLimitsBody {
    #[schema(format = "uuid")]
    charger_uuid: String,
    identity: String,
    /// NotifyChargingLimit's limits in force (until a ClearedChargingLimit), by EVSE and source.
    external_limits: Vec<ExternalLimitBody>,
    /// NotifyEVChargingNeeds and NotifyEVChargingSchedule, the latest of each per EVSE.
    ev_charging_needs: Vec<EvNeedsBody>,
    /// What the station's latest GetChargingProfiles reported (ReportChargingProfiles).
    reported_profiles: Vec<ReportedProfileBody>,
}

#[derive(Serialize, ToSchema)]
pub struct ExternalLimitBody {
    /// The EVSE; 0 for the whole station.
    evse_id: i64,
    /// `chargingLimitSource`: EMS, Other, SO, CSO.
    source: String,
    grid_critical: Option<bool>,
    /// The lowest limit in A of its schedules, which the site balancer respects; null when
    /// it has none in A.
    limit_amps: Option<f64>,
    /// The station's `chargingSchedule` array, as it sent it.
    #[schema(value_type = Option<Vec<Object>>)]
    charging_schedule: Option<Value>,
    reported_at: String,
}

#[derive(Serialize, ToSchema)]
pub struct EvNeedsBody {
    evse_id: i64,
    /// The station's `chargingNeeds`, as it sent it.
    #[schema(value_type = Option<Object>)]
    charging_needs: Option<Value>,
    max_schedule_tuples: Option<i64>,
    needs_at: Option<String>,
    /// The EV's `chargingSchedule` (NotifyEVChargingSchedule), from `schedule_time_base`.
    #[schema(value_type = Option<Object>)]
    charging_schedule: Option<Value>,
    schedule_time_base: Option<String>,
    schedule_at: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub struct ReportedProfileBody {
    /// The GetChargingProfiles' `requestId` it answered.
    request_id: i64,
    evse_id: i64,
    source: String,
    /// The station's `chargingProfile`, as it sent it.
    #[schema(value_type = Object)]
    charging_profile: Value,
    reported_at: String,
}

fn json(text: Option<&str>) -> Option<Value> {
    text.and_then(|t| serde_json::from_str(t).ok())
}

/// What a charger told of its smart charging; a caller who sees the charger reads it.
#[utoipa::path(
    get,
    path = "/api/v3/chargers/{charger_uuid}/charging-limits",
    tag = "Chargers",
    params(("charger_uuid" = String, Path)),
    responses(
        (status = 200, body = Data<ChargingLimitsBody>),
        (status = 403, body = ErrorBody, description = "The token lacks chargers:read"),
        (status = 404, body = ErrorBody, description = "Not a charger the caller sees"),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(charger_uuid): Path<String>,
) -> Result<Json<Data<ChargingLimitsBody>>, ApiError> {
    caller.authorize()?;
    let charger = visible_charger(&state, &caller, &charger_uuid).await?;
    let reports = state.store.charging_reports(charger.id).await?;
    let limit = |l: ExternalLimit| ExternalLimitBody {
        charging_schedule: json(l.charging_schedule.as_deref()),
        evse_id: l.evse_id,
        source: l.source,
        grid_critical: l.grid_critical,
        limit_amps: l.limit_amps,
        reported_at: l.reported_at,
    };
    let needs = |n: EvNeeds| EvNeedsBody {
        charging_needs: json(n.charging_needs.as_deref()),
        charging_schedule: json(n.charging_schedule.as_deref()),
        evse_id: n.evse_id,
        max_schedule_tuples: n.max_schedule_tuples,
        needs_at: n.needs_at,
        schedule_time_base: n.schedule_time_base,
        schedule_at: n.schedule_at,
    };
    let profile = |p: ReportedProfile| ReportedProfileBody {
        charging_profile: json(Some(&p.charging_profile)).unwrap_or(Value::Null),
        request_id: p.request_id,
        evse_id: p.evse_id,
        source: p.source,
        reported_at: p.reported_at,
    };
    Ok(Json(Data::new(ChargingLimitsBody {
        charger_uuid: charger.uuid.clone(),
        identity: charger.identity.clone(),
        external_limits: reports.limits.into_iter().map(limit).collect(),
        ev_charging_needs: reports.ev_needs.into_iter().map(needs).collect(),
        reported_profiles: reports.profiles.into_iter().map(profile).collect(),
    })))
}
