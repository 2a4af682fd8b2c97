//! What the API replicas hold in memory to answer a request without asking the store
//! (cms_api::access), and how they learn that it changed: tokens as stored, to verify a
//! presented secret against; a user's access to a charger; and the change log that the
//! triggers of migration 0022 write whenever either may have changed, wherever the change came
//! from (any replica, the command line, a cascade).

use crate::ChargerRow;
use crate::access::{CHARGER_GRANTS, Permissions, SITE_GRANTS};
use crate::chargers::CHARGER_COLUMNS_WITHOUT_GRANTS;
use crate::oauth::OpaqueSecret;
use crate::tokens::split_scopes;
use crate::{Result, Store, TokenOwner, format_record_time};
use chrono::{DateTime, Utc};
use cms_credentials::verify_secret;
use sqlx::Row;

/// How a bearer token is found: a personal access token by id, an OAuth one by selector.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TokenKey {
    Personal(i64),
    OAuth(Box<str>),
}

impl TokenKey {
    /// The key of a bearer token and its secret part; `None` for what cannot be one of ours.
    pub fn parse(bearer: &str) -> Option<(TokenKey, &str)> {
        match bearer.split_once('|') {
            Some((id, secret)) => Some((TokenKey::Personal(id.parse().ok()?), secret)),
            None => {
                // Checked for its form first: what is not one of ours is not looked up.
                let token = OpaqueSecret::parse(bearer)?;
                let verifier = bearer.trim().split_once('.')?.1;
                Some((TokenKey::OAuth(token.selector.into()), verifier))
            }
        }
    }
}

/// A valid token as stored: its owner, and the salted hash a presented secret must match.
#[derive(Debug, Clone)]
pub struct StoredToken {
    pub owner: TokenOwner,
    hash: String,
    /// A personal access token's last recorded use.
    pub last_used_at: Option<String>,
    /// An OAuth token's end (record time), its authorization and its client.
    pub expires_at: Option<String>,
    pub auth_code_id: Option<i64>,
    pub client_id: Option<i64>,
}

impl StoredToken {
    /// Whether `secret` is this token's, compared in constant time.
    pub fn verifies(&self, secret: &str) -> bool {
        verify_secret(secret, &self.hash).unwrap_or(false)
    }

    /// Whether an OAuth token has expired at `now` (record time); a personal one never does.
    pub fn expired(&self, now: &str) -> bool {
        self.expires_at.as_deref().is_some_and(|end| end <= now)
    }

    /// [`StoredToken::expired`] at `now`, formatted only for a token that expires.
    pub fn expired_at(&self, now: DateTime<Utc>) -> bool {
        self.expires_at.is_some() && self.expired(&format_record_time(now))
    }

    pub fn is_personal(&self) -> bool {
        self.client_id.is_none()
    }
}

/// One change to who may do or see what: see migration 0022 for the kinds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessChange {
    pub seq: i64,
    pub kind: String,
    pub subject_id: i64,
}

/// A user's access to a charger, and until when it holds unchanged (a sensitive-data grant
/// that expires; record time), unless the change log says otherwise first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChargerAccess {
    pub id: i64,
    pub identity: String,
    pub site_id: i64,
    pub permissions: Permissions,
    pub until: Option<String>,
}

/// A user's access to a site, held like [`ChargerAccess`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteAccess {
    pub id: i64,
    pub permissions: Permissions,
    pub until: Option<String>,
}

/// One charger a user sees: the chargers list's rows, by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisibleCharger {
    pub id: i64,
    pub site_id: i64,
    pub permissions: Permissions,
}

/// The earliest of a user's sensitive-data grants to come to an end after `$2`, optionally of
/// one site (`site` a column naming it): until then the user's permissions hold.
fn next_expiry(site: Option<&str>) -> String {
    let of_site = site.map_or(String::new(), |s| format!("AND a.site_id = {s}"));
    format!(
        "(SELECT MIN(a.sensitive_data_expires_at) FROM site_access a
          JOIN team_user tu ON tu.team_id = a.team_id
          WHERE tu.user_id = $1 {of_site} AND a.sensitive_data = 1
            AND a.sensitive_data_expires_at > $2)"
    )
}

