//! Invites to a site: the owner team invites an e-mail address (endpoint 9), and the holder of
//! that address accepts for one of their teams. No e-mail is sent: the owner passes on the
//! link the answer carries. The token is a credential, shown once and stored hashed.

use super::access::{AccessAnswer, current};
use super::{AssetRequest, TeamAccessBody, read_assets, read_expiry};
use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules};
use crate::http::lookup::owned_site;
use crate::http::schema::{ErrorBody, ValidationErrorBody};
use crate::http::sites::read_acting_team;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::header::HOST;
use axum::http::{HeaderMap, StatusCode};
use cms_store::sites::{Acceptance, NewInvite};
use serde::Serialize;
use utoipa::ToSchema;

/// An invite (endpoint 9).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct InviteRequest {
    #[schema(format = Email, max_length = 255)]
    email: String,
    /// The accepting team becomes the site's owner.
    transfer_ownership: Option<bool>,
    /// The accepting team may see sensitive data.
    data_access: Option<bool>,
    /// `YYYY-MM-DD`, after today: sensitive access ends at the start of that day (UTC).
    #[schema(format = Date)]
    data_access_expires_at: Option<String>,
    /// Absent or null: every charger of the site.
    can_access_all_assets: Option<bool>,
    /// Required when `can_access_all_assets` is false; null entries are ignored.
    accessible_assets: Option<Vec<Option<AssetRequest>>>,
}

/// The acceptance of an invite.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct AcceptInviteRequest {
    /// The invite's token.
    token: String,
    /// The team that gets the access, one the caller belongs to; default: the caller's
    /// personal team.
    #[schema(format = "uuid")]
    team_uuid: Option<String>,
}

/// A new invite and the links that accept it.
#[derive(Serialize, ToSchema)]
pub struct InviteCreatedBody {
    pub message: String,
    pub invite: InviteBody,
    /// The token again, for clients that read only this.
    pub invite_token: String,
    pub invite_links: InviteLinksBody,
}

#[derive(Serialize, ToSchema)]
pub struct InviteBody {
    pub id: i64,
    pub email: String,
    /// Shown only here.
    pub token: String,
    /// ISO 8601 UTC, whole seconds: `2026-11-28T10:00:00Z`.
    pub expires_at: String,
}

#[derive(Serialize, ToSchema)]
pub struct InviteLinksBody {
    /// `http://HOST/invites/accept?site=...&email=...&token=...`, on the host the request named.
    pub web: String,
    /// `cms://invites/accept?site=...&token=...`, for the app.
    pub deep_link: String,
}

/// Invite an e-mail address to a site (endpoint 9), with the access its team will get. Only
/// the owner team may.
#[utoipa::path(
    post,
    path = "/api/v3/sites/{site_uuid}/teams/invite",
    tag = "Sites > Teams",
    params(("site_uuid" = String, Path)),
    request_body = InviteRequest,
    responses(
        (status = 201, body = InviteCreatedBody),
        (status = 403, body = ErrorBody, description = "A guest of the site, or the token lacks sites:write"),
    ),
    security(("bearer" = ["sites:write"]), ("oauth2" = ["sites:write"]))
)]
pub async fn invite(
    State(state): State<AppState>,
    caller: Caller,
    Path(site_uuid): Path<String>,
    headers: HeaderMap,
    mut input: Input,
) -> Result<(StatusCode, Json<InviteCreatedBody>), ApiError> {
    caller.authorize()?;
    let site_id = owned_site(&state, &caller, &site_uuid).await?;
    let email = input.email("email", Rules::required().max(255.0)).flatten();
    let mut flag = |field: &str| {
        let rules = Rules::optional().nullable();
        input.boolean(field, rules).flatten().unwrap_or(false)
    };
    let transfer_ownership = flag("transfer_ownership");
    let data_access = flag("data_access");
    let data_access_expires_at = read_expiry(&mut input, "data_access_expires_at").flatten();
    let chargers = state.store.site_charger_ids(site_id).await?;
    let assets = read_assets(&mut input, Rules::optional(), &chargers);
    input.finish()?;
    let (Some(email), Some(assets)) = (email, assets) else {
        return Err(ApiError::Internal("a valid invite was not read".into()));
    };
    let new = NewInvite {
        email,
        transfer_ownership,
        data_access,
        data_access_expires_at,
        assets,
    };
    let invite = state
        .store
        .create_site_invite(site_id, caller.user_id(), &new)
        .await?;
    let token = &invite.token;
    let web = format!(
        "{}/invites/accept?site={site_uuid}&email={}&token={token}",
        web_base(&headers),
        query_escape(&invite.email)
    );
    let deep_link = format!("cms://invites/accept?site={site_uuid}&token={token}");
    let body = InviteCreatedBody {
        message: "The invite was created. Send its link to the invitee.".into(),
        invite_token: invite.token.clone(),
        invite_links: InviteLinksBody { web, deep_link },
        invite: InviteBody {
            id: invite.id,
            email: invite.email,
            token: invite.token,
            expires_at: invite.expires_at.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        },
    };
    Ok((StatusCode::CREATED, Json(body)))
}

