//! The fleet at a glance (docs/api.md "Fleet overview"): `GET /api/v3/overview`, counted from
//! memory (the chargers the caller sees, crate::http::access; their state, crate::ingest::
//! fleet; the power of their sessions, the latest-value cache), never a scan of the store per
//! request; and the filters the chargers lists and the overview share, applied to the same.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules};
use crate::ingest::fleet::{FleetCharger, power_w};
use axum::Json;
use axum::extract::{Query, State};
use cms_store::access_log::VisibleCharger;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(overview))
}

/// The most stale chargers an overview lists (the count is of all).
const STALE_LISTED: usize = 50;

/// What the caller's chargers say now.
#[derive(Serialize, ToSchema)]
pub struct Overview {
    pub chargers: ChargerCounts,
    /// Connectors by their last reported status (`Available`, `Charging`, `Faulted`, ...).
    pub connectors: BTreeMap<String, i64>,
    pub sessions: SessionCounts,
    /// Online chargers silent for longer than their heartbeat interval and half of it again
    /// (at least a second), oldest first, at most 50.
    pub stale: Vec<StaleCharger>,
    /// How many chargers are stale in all.
    pub stale_total: i64,
}

#[derive(Serialize, ToSchema)]
pub struct ChargerCounts {
    pub total: i64,
    pub online: i64,
    /// Not connected now, never-seen chargers included.
    pub offline: i64,
    /// The charger, or one of its connectors, reports `Faulted` (online or not).
    pub faulted: i64,
}

#[derive(Serialize, ToSchema)]
pub struct SessionCounts {
    /// Open transactions.
    pub active: i64,
    /// The power the open transactions' connectors draw now (their latest
    /// `Power.Active.Import`), in W.
    pub power_w: f64,
}

#[derive(Serialize, ToSchema)]
pub struct StaleCharger {
    #[schema(format = "uuid")]
    pub uuid: String,
    pub identity: String,
    /// When cms last received a message from it.
    #[schema(required = true)]
    pub last_message_at: Option<String>,
    /// Seconds.
    pub heartbeat_interval: u64,
}

#[derive(Serialize, ToSchema)]
pub struct OverviewAnswer {
    data: Overview,
}

/// The fleet at a glance: the chargers the caller sees, counted.
#[utoipa::path(
    get,
    path = "/api/v3/overview",
    tag = "Chargers",
    params(("filter[site_uuid]" = Option<String>, Query, format = "uuid",
        description = "Only this site's chargers")),
    responses(
        (status = 200, description = "The counts", body = OverviewAnswer),
        (status = 422, body = crate::http::schema::ValidationErrorBody,
            description = "`filter[site_uuid]` is invalid, or another filter is given"),
    ),
    security(("bearer" = ["chargers:read"]), ("oauth2" = ["chargers:read"]))
)]
pub async fn overview(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<Json<OverviewAnswer>, ApiError> {
    caller.authorize()?;
    let filter = FleetFilter::read(&state, &caller, &query, &["site_uuid"]).await?;
    let visible = state
        .access
        .visible_chargers(&state.store, caller.user_id())
        .await?;
    let stale_before = stale_before(&state);
    let mut o = Overview {
        chargers: ChargerCounts {
            total: 0,
            online: 0,
            offline: 0,
            faulted: 0,
        },
        connectors: BTreeMap::new(),
        sessions: SessionCounts {
            active: 0,
            power_w: 0.0,
        },
        stale: Vec::new(),
        stale_total: 0,
    };
    let mut connectors: HashMap<String, i64> = HashMap::new();
    let mut stale = Vec::new();
    for charger in &visible.chargers {
        state.fleet.with(charger.id, |held| {
            if !filter.admits(charger, held) {
                return;
            }
            o.chargers.total += 1;
            let Some(held) = held else {
                o.chargers.offline += 1;
                return;
            };
            let row = &held.row;
            if row.online {
                o.chargers.online += 1;
                if row.last_message_at.as_deref() < Some(stale_before.as_str()) {
                    stale.push(StaleCharger {
                        uuid: row.uuid.clone(),
                        identity: row.identity.clone(),
                        last_message_at: row.last_message_at.clone(),
                        heartbeat_interval: state.fleet.heartbeat_interval.as_secs(),
                    });
                }
            } else {
                o.chargers.offline += 1;
            }
            if held.faulted() {
                o.chargers.faulted += 1;
            }
            for (_, status) in &row.connectors {
                match connectors.get_mut(status) {
                    Some(n) => *n += 1,
                    None => {
                        connectors.insert(status.clone(), 1);
                    }
                }
            }
            o.sessions.active += row.active.len() as i64;
            for connector in &row.active {
                let reading = state.cache.get(&row.identity, *connector as u32);
                let power = reading.and_then(|r| power_w(&r.meter_value));
                o.sessions.power_w += power.unwrap_or(0.0);
            }
        });
    }
    o.connectors = connectors.into_iter().collect();
    o.stale_total = stale.len() as i64;
    stale.sort_by(|a, b| a.last_message_at.cmp(&b.last_message_at));
    stale.truncate(STALE_LISTED);
    o.stale = stale;
    Ok(Json(OverviewAnswer { data: o }))
}

/// Online chargers whose last message is older than this (record time) are stale.
fn stale_before(state: &AppState) -> String {
    let after = chrono::Duration::from_std(state.fleet.stale_after()).unwrap_or_default();
    cms_store::format_record_time(chrono::Utc::now() - after)
}

/// A charger's status as the lists filter it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum StatusFilter {
    Online,
    Offline,
    Faulted,
}

