//! Quotas: how much of each kind one team (or one user) may create, so that no tenant can fill
//! the store and every gateway's memory (each gateway holds every charger and id tag).
//!
//! A quota is counted in the transaction that creates, after the new rows are written and before
//! the commit: a creation that would pass it is rolled back whole (a bulk import included).
//! SQLite runs one writing transaction at a time (`begin_write` takes the write lock at once),
//! and on PostgreSQL the count runs under a transaction-wide advisory lock of (quota, holder), so
//! that two concurrent creations are counted one after the other and cannot both pass.

use crate::{Backend, Result, Store, StoreError};
use sqlx::AnyConnection;

/// What is counted, and whose: a team's (`holder` "team") or a user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quota {
    /// Chargers in the sites a team owns.
    Chargers,
    /// Sites a team owns.
    Sites,
    /// A team's id tags, its providers' tags included.
    IdTags,
    Tariffs,
    Providers,
    /// A team's domains.
    Domains,
    /// Pending (unaccepted, unexpired) invites to the sites a team owns.
    Invites,
    /// Teams a user created (their personal team apart).
    Teams,
    /// A user's live personal access tokens.
    Tokens,
}

impl Quota {
    /// The quota's name: in `--quota-<name>` (with `-` for `_`) and as the key of a 422's
    /// `errors`.
    pub fn name(self) -> &'static str {
        match self {
            Quota::Chargers => "chargers",
            Quota::Sites => "sites",
            Quota::IdTags => "id_tags",
            Quota::Tariffs => "tariffs",
            Quota::Providers => "providers",
            Quota::Domains => "domains",
            Quota::Invites => "invites",
            Quota::Teams => "teams",
            Quota::Tokens => "tokens",
        }
    }

    /// What is counted, in a sentence.
    fn noun(self) -> &'static str {
        match self {
            Quota::IdTags => "id tags",
            Quota::Invites => "pending invites",
            Quota::Tokens => "personal access tokens",
            other => other.name(),
        }
    }

    fn holder(self) -> &'static str {
        match self {
            Quota::Teams | Quota::Tokens => "user",
            _ => "team",
        }
    }

    /// Counts what the holder `$1` has (and, for invites, `$2`: now).
    fn count_sql(self) -> &'static str {
        match self {
            Quota::Chargers => {
                "SELECT COUNT(*) FROM chargers c JOIN sites s ON s.id = c.site_id
                 WHERE s.team_id = $1"
            }
            Quota::Sites => "SELECT COUNT(*) FROM sites WHERE team_id = $1",
            Quota::IdTags => {
                "SELECT (SELECT COUNT(*) FROM id_tags WHERE team_id = $1)
                      + (SELECT COUNT(*) FROM id_tags t JOIN providers p ON p.id_tag_team_id = t.team_id
                         WHERE p.team_id = $1)"
            }
            Quota::Tariffs => "SELECT COUNT(*) FROM tariffs WHERE team_id = $1",
            Quota::Providers => "SELECT COUNT(*) FROM providers WHERE team_id = $1",
            Quota::Domains => "SELECT COUNT(*) FROM team_domains WHERE team_id = $1",
            Quota::Invites => {
                "SELECT COUNT(*) FROM site_invites i JOIN sites s ON s.id = i.site_id
                 WHERE s.team_id = $1 AND i.accepted_at IS NULL AND i.expires_at > $2"
            }
            Quota::Teams => {
                "SELECT COUNT(*) FROM teams
                 WHERE owner_user_id = $1 AND is_personal_team = 0"
            }
            Quota::Tokens => {
                "SELECT COUNT(*) FROM personal_access_tokens
                 WHERE user_id = $1 AND revoked = 0"
            }
        }
    }

    /// The first key of its PostgreSQL advisory lock (the second is the holder's id): "quo" in
    /// ASCII and the quota's number, apart from the single-key locks (another key space).
    fn lock_key(self) -> i64 {
        0x7175_6f00 + self as i64
    }
}