impl Store {
    /// The owner of `bearer` at `now`, if it is a valid token (a personal access token's use
    /// is recorded, at most once a minute): the store's answer, which the API holds
    /// (cms_api::access).
    pub async fn authenticate(
        &self,
        bearer: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<TokenOwner>> {
        let Some((key, secret)) = TokenKey::parse(bearer) else {
            return Ok(None);
        };
        let Some(stored) = self.stored_token(&key, now).await? else {
            return Ok(None);
        };
        if !stored.verifies(secret) {
            return Ok(None);
        }
        if stored.is_personal() {
            let id = stored.owner.token_id;
            self.note_token_use(id, stored.last_used_at.as_deref())
                .await;
        }
        Ok(Some(stored.owner))
    }

    /// The valid (unrevoked, unexpired, of a live authorization and client) token `key`.
    pub async fn stored_token(
        &self,
        key: &TokenKey,
        now: DateTime<Utc>,
    ) -> Result<Option<StoredToken>> {
        match key {
            TokenKey::Personal(id) => {
                let row = sqlx::query(
                    "SELECT t.user_id, t.token_hash, t.scopes, t.last_used_at, u.email
                     FROM personal_access_tokens t JOIN users u ON u.id = t.user_id
                     WHERE t.id = $1 AND t.revoked = 0",
                )
                .bind(id)
                .fetch_optional(self.db())
                .await?;
                Ok(row.map(|row| StoredToken {
                    owner: TokenOwner {
                        user_id: row.get("user_id"),
                        email: row.get("email"),
                        token_id: *id,
                        scopes: split_scopes(row.get("scopes")),
                    },
                    hash: row.get("token_hash"),
                    last_used_at: row.get("last_used_at"),
                    expires_at: None,
                    auth_code_id: None,
                    client_id: None,
                }))
            }
            TokenKey::OAuth(selector) => {
                let row = sqlx::query(
                    "SELECT a.id, a.verifier_hash, a.user_id, a.scopes, a.expires_at,
                            a.auth_code_id, a.client_id, u.email
                     FROM oauth_access_tokens a
                          JOIN users u ON u.id = a.user_id
                          JOIN oauth_auth_codes g ON g.id = a.auth_code_id AND g.revoked_at IS NULL
                          JOIN oauth_clients c ON c.id = a.client_id AND c.revoked = 0
                     WHERE a.selector = $1 AND a.revoked = 0 AND a.expires_at > $2",
                )
                .bind(&**selector)
                .bind(format_record_time(now))
                .fetch_optional(self.db())
                .await?;
                Ok(row.map(|row| StoredToken {
                    owner: TokenOwner {
                        user_id: row.get("user_id"),
                        email: row.get("email"),
                        token_id: row.get("id"),
                        scopes: split_scopes(row.get("scopes")),
                    },
                    hash: row.get("verifier_hash"),
                    last_used_at: None,
                    expires_at: Some(row.get("expires_at")),
                    auth_code_id: Some(row.get("auth_code_id")),
                    client_id: Some(row.get("client_id")),
                }))
            }
        }
    }

    /// The charger `charger_uuid` with the user's permissions on it; `None` when they do not
    /// see it.
    pub async fn charger_access(
        &self,
        user_id: i64,
        charger_uuid: &str,
    ) -> Result<Option<ChargerAccess>> {
        let now = crate::now_record_time();
        let row = sqlx::query(&format!(
            "SELECT c.id, c.identity, c.site_id, g.full_access, g.sensitive,
                {} AS until
             FROM chargers c JOIN ({CHARGER_GRANTS}) g ON g.charger_id = c.id
             WHERE c.uuid = $3",
            next_expiry(Some("c.site_id"))
        ))
        .bind(user_id)
        .bind(&now)
        .bind(charger_uuid)
        .fetch_optional(self.db())
        .await?;
        Ok(row.map(|row| ChargerAccess {
            id: row.get("id"),
            identity: row.get("identity"),
            site_id: row.get("site_id"),
            permissions: Permissions::from_grants(row.get("full_access"), row.get("sensitive")),
            until: row.get("until"),
        }))
    }

    /// The site `site_uuid` with the user's permissions on it; `None` when they do not reach
    /// it.
    pub async fn site_access(&self, user_id: i64, site_uuid: &str) -> Result<Option<SiteAccess>> {
        let row = sqlx::query(&format!(
            "SELECT s.id, g.full_access, g.sensitive, {} AS until
             FROM sites s JOIN ({SITE_GRANTS}) g ON g.site_id = s.id WHERE s.uuid = $3",
            next_expiry(Some("s.id"))
        ))
        .bind(user_id)
        .bind(crate::now_record_time())
        .bind(site_uuid)
        .fetch_optional(self.db())
        .await?;
        Ok(row.map(|row| SiteAccess {
            id: row.get("id"),
            permissions: Permissions::from_grants(row.get("full_access"), row.get("sensitive")),
            until: row.get("until"),
        }))
    }

    /// Every charger the user sees, by id, and until when that holds unchanged (record time).
    pub async fn visible_chargers(
        &self,
        user_id: i64,
    ) -> Result<(Vec<VisibleCharger>, Option<String>)> {
        let now = crate::now_record_time();
        let rows = sqlx::query(&format!(
            "SELECT c.id, c.site_id, g.full_access, g.sensitive
             FROM chargers c JOIN ({CHARGER_GRANTS}) g ON g.charger_id = c.id ORDER BY c.id"
        ))
        .bind(user_id)
        .bind(&now)
        .fetch_all(self.db())
        .await?;
        let until: Option<String> = sqlx::query_scalar(&format!("SELECT {}", next_expiry(None)))
            .bind(user_id)
            .bind(&now)
            .fetch_one(self.db())
            .await?;
        let visible = rows
            .into_iter()
            .map(|row| VisibleCharger {
                id: row.get("id"),
                site_id: row.get("site_id"),
                permissions: Permissions::from_grants(row.get("full_access"), row.get("sensitive")),
            })
            .collect();
        Ok((visible, until))
    }

    /// The chargers of `visible`, in its order, with the permissions it gives: a page of a list
    /// whose access was decided in memory, read by primary key.
    pub async fn chargers_by_id(&self, visible: &[VisibleCharger]) -> Result<Vec<ChargerRow>> {
        if visible.is_empty() {
            return Ok(Vec::new());
        }
        let placeholders: Vec<String> = (1..=visible.len()).map(|n| format!("${n}")).collect();
        let sql = format!(
            "SELECT {CHARGER_COLUMNS_WITHOUT_GRANTS} FROM chargers c WHERE c.id IN ({})",
            placeholders.join(", ")
        );
        let mut query = sqlx::query_as::<_, ChargerRow>(&sql);
        for charger in visible {
            query = query.bind(charger.id);
        }
        let mut rows = query.fetch_all(self.db()).await?;
        let order: std::collections::HashMap<i64, usize> =
            visible.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
        // A charger deleted since the decision is left out.
        rows.sort_by_key(|row| order.get(&row.id).copied().unwrap_or(usize::MAX));
        for row in &mut rows {
            if let Some(&i) = order.get(&row.id) {
                row.permissions = visible[i].permissions;
            }
        }
        Ok(rows)
    }

    /// Each charger's `updated_at` of `ids` (those that still exist), in one row of one column
    /// (`id=updated_at,...`): one round trip to the store's thread whatever the page's size, so
    /// a replica can tell which rows it holds are current (crate `cms_api`'s `ChargerRows`).
    pub async fn charger_versions(&self, ids: &[i64]) -> Result<Vec<(i64, String)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let joined = match self.backend {
            crate::Backend::Sqlite => "group_concat(c.id || '=' || c.updated_at, ',')",
            crate::Backend::Postgres => "string_agg(c.id || '=' || c.updated_at, ',')",
        };
        let placeholders: Vec<String> = (1..=ids.len()).map(|n| format!("${n}")).collect();
        let sql = format!(
            "SELECT {joined} FROM chargers c WHERE c.id IN ({})",
            placeholders.join(", ")
        );
        let mut query = sqlx::query_scalar::<_, Option<String>>(&sql);
        for id in ids {
            query = query.bind(id);
        }
        let joined = query.fetch_one(self.db()).await?.unwrap_or_default();
        Ok(joined
            .split(',')
            .filter_map(|pair| {
                let (id, at) = pair.split_once('=')?;
                Some((id.parse().ok()?, at.to_string()))
            })
            .collect())
    }