/// The filters of the chargers lists (`filter[search]`, `filter[site_uuid]`,
/// `filter[status]`, `filter[ocpp_version]`) and of the overview (the site alone).
#[derive(Default)]
pub(crate) struct FleetFilter {
    /// Lower case.
    search: Option<String>,
    /// `Some(None)`: a site the caller does not reach, which no charger of theirs is in.
    site: Option<Option<i64>>,
    status: Option<StatusFilter>,
    ocpp_version: Option<String>,
}

impl FleetFilter {
    /// The `filter[...]` parameters of `query` among `keys`; a bad value, or another filter,
    /// is the reference's 422 under `filter.<key>`.
    pub(crate) async fn read(
        state: &AppState,
        caller: &Caller,
        query: &[(String, String)],
        keys: &[&str],
    ) -> Result<FleetFilter, ApiError> {
        let mut fields = Map::new();
        for (key, value) in query {
            if let Some(name) = key
                .strip_prefix("filter[")
                .and_then(|k| k.strip_suffix(']'))
            {
                fields.insert(format!("filter.{name}"), Value::String(value.clone()));
            }
        }
        let unknown: Vec<String> = fields
            .keys()
            .filter(|k| !keys.iter().any(|known| k[7..] == **known))
            .cloned()
            .collect();
        let mut input = Input::new(fields);
        for field in unknown {
            let message = format!(
                "The {} field is prohibited.",
                crate::http::input::attribute(&field)
            );
            input.fail(&field, message);
        }
        let optional = Rules::optional().nullable();
        let search = input.string("filter.search", optional.max(255.0)).flatten();
        let site_uuid = input.string("filter.site_uuid", optional).flatten();
        if let Some(uuid) = &site_uuid
            && uuid::Uuid::try_parse(uuid).is_err()
        {
            let field = crate::http::input::attribute("filter.site_uuid");
            input.fail(
                "filter.site_uuid",
                format!("The {field} field must be a valid UUID."),
            );
        }
        let status = input
            .one_of("filter.status", optional, &["online", "offline", "faulted"])
            .flatten();
        let ocpp_version = input
            .one_of("filter.ocpp_version", optional, &["1.6", "2.0.1"])
            .flatten();
        input.finish()?;
        let site = match site_uuid {
            Some(uuid) => {
                let uuid = uuid.to_ascii_lowercase();
                let access = state.access.site(&state.store, caller.user_id(), &uuid);
                Some(access.await?.map(|a| a.id))
            }
            None => None,
        };
        Ok(FleetFilter {
            search: search.map(|s| s.to_lowercase()),
            site,
            status: status.map(|s| match s.as_str() {
                "online" => StatusFilter::Online,
                "offline" => StatusFilter::Offline,
                _ => StatusFilter::Faulted,
            }),
            ocpp_version,
        })
    }

    /// Whether `charger` (as the caller sees it, with its state held, if any) passes.
    pub(crate) fn admits(&self, charger: &VisibleCharger, held: Option<&FleetCharger>) -> bool {
        if let Some(site) = self.site
            && site != Some(charger.site_id)
        {
            return false;
        }
        let online = held.is_some_and(|h| h.row.online);
        match self.status {
            Some(StatusFilter::Online) if !online => return false,
            Some(StatusFilter::Offline) if online => return false,
            Some(StatusFilter::Faulted) if !held.is_some_and(FleetCharger::faulted) => {
                return false;
            }
            _ => {}
        }
        if let Some(version) = &self.ocpp_version
            && held.and_then(|h| h.row.ocpp_version.as_ref()) != Some(version)
        {
            return false;
        }
        if let Some(search) = &self.search
            && !held.is_some_and(|h| h.found(search))
        {
            return false;
        }
        true
    }

    /// Whether any filter is given.
    pub(crate) fn is_empty(&self) -> bool {
        self.search.is_none()
            && self.site.is_none()
            && self.status.is_none()
            && self.ocpp_version.is_none()
    }
}