/// Each quota's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    pub chargers: i64,
    pub sites: i64,
    pub id_tags: i64,
    pub tariffs: i64,
    pub providers: i64,
    pub domains: i64,
    pub invites: i64,
    pub teams: i64,
    pub tokens: i64,
}

impl Quotas {
    /// Generous for real fleets (docs/operations.md "Quotas").
    pub const DEFAULT: Quotas = Quotas {
        chargers: 50_000,
        sites: 5_000,
        id_tags: 500_000,
        tariffs: 1_000,
        providers: 1_000,
        domains: 100,
        invites: 1_000,
        teams: 100,
        tokens: 1_000,
    };

    pub fn limit(&self, quota: Quota) -> i64 {
        match quota {
            Quota::Chargers => self.chargers,
            Quota::Sites => self.sites,
            Quota::IdTags => self.id_tags,
            Quota::Tariffs => self.tariffs,
            Quota::Providers => self.providers,
            Quota::Domains => self.domains,
            Quota::Invites => self.invites,
            Quota::Teams => self.teams,
            Quota::Tokens => self.tokens,
        }
    }
}

/// A creation refused: it would take the holder past its quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaReached {
    pub quota: Quota,
    pub limit: i64,
}

impl std::fmt::Display for QuotaReached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let holder = self.quota.holder();
        let their = if holder == "user" { "their" } else { "its" };
        let noun = self.quota.noun();
        write!(
            f,
            "The {holder} has reached {their} quota of {} {noun}.",
            self.limit
        )
    }
}

impl Store {
    /// The store with these quotas instead of [`Quotas::DEFAULT`].
    pub fn with_quotas(mut self, quotas: Quotas) -> Store {
        self.quotas = quotas;
        self
    }

    /// Fails with [`StoreError::QuotaReached`] when `holder` (a team's or user's id) has more
    /// than its quota: run in the creating transaction, after its inserts and before its commit.
    pub(crate) async fn enforce_quota(
        &self,
        tx: &mut AnyConnection,
        quota: Quota,
        holder: i64,
    ) -> Result<()> {
        if self.backend == Backend::Postgres {
            // Selecting the void result through the Any driver would fail: count it.
            sqlx::query(
                "SELECT COUNT(*) FROM (SELECT pg_advisory_xact_lock(CAST($1 AS INTEGER),
                    CAST($2 AS INTEGER))) AS locked",
            )
            .bind(quota.lock_key())
            // Ids past 2^31 share a lock with another's: they only wait for each other.
            .bind(holder as i32 as i64)
            .execute(&mut *tx)
            .await?;
        }
        let held = held(&mut *tx, quota, holder).await?;
        self.within(quota, held)
    }

    /// Fails with [`StoreError::QuotaReached`] unless `adding` more fit in what `holder` has
    /// now: a check before a long write (it is enforced again in the write's transactions).
    pub(crate) async fn check_quota(&self, quota: Quota, holder: i64, adding: i64) -> Result<()> {
        let held = held(self.db(), quota, holder).await?;
        self.within(quota, held + adding)
    }

    fn within(&self, quota: Quota, held: i64) -> Result<()> {
        let limit = self.quotas.limit(quota);
        if held > limit {
            return Err(StoreError::QuotaReached(QuotaReached { quota, limit }));
        }
        Ok(())
    }
}

/// How many of `quota`'s kind `holder` has.
async fn held<'e>(
    db: impl sqlx::Executor<'e, Database = sqlx::Any>,
    quota: Quota,
    holder: i64,
) -> Result<i64> {
    let mut count = sqlx::query_scalar(quota.count_sql()).bind(holder);
    if quota == Quota::Invites {
        count = count.bind(crate::now_record_time());
    }
    Ok(count.fetch_one(db).await?)
}

#[cfg(test)]
mod tests;
