//! Users, their teams and passwords, and authentication by personal access token.

use crate::tokens::LAST_USED_PRECISION_SECONDS;
use crate::{Result, Store, format_record_time, now_record_time};
use chrono::{Duration, Utc};
use cms_credentials::hash_password;
use sqlx::Row;

/// The team that owns what the command line creates without naming a site: every user made by
/// `cms token create` is a member, so the operator of a `cms up` sees its chargers.
pub const OPERATORS_TEAM: &str = "Operators";

/// A named permission a token carries. `*` grants them all. Every endpoint names the scope it
/// needs; a token without it gets a 403.
pub struct Scope;

impl Scope {
    pub const ALL: &'static str = "*";
    pub const CHARGERS_READ: &'static str = "chargers:read";
    pub const CHARGERS_WRITE: &'static str = "chargers:write";
    pub const METER_VALUES_READ: &'static str = "meter-values:read";
    pub const TRANSACTIONS_READ: &'static str = "transactions:read";
    pub const SITES_READ: &'static str = "sites:read";
    pub const SITES_WRITE: &'static str = "sites:write";
    pub const TEAMS_READ: &'static str = "teams:read";
    pub const TEAMS_WRITE: &'static str = "teams:write";
    pub const METERS_READ: &'static str = "meters:read";
    pub const METERS_WRITE: &'static str = "meters:write";
    pub const TOKENS_READ: &'static str = "tokens:read";
    pub const TOKENS_WRITE: &'static str = "tokens:write";
    /// The platform operator's: effective only for members of the operators' team.
    pub const LICENSES_WRITE: &'static str = "licenses:write";

    /// Every scope a token may be given, with what it allows.
    pub const DESCRIBED: [(&'static str, &'static str); 14] = [
        (Self::ALL, "Everything the user may do"),
        (
            Self::CHARGERS_READ,
            "Read chargers, their connectors and proxy servers",
        ),
        (
            Self::CHARGERS_WRITE,
            "Register chargers, update connectors and proxy servers",
        ),
        (
            Self::METER_VALUES_READ,
            "Read connectors' latest meter values",
        ),
        (Self::TRANSACTIONS_READ, "Read charging transactions"),
        (
            Self::SITES_READ,
            "Read sites and the teams with access to them",
        ),
        (
            Self::SITES_WRITE,
            "Create, update and delete sites; manage site access and invites",
        ),
        (Self::TEAMS_READ, "Read teams, their domains and id tags"),
        (
            Self::TEAMS_WRITE,
            "Create teams, manage their domains and id tags, accept invites",
        ),
        (Self::METERS_READ, "Read meters"),
        (Self::METERS_WRITE, "Create meters"),
        (
            Self::TOKENS_READ,
            "List the user's personal access tokens and authorized applications",
        ),
        (
            Self::TOKENS_WRITE,
            "Create, regenerate and revoke the user's personal access tokens; revoke authorized \
             applications",
        ),
        (
            Self::LICENSES_WRITE,
            "Grant and withdraw chargers' licences (members of the platform operators' team only)",
        ),
    ];

    /// Whether `name` is a scope.
    pub fn is_known(name: &str) -> bool {
        Self::DESCRIBED.iter().any(|(known, _)| *known == name)
    }

    /// The names of every scope, for messages.
    pub fn names() -> Vec<&'static str> {
        Self::DESCRIBED.iter().map(|(name, _)| *name).collect()
    }
}

#[derive(Debug, Clone)]
pub struct User {
    pub id: i64,
    pub uuid: String,
    pub email: String,
    pub personal_team_id: i64,
}

/// Who a valid bearer token speaks for.
#[derive(Debug, Clone)]
pub struct TokenOwner {
    pub user_id: i64,
    /// The user's e-mail (it never changes; who asked for an action is recorded with it).
    pub email: Option<String>,
    /// The id of the personal access token, or of the OAuth access token.
    pub token_id: i64,
    pub scopes: Vec<String>,
}

impl TokenOwner {
    pub fn allows(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == Scope::ALL || s == scope)
    }

    /// Whether this token holds every one of `scopes` (any, with `*`): what it takes to act on
    /// another credential carrying them, so that no token reaches one wider than itself.
    pub fn covers(&self, scopes: &[String]) -> bool {
        scopes.iter().all(|scope| self.allows(scope))
    }
}

impl Store {
    /// The user with this e-mail, created with a personal team (and operator membership) when
    /// absent.
    pub async fn ensure_user(&self, email: &str) -> Result<User> {
        self.ensure_user_in(email, true).await
    }