    /// The version of a charger's connectors: each one's number and `updated_at`, in one row
    /// of one column (`connector=updated_at,...`, by number; empty without connectors).
    pub async fn connector_versions(&self, charger_id: i64) -> Result<String> {
        let sql = match self.backend {
            // SQLite aggregates in the order of the subquery's rows.
            crate::Backend::Sqlite => {
                "SELECT group_concat(v, ',') FROM (SELECT connector_id || '=' || updated_at AS v
                 FROM connectors WHERE charger_id = $1 ORDER BY connector_id) versions"
            }
            crate::Backend::Postgres => {
                "SELECT string_agg(connector_id || '=' || updated_at, ',' ORDER BY connector_id)
                 FROM connectors WHERE charger_id = $1"
            }
        };
        let joined: Option<String> = sqlx::query_scalar(sql)
            .bind(charger_id)
            .fetch_one(self.db())
            .await?;
        Ok(joined.unwrap_or_default())
    }

    /// The newest change's number (0 before any).
    pub async fn access_changes_head(&self) -> Result<i64> {
        let head: Option<i64> = sqlx::query_scalar("SELECT MAX(seq) FROM access_changes")
            .fetch_one(self.db())
            .await?;
        Ok(head.unwrap_or(0))
    }

    /// The oldest change still kept (`None` when none is).
    pub async fn access_changes_tail(&self) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar("SELECT MIN(seq) FROM access_changes")
            .fetch_one(self.db())
            .await?)
    }

    /// Up to `limit` changes after `seq`, oldest first.
    pub async fn access_changes_since(&self, seq: i64, limit: i64) -> Result<Vec<AccessChange>> {
        let rows = sqlx::query(
            "SELECT seq, kind, subject_id FROM access_changes WHERE seq > $1 ORDER BY seq LIMIT $2",
        )
        .bind(seq)
        .bind(limit)
        .fetch_all(self.db())
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| AccessChange {
                seq: row.get("seq"),
                kind: row.get("kind"),
                subject_id: row.get("subject_id"),
            })
            .collect())
    }

    /// Forgets all but the newest `keep` changes.
    pub async fn prune_access_changes(&self, keep: i64) -> Result<()> {
        sqlx::query(
            "DELETE FROM access_changes WHERE seq <= (SELECT MAX(seq) FROM access_changes) - $1",
        )
        .bind(keep)
        .execute(self.db())
        .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
