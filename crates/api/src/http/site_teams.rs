//! Sites > Teams: the teams with access to a site and what they may see, and invites.
//!
//! The owner team (role `owner`) has full access. Guest teams (role `guest`) reach the site
//! through an accepted invite: basic access, sensitive data while granted and unexpired, and
//! every charger or a listed few. Only the owner team changes access; a guest may ask for
//! sensitive data. A guest sees the owner and its own teams' access, never other guests'.

mod access;
mod invites;

use crate::http::AppState;
use crate::http::input::{Input, Rules, attribute};
use cms_store::sites::{AssetAccess, TeamAccess};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(access::list))
        .routes(routes!(access::show, access::remove))
        .routes(routes!(access::grant_sensitive, access::revoke_sensitive))
        .routes(routes!(access::request_sensitive))
        .routes(routes!(access::update_assets))
        .routes(routes!(access::transfer_ownership))
        .routes(routes!(invites::invite))
        .routes(routes!(invites::accept))
}

/// A team with access to a site: the team, and its access.
#[derive(Serialize, ToSchema)]
pub struct TeamAccessBody {
    #[schema(format = "uuid")]
    pub uuid: String,
    pub id: i64,
    pub name: String,
    #[serde(rename = "type")]
    pub team_type: String,
    pub email: Option<String>,
    pub is_personal_team: bool,
    pub created_at: String,
    pub updated_at: String,
    /// `owner` (full access) or `guest`.
    pub role: String,
    /// Whether the team may see sensitive data now (granted and not expired).
    pub sensitive_data: bool,
    pub sensitive_data_expires_at: Option<String>,
    /// When the team last asked for sensitive data, until the owner grants it.
    pub sensitive_data_requested_at: Option<String>,
    pub can_access_all_assets: bool,
    /// The chargers the team reaches when `can_access_all_assets` is false.
    pub accessible_assets: Vec<AssetBody>,
}

/// A charger of the site, in an access's asset list.
#[derive(Serialize, ToSchema)]
pub struct AssetBody {
    /// `charger`.
    #[serde(rename = "type")]
    pub asset_type: String,
    #[schema(format = "uuid")]
    pub uuid: String,
}

/// An asset as a request lists it.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct AssetRequest {
    /// `charger`.
    #[schema(rename = "type")]
    asset_type: String,
    /// A charger of the site.
    #[schema(format = "uuid")]
    uuid: String,
}

impl From<TeamAccess> for TeamAccessBody {
    fn from(a: TeamAccess) -> Self {
        TeamAccessBody {
            uuid: a.team.uuid,
            id: a.team.id,
            name: a.team.name,
            team_type: a.team.team_type,
            email: a.team.email,
            is_personal_team: a.team.is_personal_team,
            created_at: a.team.created_at,
            updated_at: a.team.updated_at,
            role: a.role,
            sensitive_data: a.sensitive_data,
            sensitive_data_expires_at: a.sensitive_data_expires_at,
            sensitive_data_requested_at: a.sensitive_data_requested_at,
            can_access_all_assets: a.can_access_all_assets,
            accessible_assets: a
                .accessible_assets
                .into_iter()
                .map(|uuid| AssetBody {
                    asset_type: ASSET_TYPE.into(),
                    uuid,
                })
                .collect(),
        }
    }
}

/// The only kind of asset a site has, so far.
const ASSET_TYPE: &str = "charger";

/// Reads `can_access_all_assets` (with `flag_rules`; absent or null means every asset) and
/// `accessible_assets`, required when the flag is false: a list of `{"type": "charger",
/// "uuid": ...}` naming chargers of the site (`site_chargers`, uuid to id); nulls are ignored.
fn read_assets(
    input: &mut Input,
    flag_rules: Rules,
    site_chargers: &HashMap<String, i64>,
) -> Option<AssetAccess> {
    let all = input.boolean("can_access_all_assets", flag_rules.nullable());
    let listed = input.array("accessible_assets", Rules::optional().nullable());
    let all = match all {
        Some(all) => all.unwrap_or(true),
        // Invalid, or required and absent: the failure is recorded.
        None if input.has("can_access_all_assets") || flag_rules.required => return None,
        None => true,
    };
    if all {
        return Some(AssetAccess::All);
    }
    let required = "The accessible assets field is required when can access all assets is false.";
    let items = match listed {
        Some(items) => items.unwrap_or_default(),
        // Present but not a list: the failure is recorded.
        None if input.has("accessible_assets") => return None,
        None => Vec::new(),
    };
    let mut chargers = Vec::new();
    let mut valid = true;
    for (n, item) in items.iter().enumerate() {
        let field = format!("accessible_assets.{n}");
        match item {
            Value::Null => {}
            Value::Object(asset) => match read_asset(input, &field, asset, site_chargers) {
                Some(id) => chargers.push(id),
                None => valid = false,
            },
            _ => {
                input.fail(
                    &field,
                    format!("The {} field must be an object.", attribute(&field)),
                );
                valid = false;
            }
        }
    }
    if chargers.is_empty() && valid {
        input.fail("accessible_assets", required);
    }
    valid.then_some(AssetAccess::Chargers(chargers))
}

/// One listed asset: its charger's id, or `None` (failure recorded).
fn read_asset(
    input: &mut Input,
    field: &str,
    asset: &serde_json::Map<String, Value>,
    site_chargers: &HashMap<String, i64>,
) -> Option<i64> {
    let mut fields = Input::new(asset.clone());
    let kind = fields.one_of("type", Rules::required(), &[ASSET_TYPE]);
    let uuid = fields.string("uuid", Rules::required()).flatten();
    let charger = uuid
        .as_ref()
        .and_then(|uuid| site_chargers.get(uuid).copied());
    if let Err(crate::http::ApiError::Validation(errors)) = fields.finish() {
        for (key, messages) in errors {
            let nested = format!("{field}.{key}");
            for message in messages {
                // Name the nested field as Laravel does: "The accessible assets.0.uuid ...".
                input.fail(
                    &nested,
                    message.replacen(&attribute(&key), &attribute(&nested), 1),
                );
            }
        }
    }
    if uuid.is_some() && charger.is_none() {
        let nested = format!("{field}.uuid");
        input.fail(
            &nested,
            format!("The selected {} is invalid.", attribute(&nested)),
        );
    }
    kind.and(charger)
}

/// A date field `YYYY-MM-DD` (nullable) that must be after today: the record time of the
/// start of that day (UTC), when access ends.
fn read_expiry(input: &mut Input, field: &str) -> Option<Option<String>> {
    let date = input.date(field, Rules::optional().nullable())?;
    match date {
        Some(date) if date <= chrono::Utc::now().date_naive() => {
            input.fail(
                field,
                format!("The {} field must be a date after today.", attribute(field)),
            );
            None
        }
        Some(date) => Some(Some(format!("{date}T00:00:00.000000Z"))),
        None => Some(None),
    }
}
