//! Sites > Smart Charging: a site's settings (mode, grid limit, CT meter, strategy, limits,
//! priorities) and what its balancer last did. The balancer itself is `crate::control::smart_charging`.

mod request;

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::lookup::{forbidden_unless, owned_site, visible_site};
use crate::http::schema::{Data, ErrorBody};
use axum::Json;
use axum::extract::{Path, State};
use cms_store::Permissions;
use cms_store::smart_charging::balancer::SiteComputation;
use cms_store::smart_charging::{ConnectorLimit, SmartChargingSettings, SmartChargingStatus};
use request::SettingsBody;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(show, update))
        .routes(routes!(status))
}

/// A site's smart-charging settings.
#[derive(Serialize, ToSchema)]
pub struct SmartChargingSettingsBody {
    #[schema(value_type = SmartChargingMode)]
    pub mode: String,
    /// The grid connection's limit per phase, in A; null until set.
    pub grid_limit_amps: Option<f64>,
    /// The `ct_meter` measuring the grid connection (`dynamic`), attached to a charger of the
    /// site.
    #[schema(format = "uuid")]
    pub meter_uuid: Option<String>,
    #[schema(value_type = SmartChargingStrategy)]
    pub strategy: String,
    /// The least a charging connector is given (below it, it is paused).
    pub min_amps: f64,
    /// Kept free under the grid limit.
    pub safety_margin_amps: f64,
    /// Each charger's limit while the meter is quiet (0 pauses them).
    pub fail_safe_amps: f64,
    /// How long the meter may be quiet before the fail-safe applies.
    pub meter_timeout_seconds: i64,
    /// Charger uuid → priority (0 to 100, higher first; 0 for chargers not listed).
    pub priorities: BTreeMap<String, i64>,
    /// When the settings were last saved; null before.
    pub updated_at: Option<String>,
}

/// The settings to save: `mode` is required; a field left out keeps its value.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the request; it is read through `SettingsBody`.
pub struct SmartChargingSettingsRequest {
    mode: SmartChargingMode,
    /// Required for `static` and `dynamic`: a JSON number, > 0 and ≤ 10000; there, at least
    /// `min_amps` + `safety_margin_amps` (room for one charging connector).
    #[schema(maximum = 10000, exclusive_minimum = 0)]
    grid_limit_amps: Option<f64>,
    /// Required for `dynamic`: a `ct_meter` attached to a charger of this site.
    #[schema(format = "uuid")]
    meter_uuid: Option<String>,
    strategy: Option<SmartChargingStrategy>,
    #[schema(minimum = 6, maximum = 80)]
    min_amps: Option<f64>,
    /// Less than the grid limit.
    #[schema(minimum = 0)]
    safety_margin_amps: Option<f64>,
    /// 0, or from `min_amps` to 80; at most the grid limit when one is set.
    #[schema(minimum = 0, maximum = 80)]
    fail_safe_amps: Option<f64>,
    #[schema(minimum = 5, maximum = 3600)]
    meter_timeout_seconds: Option<i64>,
    /// Replaces every priority: uuids of the site's chargers → 0 to 100.
    priorities: Option<BTreeMap<String, i64>>,
}

/// A site's smart-charging mode (see `cms_store::smart_charging::MODES`).
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)] // Documents the allowed values.
pub enum SmartChargingMode {
    Disabled,
    Static,
    Dynamic,
}

/// How the available current is shared (see `cms_store::smart_charging::STRATEGIES`).
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum SmartChargingStrategy {
    Equal,
    Priority,
}

/// `disabled`; `fail_safe` while the meter is quiet; `balancing` while connectors have limits;
/// else `idle`.
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum SmartChargingState {
    Disabled,
    Idle,
    Balancing,
    FailSafe,
}

/// What the balancer last saw and decided for a site, and the limits on its connectors.
#[derive(Serialize, ToSchema)]
pub struct SmartChargingStatusBody {
    #[schema(value_type = SmartChargingMode)]
    pub mode: String,
    pub grid_limit_amps: Option<f64>,
    #[schema(value_type = SmartChargingState)]
    pub state: &'static str,
    /// The balancer's last computation; null before the first.
    pub computed_at: Option<String>,
    /// The grid reading the last computation used; null without one.
    pub meter: Option<GridMeterBody>,
    /// What the site draws besides the chargers.
    pub base_load_amps: Option<f64>,
    /// What was left for the chargers.
    pub available_amps: Option<f64>,
    /// What they were given.
    pub allocated_amps: Option<f64>,
    /// Left under the grid limit (negative: over it).
    pub headroom_amps: Option<f64>,
    /// Since when the meter has been quiet.
    pub fail_safe_since: Option<String>,
    /// The limit last sent to each connector (connector 0: the charger's default for new
    /// transactions), by charger identity and connector.
    pub connectors: Vec<ConnectorLimitBody>,
}