/// Accept an invite to a site for one of the caller's teams, which gets the access the invite
/// describes (or becomes the owner). The caller's e-mail address must be the invited one.
#[utoipa::path(
    post,
    path = "/api/v3/sites/{site_uuid}/teams/invite/accept",
    tag = "Sites > Teams",
    params(("site_uuid" = String, Path)),
    request_body = AcceptInviteRequest,
    responses(
        (status = 200, description = "The team's access", body = crate::http::schema::Data<TeamAccessBody>),
        (status = 403, body = ErrorBody, description = "The invite is for another e-mail address, or the token lacks teams:write"),
        (status = 422, body = ValidationErrorBody, description = "A field of the body is invalid: an invalid, used or expired token, or not the caller's team"),
    ),
    security(("bearer" = ["teams:write"]), ("oauth2" = ["teams:write"]))
)]
pub async fn accept(
    State(state): State<AppState>,
    caller: Caller,
    Path(site_uuid): Path<String>,
    mut input: Input,
) -> AccessAnswer {
    caller.authorize()?;
    let token = input
        .string("token", Rules::required().max(255.0))
        .flatten();
    let team = read_acting_team(&state, &caller, &mut input).await?;
    input.finish()?;
    let (Some(token), Some(team)) = (token, team) else {
        return Err(ApiError::Internal("a valid acceptance was not read".into()));
    };
    let outcome = state
        .store
        .accept_site_invite(&site_uuid, &token, caller.user_id(), team.id)
        .await?;
    match outcome {
        Acceptance::Accepted { site_id } => current(&state, site_id, &team.uuid).await,
        Acceptance::InvalidToken => {
            Err(ApiError::invalid("token", "The selected token is invalid."))
        }
        Acceptance::OtherEmail => Err(ApiError::Forbidden),
        Acceptance::TeamOwnsSite => Err(ApiError::invalid(
            "team_uuid",
            "The team already owns the site.",
        )),
    }
}

/// `http://HOST` of the request (`https` behind a proxy that says so), where the web app that
/// accepts invites is served.
fn web_base(headers: &HeaderMap) -> String {
    let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let host = header(HOST.as_str())
        .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_graphic() && c != '/'))
        .unwrap_or("localhost");
    let scheme = match header("x-forwarded-proto") {
        Some("https") => "https",
        _ => "http",
    };
    format!("{scheme}://{host}")
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
fn query_escape(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e_mail_addresses_are_escaped_in_links() {
        assert_eq!(query_escape("a+b@x.nl"), "a%2Bb%40x.nl");
    }

    #[test]
    fn links_use_the_requested_host() {
        let mut headers = HeaderMap::new();
        assert_eq!(web_base(&headers), "http://localhost");
        headers.insert(HOST, "cms.example.com:8080".parse().unwrap());
        headers.insert("x-forwarded-proto", "https".parse().unwrap());
        assert_eq!(web_base(&headers), "https://cms.example.com:8080");
    }
}
