//! Invites to a site: the owner team invites an e-mail address; its holder accepts for one of
//! their teams, which then reaches the site as the invite describes (or becomes its owner).

use super::team_access::{AssetAccess, replace_assets, transfer};
use crate::{Quota, Result, Store, flag, format_record_time, now_record_time};
use chrono::{DateTime, SubsecRound, TimeDelta, Utc};
use cms_credentials::{hash_secret, random_token, verify_secret};
use sqlx::Row;

/// How long an invite can be accepted.
pub const INVITE_LIFETIME_DAYS: i64 = 7;
/// Characters of an invite token (from [A-Za-z0-9]).
const INVITE_TOKEN_LENGTH: usize = 40;

/// A new invite to a site.
#[derive(Debug, Clone)]
pub struct NewInvite {
    pub email: String,
    pub transfer_ownership: bool,
    pub data_access: bool,
    /// Record time at which the sensitive-data access ends.
    pub data_access_expires_at: Option<String>,
    pub assets: AssetAccess,
}

/// An invite just made: the plain token exists only here.
#[derive(Debug, Clone)]
pub struct Invite {
    pub id: i64,
    pub email: String,
    pub token: String,
    pub expires_at: DateTime<Utc>,
}

/// What became of an attempt to accept an invite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acceptance {
    /// The team now reaches the site (as the owner, for an ownership transfer).
    Accepted { site_id: i64 },
    /// No pending, unexpired invite of the site has this token.
    InvalidToken,
    /// The invite is for another e-mail address than the accepting user's.
    OtherEmail,
    /// The accepting team already owns the site.
    TeamOwnsSite,
}

impl Store {
    /// Invites `new.email` to a site; the token is returned once and stored hashed.
    pub async fn create_site_invite(
        &self,
        site_id: i64,
        invited_by_user_id: i64,
        new: &NewInvite,
    ) -> Result<Invite> {
        let token = random_token(INVITE_TOKEN_LENGTH);
        let expires_at = (Utc::now() + TimeDelta::days(INVITE_LIFETIME_DAYS)).trunc_subsecs(0);
        let email = new.email.trim().to_lowercase();
        let now = now_record_time();
        let mut tx = self.begin_write().await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO site_invites (site_id, email, token_hash, invited_by_user_id,
                transfer_ownership, data_access, data_access_expires_at, can_access_all_assets,
                expires_at, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING id",
        )
        .bind(site_id)
        .bind(&email)
        .bind(hash_secret(&token))
        .bind(invited_by_user_id)
        .bind(i64::from(new.transfer_ownership))
        .bind(i64::from(new.data_access))
        .bind(&new.data_access_expires_at)
        .bind(i64::from(new.assets == AssetAccess::All))
        .bind(format_record_time(expires_at))
        .bind(&now)
        .fetch_one(&mut *tx)
        .await?;
        if let AssetAccess::Chargers(ids) = &new.assets {
            for charger_id in ids {
                sqlx::query(
                    "INSERT INTO site_invite_assets (invite_id, charger_id) VALUES ($1, $2)
                     ON CONFLICT DO NOTHING",
                )
                .bind(id)
                .bind(charger_id)
                .execute(&mut *tx)
                .await?;
            }
        }
        let team: i64 = sqlx::query_scalar("SELECT team_id FROM sites WHERE id = $1")
            .bind(site_id)
            .fetch_one(&mut *tx)
            .await?;
        self.enforce_quota(&mut tx, Quota::Invites, team).await?;
        tx.commit().await?;
        Ok(Invite {
            id,
            email,
            token,
            expires_at,
        })
    }