/// The grid reading: the highest phase, and each phase.
#[derive(Serialize, ToSchema)]
pub struct GridMeterBody {
    pub amps: Option<f64>,
    /// `{"L1": 12.5, "L2": 11, "L3": 10}`; null when not known.
    pub phases: Option<BTreeMap<String, f64>>,
    pub measured_at: Option<String>,
}

/// The limit last sent to a connector.
#[derive(Serialize, ToSchema)]
pub struct ConnectorLimitBody {
    #[schema(format = "uuid")]
    pub charger_uuid: String,
    pub identity: String,
    pub connector_id: i64,
    pub limit_amps: f64,
    /// `TxProfile` or `TxDefaultProfile`.
    pub purpose: String,
    pub transaction_id: Option<i64>,
    /// `pending`, `accepted`, `rejected`, `failed` (no answer, or a CALLERROR), ...
    pub status: String,
    pub sent_at: String,
    pub answered_at: Option<String>,
    /// The connector's own current when last computed.
    pub measured_amps: Option<f64>,
    /// Given less than the minimum, so paused.
    pub paused: bool,
    pub paused_since: Option<String>,
}

/// The site's chargers the caller sees, when that is not all of them: a guest limited to some
/// assets is not shown the others' uuids.
async fn charger_filter(
    state: &AppState,
    caller: &Caller,
    site_id: i64,
    permissions: Permissions,
) -> Result<Option<HashSet<String>>, ApiError> {
    if permissions.full {
        return Ok(None);
    }
    let seen = state
        .store
        .site_chargers_seen_by(caller.user_id(), site_id)
        .await?;
    Ok(Some(seen))
}

fn seen(filter: &Option<HashSet<String>>, charger_uuid: &str) -> bool {
    filter
        .as_ref()
        .is_none_or(|seen| seen.contains(charger_uuid))
}

fn settings_body(
    s: SmartChargingSettings,
    filter: &Option<HashSet<String>>,
) -> SmartChargingSettingsBody {
    SmartChargingSettingsBody {
        mode: s.mode,
        grid_limit_amps: s.grid_limit_amps,
        meter_uuid: s.meter_uuid,
        strategy: s.strategy,
        min_amps: s.min_amps,
        safety_margin_amps: s.safety_margin_amps,
        fail_safe_amps: s.fail_safe_amps,
        meter_timeout_seconds: s.meter_timeout_seconds,
        priorities: s
            .priorities
            .into_iter()
            .filter(|(uuid, _)| seen(filter, uuid))
            .collect(),
        updated_at: s.updated_at,
    }
}

fn status_body(
    s: SmartChargingStatus,
    filter: &Option<HashSet<String>>,
) -> SmartChargingStatusBody {
    let state = s.state();
    let (computed_at, c) = match s.computation {
        Some(c) => (Some(c.computed_at.clone()), c),
        None => (None, SiteComputation::default()),
    };
    // The balancer writes the phases as a JSON object; anything else reads as unknown.
    let phases = c
        .meter_phases
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok());
    let meter = (c.meter_amps.is_some() || phases.is_some() || c.meter_measured_at.is_some())
        .then_some(GridMeterBody {
            amps: c.meter_amps,
            phases,
            measured_at: c.meter_measured_at,
        });
    SmartChargingStatusBody {
        mode: s.mode,
        grid_limit_amps: s.grid_limit_amps,
        state,
        computed_at,
        meter,
        base_load_amps: c.base_load_amps,
        available_amps: c.available_amps,
        allocated_amps: c.allocated_amps,
        headroom_amps: c.headroom_amps,
        fail_safe_since: c.fail_safe_since,
        connectors: s
            .limits
            .into_iter()
            .filter(|l| seen(filter, &l.charger_uuid))
            .map(connector_body)
            .collect(),
    }
}

fn connector_body(l: ConnectorLimit) -> ConnectorLimitBody {
    ConnectorLimitBody {
        charger_uuid: l.charger_uuid,
        identity: l.identity,
        connector_id: l.connector_id,
        limit_amps: l.limit_amps,
        purpose: l.purpose,
        transaction_id: l.transaction_id,
        status: l.status,
        sent_at: l.sent_at,
        answered_at: l.answered_at,
        measured_amps: l.measured_amps,
        paused: l.paused_since.is_some(),
        paused_since: l.paused_since,
    }
}