    /// The user with this e-mail, created with a personal team when absent; a new user joins the
    /// operators' team (which owns the chargers the command line registers) when `operator`.
    pub async fn ensure_user_in(&self, email: &str, operator: bool) -> Result<User> {
        let email = email.trim().to_lowercase();
        let mut tx = self.begin_write().await?;
        let existing = sqlx::query(
            "SELECT u.id, u.uuid, t.id AS team_id FROM users u
             JOIN teams t ON t.owner_user_id = u.id AND t.is_personal_team = 1
             WHERE u.email = $1",
        )
        .bind(&email)
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(row) = existing {
            return Ok(User {
                id: row.get("id"),
                uuid: row.get("uuid"),
                email,
                personal_team_id: row.get("team_id"),
            });
        }
        let now = now_record_time();
        let name = email.split('@').next().unwrap_or(&email).to_string();
        let uuid = uuid::Uuid::new_v4().to_string();
        let user_id: i64 = sqlx::query_scalar(
            "INSERT INTO users (uuid, name, email, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(&uuid)
        .bind(&name)
        .bind(&email)
        .bind(&now)
        .bind(&now)
        .fetch_one(&mut *tx)
        .await?;
        let team_id: i64 = sqlx::query_scalar(
            "INSERT INTO teams (uuid, owner_user_id, name, type, email, is_personal_team, created_at, updated_at)
             VALUES ($1, $2, $3, 'personal', $4, 1, $5, $6) RETURNING id",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(user_id)
        .bind(format!("{name}'s Team"))
        .bind(&email)
        .bind(&now)
        .bind(&now)
        .fetch_one(&mut *tx)
        .await?;
        let mut memberships = vec![(team_id, "owner")];
        if operator {
            memberships.push((operators_team(&mut tx).await?, "operator"));
        }
        for (team, role) in memberships {
            sqlx::query("INSERT INTO team_user (team_id, user_id, role) VALUES ($1, $2, $3)")
                .bind(team)
                .bind(user_id)
                .bind(role)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(User {
            id: user_id,
            uuid,
            email,
            personal_team_id: team_id,
        })
    }

    /// Mints a personal access token; the plain token is returned once and stored only hashed.
    /// Its form is `<id>|<40 random characters>`, as Laravel clients know it.
    pub async fn create_token(
        &self,
        user_id: i64,
        name: &str,
        scopes: &[String],
    ) -> Result<String> {
        let (_, plain) = self
            .create_personal_access_token(user_id, name, scopes)
            .await?;
        Ok(plain)
    }

    /// Records that token `id` was used now, unless it was already recorded within the last
    /// [`LAST_USED_PRECISION_SECONDS`]. A failure is only logged: the request goes on.
    pub async fn note_token_use(&self, id: i64, last_used_at: Option<&str>) {
        let now = Utc::now();
        let stale = format_record_time(now - Duration::seconds(LAST_USED_PRECISION_SECONDS));
        if last_used_at.is_some_and(|used| used > stale.as_str()) {
            return;
        }
        let written =
            sqlx::query("UPDATE personal_access_tokens SET last_used_at = $1 WHERE id = $2")
                .bind(format_record_time(now))
                .bind(id)
                .execute(self.db())
                .await;
        if let Err(e) = written {
            tracing::warn!(token_id = id, error = %e, "cannot record when a token was last used");
        }
    }

    /// The user with this e-mail, if there is one.
    pub async fn user_by_email(&self, email: &str) -> Result<Option<User>> {
        let row = sqlx::query(
            "SELECT u.id, u.uuid, u.email, t.id AS team_id FROM users u
             JOIN teams t ON t.owner_user_id = u.id AND t.is_personal_team = 1
             WHERE u.email = $1",
        )
        .bind(email.trim().to_lowercase())
        .fetch_optional(self.db())
        .await?;
        Ok(row.map(|row| User {
            id: row.get("id"),
            uuid: row.get("uuid"),
            email: row.get("email"),
            personal_team_id: row.get("team_id"),
        }))
    }

    /// Sets the password the user logs in with (to approve OAuth clients), and their display
    /// name when given.
    pub async fn set_user_login(
        &self,
        user_id: i64,
        name: Option<&str>,
        password: &str,
    ) -> Result<()> {
        sqlx::query(
            "UPDATE users SET password_hash = $1, name = COALESCE($2, name), updated_at = $3
             WHERE id = $4",
        )
        .bind(hash_password(password))
        .bind(name)
        .bind(now_record_time())
        .bind(user_id)
        .execute(self.db())
        .await?;
        Ok(())
    }

    /// The user with this e-mail and password; `None` when either is wrong, or the user has no
    /// password.
    pub async fn user_with_password(&self, email: &str, password: &str) -> Result<Option<User>> {
        let stored: Option<Option<String>> =
            sqlx::query_scalar("SELECT password_hash FROM users WHERE email = $1")
                .bind(email.trim().to_lowercase())
                .fetch_optional(self.db())
                .await?;
        // The same work whether or not the user exists, so that the answer's timing does not
        // tell which e-mails have accounts; off the async workers, one check per core at a time.
        if !crate::oauth::password_matches(password, stored.flatten()).await {
            return Ok(None);
        }
        self.user_by_email(email).await
    }
}

/// The id of the operators' team, created on first use.
pub(crate) async fn operators_team(tx: &mut sqlx::AnyConnection) -> Result<i64> {
    let existing: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM teams WHERE is_personal_team = 0 AND type = 'operators' ORDER BY id LIMIT 1",
    )
    .fetch_optional(&mut *tx)
    .await?;
    if let Some(id) = existing {
        return Ok(id);
    }
    let now = now_record_time();
    Ok(sqlx::query_scalar(
        "INSERT INTO teams (uuid, name, type, is_personal_team, created_at, updated_at)
         VALUES ($1, $2, 'operators', 0, $3, $4) RETURNING id",
    )
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(OPERATORS_TEAM)
    .bind(&now)
    .bind(&now)
    .fetch_one(&mut *tx)
    .await?)
}