    /// Accepts an invite to the site `site_uuid` with its token, for team `team_id` of user
    /// `user_id` (the caller checked the membership): the team gets the access the invite
    /// describes, replacing any it had, or becomes the owner. An invite is used once.
    pub async fn accept_site_invite(
        &self,
        site_uuid: &str,
        token: &str,
        user_id: i64,
        team_id: i64,
    ) -> Result<Acceptance> {
        let now = now_record_time();
        let mut tx = self.begin_write().await?;
        // Tokens are salted hashes: check each pending invite of the site (a handful).
        let pending = sqlx::query(
            "SELECT i.id, i.site_id, i.email, i.token_hash, i.transfer_ownership, i.data_access,
                i.data_access_expires_at, i.can_access_all_assets, s.team_id AS owner_team_id
             FROM site_invites i JOIN sites s ON s.id = i.site_id
             WHERE s.uuid = $1 AND i.accepted_at IS NULL AND i.expires_at > $2",
        )
        .bind(site_uuid)
        .bind(&now)
        .fetch_all(&mut *tx)
        .await?;
        let invite = pending.iter().find(|row| {
            row.try_get::<String, _>("token_hash")
                .is_ok_and(|hash| verify_secret(token, &hash).unwrap_or(false))
        });
        let Some(invite) = invite else {
            return Ok(Acceptance::InvalidToken);
        };
        let user_email: Option<String> =
            sqlx::query_scalar("SELECT email FROM users WHERE id = $1")
                .bind(user_id)
                .fetch_optional(&mut *tx)
                .await?;
        let invite_email: String = invite.try_get("email")?;
        if user_email.is_none_or(|email| !email.eq_ignore_ascii_case(&invite_email)) {
            return Ok(Acceptance::OtherEmail);
        }
        if invite.try_get::<i64, _>("owner_team_id")? == team_id {
            return Ok(Acceptance::TeamOwnsSite);
        }
        let invite_id: i64 = invite.try_get("id")?;
        let site_id: i64 = invite.try_get("site_id")?;
        // Claimed here, so that of two accepting at once only one succeeds.
        let claimed = sqlx::query(
            "UPDATE site_invites SET accepted_at = $2, accepted_by_team_id = $3, updated_at = $2
             WHERE id = $1 AND accepted_at IS NULL",
        )
        .bind(invite_id)
        .bind(&now)
        .bind(team_id)
        .execute(&mut *tx)
        .await?;
        if claimed.rows_affected() != 1 {
            return Ok(Acceptance::InvalidToken);
        }
        if flag(invite, "transfer_ownership")? {
            transfer(&mut tx, site_id, team_id).await?;
        } else {
            let access_id: i64 = sqlx::query_scalar(
                "INSERT INTO site_access (site_id, team_id, sensitive_data,
                    sensitive_data_expires_at, can_access_all_assets, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $6)
                 ON CONFLICT (site_id, team_id) DO UPDATE SET
                    sensitive_data = excluded.sensitive_data,
                    sensitive_data_expires_at = excluded.sensitive_data_expires_at,
                    can_access_all_assets = excluded.can_access_all_assets,
                    updated_at = excluded.updated_at
                 RETURNING id",
            )
            .bind(site_id)
            .bind(team_id)
            .bind(invite.try_get::<i64, _>("data_access")?)
            .bind(invite.try_get::<Option<String>, _>("data_access_expires_at")?)
            .bind(invite.try_get::<i64, _>("can_access_all_assets")?)
            .bind(&now)
            .fetch_one(&mut *tx)
            .await?;
            let listed: Vec<i64> = sqlx::query_scalar(
                "SELECT x.charger_id FROM site_invite_assets x
                 JOIN chargers c ON c.id = x.charger_id AND c.site_id = $2
                 WHERE x.invite_id = $1",
            )
            .bind(invite_id)
            .bind(site_id)
            .fetch_all(&mut *tx)
            .await?;
            let assets = match flag(invite, "can_access_all_assets")? {
                true => AssetAccess::All,
                false => AssetAccess::Chargers(listed),
            };
            replace_assets(&mut tx, access_id, &assets).await?;
        }
        tx.commit().await?;
        Ok(Acceptance::Accepted { site_id })
    }
}