/// A site's smart-charging settings (the defaults until they are first saved).
#[utoipa::path(
    get,
    path = "/api/v3/sites/{site_uuid}/smart-charging",
    tag = "Sites > Smart Charging",
    params(("site_uuid" = String, Path, format = "uuid")),
    responses(
        (status = 200, body = Data<SmartChargingSettingsBody>),
    ),
    security(("bearer" = ["sites:read"]), ("oauth2" = ["sites:read"]))
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(site_uuid): Path<String>,
) -> Result<Json<Data<SmartChargingSettingsBody>>, ApiError> {
    caller.authorize()?;
    let (site_id, permissions) = visible_site(&state, &caller, &site_uuid).await?;
    let settings = state.store.smart_charging_settings(site_id).await?;
    let filter = charger_filter(&state, &caller, site_id, permissions).await?;
    Ok(Json(Data::new(settings_body(settings, &filter))))
}

/// Save a site's smart-charging settings: `mode` and the fields given (the others keep their
/// value). Only the owner team may.
#[utoipa::path(
    put,
    path = "/api/v3/sites/{site_uuid}/smart-charging",
    tag = "Sites > Smart Charging",
    params(("site_uuid" = String, Path, format = "uuid")),
    request_body = SmartChargingSettingsRequest,
    responses(
        (status = 200, description = "The settings saved", body = Data<SmartChargingSettingsBody>),
        (status = 403, body = ErrorBody, description = "A guest of the site, or the token lacks sites:write"),
    ),
    security(("bearer" = ["sites:write"]), ("oauth2" = ["sites:write"]))
)]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Path(site_uuid): Path<String>,
    body: SettingsBody,
) -> Result<Json<Data<SmartChargingSettingsBody>>, ApiError> {
    caller.authorize()?;
    let site_id = owned_site(&state, &caller, &site_uuid).await?;
    let stored = state.store.smart_charging_settings(site_id).await?;
    let settings = body.read(&state, site_id, stored).await?;
    let saved = state
        .store
        .save_smart_charging_settings(site_id, &settings)
        .await?;
    Ok(Json(Data::new(settings_body(saved, &None))))
}

/// What a site's balancer last saw and decided, with the limit last sent to each connector.
#[utoipa::path(
    get,
    path = "/api/v3/sites/{site_uuid}/smart-charging/status",
    tag = "Sites > Smart Charging",
    params(("site_uuid" = String, Path, format = "uuid")),
    responses(
        (status = 200, body = Data<SmartChargingStatusBody>),
        (status = 403, body = ErrorBody, description = "The token lacks sites:read, or the caller may not read the site's sensitive data"),
    ),
    security(("bearer" = ["sites:read"]), ("oauth2" = ["sites:read"]))
)]
pub async fn status(
    State(state): State<AppState>,
    caller: Caller,
    Path(site_uuid): Path<String>,
) -> Result<Json<Data<SmartChargingStatusBody>>, ApiError> {
    caller.authorize()?;
    let (site_id, permissions) = visible_site(&state, &caller, &site_uuid).await?;
    // The status is made of meter readings (the grid's, each connector's): sensitive data.
    forbidden_unless(permissions.sensitive)?;
    let status = state.store.smart_charging_status(site_id).await?;
    let filter = charger_filter(&state, &caller, site_id, permissions).await?;
    Ok(Json(Data::new(status_body(status, &filter))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cms_store::smart_charging::{MODES, STRATEGIES};

    fn documented<T: utoipa::PartialSchema>() -> serde_json::Value {
        let schema = serde_json::to_value(T::schema()).expect("a schema serialises");
        schema["enum"].clone()
    }

    #[test]
    fn the_documented_values_are_the_accepted_ones() {
        assert_eq!(documented::<SmartChargingMode>(), serde_json::json!(MODES));
        assert_eq!(
            documented::<SmartChargingStrategy>(),
            serde_json::json!(STRATEGIES)
        );
        assert_eq!(
            documented::<SmartChargingState>(),
            serde_json::json!(["disabled", "idle", "balancing", "fail_safe"])
        );
    }

    #[test]
    fn the_meter_is_null_without_a_reading_and_bad_phases_read_as_unknown() {
        let status = SmartChargingStatus {
            mode: "static".into(),
            ..Default::default()
        };
        let body = status_body(status.clone(), &None);
        assert!(body.meter.is_none());
        assert_eq!(body.state, "idle");
        let computed = |amps: f64, phases: &str| {
            Some(SiteComputation {
                computed_at: "2026-02-10T09:00:00.000000Z".into(),
                meter_amps: Some(amps),
                meter_phases: Some(phases.into()),
                ..Default::default()
            })
        };
        let read = SmartChargingStatus {
            computation: computed(12.5, r#"{"L1":12.5,"L2":11,"L3":10}"#),
            ..status.clone()
        };
        let meter = status_body(read, &None).meter.expect("a meter");
        let phases = meter.phases.expect("phases");
        assert_eq!(phases["L2"], 11.0);
        let bad = SmartChargingStatus {
            computation: computed(3.0, "[1,2]"),
            ..status
        };
        let meter = status_body(bad, &None).meter.expect("a meter");
        assert!(meter.phases.is_none());
    }
}
