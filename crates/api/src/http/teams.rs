//! Teams: create one and list one's own (v2, endpoint 3), and the domains a team claims (v3,
//! endpoint 13 and its siblings). A team the caller does not belong to is a 404, as if it did
//! not exist; any member may change a team's domains.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules};
use crate::http::lookup::{not_found, path_number};
use crate::http::schema::{Data, EmptyBody, ValidationErrorBody};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use cms_store::StoreError;
use cms_store::teams::{API_TEAM_TYPES, NewTeam, Team, TeamDomain};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_teams, create_team))
        .routes(routes!(list_domains, add_domain))
        .routes(routes!(delete_domain))
}

/// A team, as the reference shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamBody {
    #[schema(format = "uuid")]
    pub uuid: String,
    pub id: i64,
    pub is_personal_team: bool,
    pub name: String,
    /// `personal` (a user's own team), `operators` (the service operators' team), or the type
    /// chosen at creation: `business`, `installer` or `private`.
    #[serde(rename = "type")]
    pub team_type: String,
    /// The team's e-mail address; null only for the operators' team.
    #[schema(required = true)]
    pub email: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<Team> for TeamBody {
    fn from(t: Team) -> Self {
        TeamBody {
            uuid: t.uuid,
            id: t.id,
            is_personal_team: t.is_personal_team,
            name: t.name,
            team_type: t.team_type,
            email: t.email,
            created_at: t.created_at,
            updated_at: t.updated_at,
        }
    }
}

/// The body of `POST /api/v2/teams`: every field is required.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct NewTeamBody {
    #[schema(max_length = 255)]
    name: String,
    #[schema(format = Email, max_length = 255)]
    email: String,
    #[schema(rename = "type")]
    team_type: NewTeamType,
}

/// The types a team created through the API may have (see `cms_store::teams::API_TEAM_TYPES`):
/// a company that runs chargers, one that installs them for others, a household.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)] // Documents the allowed values.
pub enum NewTeamType {
    Business,
    Installer,
    Private,
}

/// A domain a team claims: users with an e-mail address at it are meant to belong to the team
/// (informational: nobody joins automatically).
#[derive(Debug, Serialize, ToSchema)]
pub struct DomainBody {
    pub id: i64,
    /// Lowercase, e.g. `example.com`.
    pub domain: String,
    #[schema(format = "uuid")]
    pub team_uuid: String,
    pub created_at: String,
    pub updated_at: String,
}

impl DomainBody {
    fn new(domain: TeamDomain, team: &Team) -> Self {
        DomainBody {
            id: domain.id,
            domain: domain.domain,
            team_uuid: team.uuid.clone(),
            created_at: domain.created_at,
            updated_at: domain.updated_at,
        }
    }
}

/// The body of `POST /api/v3/teams/{team_uuid}/domains`.
#[derive(ToSchema)]
#[allow(dead_code)] // Documents the body, which is read with `Input`.
pub struct NewDomainBody {
    /// A DNS name of at least two labels (`example.com`); stored lowercase.
    #[schema(format = Hostname, max_length = 253)]
    domain: String,
}

/// The teams the caller belongs to, oldest first: their personal team among them.
#[utoipa::path(
    get,
    path = "/api/v2/teams",
    tag = "Teams",
    responses(
        (status = 200, description = "The caller's teams", body = Data<Vec<TeamBody>>),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn list_teams(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Data<Vec<TeamBody>>>, ApiError> {
    caller.authorize()?;
    let teams = state.store.teams_of(caller.user_id()).await?;
    Ok(Json(Data::new(
        teams.into_iter().map(TeamBody::from).collect(),
    )))
}

/// Create a team (endpoint 3); the caller becomes its owner.
#[utoipa::path(
    post,
    path = "/api/v2/teams",
    tag = "Teams",
    request_body = NewTeamBody,
    responses(
        (status = 201, description = "The new team", body = Data<TeamBody>),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn create_team(
    State(state): State<AppState>,
    caller: Caller,
    mut input: Input,
) -> Result<(StatusCode, Json<Data<TeamBody>>), ApiError> {
    caller.authorize()?;
    let name = input.required_string("name", 255.0);
    let email = input.email("email", Rules::required().max(255.0)).flatten();
    let team_type = input
        .one_of("type", Rules::required(), &API_TEAM_TYPES)
        .flatten();
    input.finish()?;
    let (Some(name), Some(email), Some(team_type)) = (name, email, team_type) else {
        return Err(ApiError::Internal(
            "validation passed without the team's fields".into(),
        ));
    };
    let new = NewTeam {
        name,
        email,
        team_type,
    };
    let team = state.store.create_team(caller.user_id(), &new).await?;
    Ok((StatusCode::CREATED, Json(Data::new(team.into()))))
}

/// The domains of a team the caller belongs to, oldest first.
#[utoipa::path(
    get,
    path = "/api/v3/teams/{team_uuid}/domains",
    tag = "Teams > Domains",
    params(("team_uuid" = String, Path, format = "uuid")),
    responses(
        (status = 200, description = "The team's domains", body = Data<Vec<DomainBody>>),
    ),
    security(("bearer" = ["teams:read"]), ("oauth2" = ["teams:read"]))
)]
pub async fn list_domains(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_uuid): Path<String>,
) -> Result<Json<Data<Vec<DomainBody>>>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let domains = state.store.team_domains(team.id).await?;
    let data = domains
        .into_iter()
        .map(|d| DomainBody::new(d, &team))
        .collect();
    Ok(Json(Data::new(data)))
}

/// Add a domain to a team the caller belongs to.
#[utoipa::path(
    post,
    path = "/api/v3/teams/{team_uuid}/domains",
    tag = "Teams > Domains",
    params(("team_uuid" = String, Path, format = "uuid")),
    request_body = NewDomainBody,
    responses(
        (status = 201, description = "The new domain", body = Data<DomainBody>),
        (status = 422, body = ValidationErrorBody, description = "A field of the body is invalid: not a domain name, or the team has it already"),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn add_domain(
    State(state): State<AppState>,
    caller: Caller,
    Path(team_uuid): Path<String>,
    mut input: Input,
) -> Result<(StatusCode, Json<Data<DomainBody>>), ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let text = input.string("domain", Rules::required()).flatten();
    let domain = text.and_then(|text| {
        let domain = domain_name(&text);
        if domain.is_none() {
            input.fail("domain", "The domain field must be a valid domain name.");
        }
        domain
    });
    input.finish()?;
    let Some(domain) = domain else {
        return Err(ApiError::Internal(
            "validation passed without a domain".into(),
        ));
    };
    match state.store.add_team_domain(team.id, &domain).await {
        Ok(added) => Ok((
            StatusCode::CREATED,
            Json(Data::new(DomainBody::new(added, &team))),
        )),
        Err(StoreError::Conflict(message)) => Err(ApiError::invalid("domain", message)),
        Err(e) => Err(e.into()),
    }
}

/// Delete a domain of a team (endpoint 13): answers `{}`.
#[utoipa::path(
    delete,
    path = "/api/v3/teams/{team_uuid}/domains/{domain_id}",
    tag = "Teams > Domains",
    params(
        ("team_uuid" = String, Path, format = "uuid"),
        ("domain_id" = i64, Path, description = "The domain's id"),
    ),
    responses(
        (status = 200, description = "Deleted", body = EmptyBody),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn delete_domain(
    State(state): State<AppState>,
    caller: Caller,
    Path((team_uuid, domain_id)): Path<(String, String)>,
) -> Result<Json<EmptyBody>, ApiError> {
    caller.authorize()?;
    let team = member_team(&state, &caller, &team_uuid).await?;
    let domain_id: i64 = path_number(&domain_id, "Domain")?;
    if state.store.delete_team_domain(team.id, domain_id).await? {
        Ok(Json(EmptyBody {}))
    } else {
        Err(not_found("Domain"))
    }
}

/// The team `team_uuid` if the caller belongs to it, else 404.
pub(crate) async fn member_team(
    state: &AppState,
    caller: &Caller,
    team_uuid: &str,
) -> Result<Team, ApiError> {
    state
        .store
        .member_team(caller.user_id(), team_uuid)
        .await?
        .ok_or_else(|| not_found("Team"))
}

/// `text` as a lowercase DNS name, or `None` if it is not one: at least two dot-separated
/// labels of 1–63 letters, digits and inner hyphens, at most 253 characters in all, and a last
/// label that is not all digits (so an IPv4 address is not a domain).
fn domain_name(text: &str) -> Option<String> {
    let domain = text.trim().to_ascii_lowercase();
    let labels: Vec<&str> = domain.split('.').collect();
    let label_ok = |label: &&str| {
        (1..=63).contains(&label.len())
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    let last_is_numeric = labels
        .last()
        .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()));
    (domain.len() <= 253 && labels.len() >= 2 && labels.iter().all(label_ok) && !last_is_numeric)
        .then_some(domain)
}

#[cfg(test)]
mod tests {
    use super::{API_TEAM_TYPES, NewTeamType, domain_name};

    #[test]
    fn the_documented_team_types_are_the_accepted_ones() {
        let schema = <NewTeamType as utoipa::PartialSchema>::schema();
        let schema = serde_json::to_value(schema).expect("a schema serialises");
        assert_eq!(schema["enum"], serde_json::json!(API_TEAM_TYPES));
    }

    #[test]
    fn domain_names_are_dns_names_lowercased() {
        assert_eq!(domain_name("Example.COM").as_deref(), Some("example.com"));
        assert_eq!(
            domain_name("a-b.c9.example.org").as_deref(),
            Some("a-b.c9.example.org")
        );
        let longest = format!(
            "{}.{}.{}.{}",
            "a".repeat(63),
            "b".repeat(63),
            "c".repeat(63),
            "d".repeat(61)
        );
        assert_eq!(longest.len(), 253);
        assert!(domain_name(&longest).is_some());
        for bad in [
            "",
            "nodot",
            "-bad.com",
            "bad-.com",
            "a..b",
            ".example.com",
            "example.com.",
            "exa mple.com",
            "under_score.com",
            "ünï.com",
            "10.0.0.1",
            &format!("{}.com", "a".repeat(64)),
            &format!("{longest}x"),
        ] {
            assert_eq!(domain_name(bad), None, "{bad:?} is not a domain name");
        }
    }
}
