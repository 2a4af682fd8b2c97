//! Id tags: who may charge at the sites of a team (an RFID card's uid, an app's token). A tag is
//! an OCPP CiString20 that chargers compare case-insensitively, so a team holds each tag once
//! whatever its case: `id_tag` is kept as written, `id_tag_key` (its ASCII uppercase) is the
//! unique key and the one look-ups use.
//!
//! The caller validates the fields (the API and `cms id-tag import` share their rules); the
//! store keeps them as given.

use crate::team_owned::TeamOwned;
use crate::{Quota, Result, Store, StoreError, now_record_time};
use sqlx::Row;
use sqlx::any::AnyRow;
use std::collections::{HashMap, HashSet};

/// OCPP 1.6 AuthorizationStatus values a tag may have (`ConcurrentTx` is a gateway's answer,
/// never a tag's status).
pub const ID_TAG_STATUSES: [&str; 4] = ["Accepted", "Blocked", "Expired", "Invalid"];

/// The status of a tag created without one.
pub const DEFAULT_ID_TAG_STATUS: &str = "Accepted";

/// Message of a tag the team already has in any case (Laravel's `unique` rule).
pub const ID_TAG_TAKEN: &str = "The id tag has already been taken.";

/// How many rows [`Store::import_id_tags`] writes per statement and transaction: far below
/// the bind-parameter limits of both backends, large enough that 100k tags take seconds.
pub const IMPORT_CHUNK: usize = 500;

/// The key a tag is unique and looked up by: its ASCII uppercase, as chargers compare them.
pub fn id_tag_key(id_tag: &str) -> String {
    id_tag.to_ascii_uppercase()
}

/// An id tag of a team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdTag {
    pub id: i64,
    pub team_id: i64,
    /// As written when created (or last replaced).
    pub id_tag: String,
    pub status: String,
    /// Whole seconds, `2026-11-21T10:00:00Z`.
    pub expiry_date: Option<String>,
    pub parent_id_tag: Option<String>,
    pub name: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

impl<'r> sqlx::FromRow<'r, AnyRow> for IdTag {
    fn from_row(row: &'r AnyRow) -> Result<Self, sqlx::Error> {
        Ok(IdTag {
            id: row.try_get("id")?,
            team_id: row.try_get("team_id")?,
            id_tag: row.try_get("id_tag")?,
            status: row.try_get("status")?,
            expiry_date: row.try_get("expiry_date")?,
            parent_id_tag: row.try_get("parent_id_tag")?,
            name: row.try_get("name")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
}

/// Every field of a tag its team sets: what a create, a replacement or an import row gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdTagFields {
    pub id_tag: String,
    pub status: String,
    pub expiry_date: Option<String>,
    pub parent_id_tag: Option<String>,
    pub name: Option<String>,
}

impl IdTagFields {
    /// An `Accepted` tag without expiry, parent or name.
    pub fn accepted(id_tag: &str) -> IdTagFields {
        IdTagFields {
            id_tag: id_tag.to_string(),
            status: DEFAULT_ID_TAG_STATUS.into(),
            expiry_date: None,
            parent_id_tag: None,
            name: None,
        }
    }
}

/// What an import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportCounts {
    pub created: u64,
    pub updated: u64,
}

const COLUMNS: &str =
    "id, team_id, id_tag, status, expiry_date, parent_id_tag, name, created_at, updated_at";

/// A team's tags, by uppercase tag in byte order on both backends (PostgreSQL's default
/// collation may skip punctuation).
const ID_TAGS: [TeamOwned; 2] = [
    TeamOwned {
        from: "id_tags",
        columns: COLUMNS,
        order: "id_tag_key",
        key: "id_tag_key",
    },
    TeamOwned {
        from: "id_tags",
        columns: COLUMNS,
        order: "id_tag_key COLLATE \"C\"",
        key: "id_tag_key",
    },
];

impl Store {
    /// Adds a tag to a team; one the team has in any case is a [`StoreError::Conflict`] with
    /// [`ID_TAG_TAKEN`].
    pub async fn create_id_tag(&self, team_id: i64, fields: &IdTagFields) -> Result<IdTag> {
        let mut tx = self.begin_write().await?;
        let inserted = sqlx::query_as(&format!(
            "INSERT INTO id_tags (team_id, id_tag, id_tag_key, status, expiry_date, parent_id_tag,
                name, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING {COLUMNS}"
        ))
        .bind(team_id)
        .bind(&fields.id_tag)
        .bind(id_tag_key(&fields.id_tag))
        .bind(&fields.status)
        .bind(&fields.expiry_date)
        .bind(&fields.parent_id_tag)
        .bind(&fields.name)
        .bind(now_record_time())
        .fetch_one(&mut *tx)
        .await;
        let tag = match inserted {
            Ok(tag) => tag,
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                return Err(StoreError::Conflict(ID_TAG_TAKEN.into()));
            }
            Err(e) => return Err(e.into()),
        };
        let holder = tag_quota_holder(&mut *tx, team_id).await?;
        self.enforce_quota(&mut tx, Quota::IdTags, holder).await?;
        tx.commit().await?;
        Ok(tag)
    }

    /// The team's tag `id_tag`, in any case.
    pub async fn id_tag(&self, team_id: i64, id_tag: &str) -> Result<Option<IdTag>> {
        self.id_tags_table()
            .one(self, team_id, &id_tag_key(id_tag))
            .await
    }

    fn id_tags_table(&self) -> &'static TeamOwned {
        match self.backend {
            crate::Backend::Sqlite => &ID_TAGS[0],
            crate::Backend::Postgres => &ID_TAGS[1],
        }
    }

    /// A page of the team's tags in key order (uppercase tag), and how many there are.
    pub async fn id_tags(
        &self,
        team_id: i64,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<IdTag>, i64)> {
        self.id_tags_table()
            .page(self, team_id, limit, offset)
            .await
    }

    /// Replaces every field of the team's tag `id_tag` (in any case) with `fields`. The tag
    /// itself cannot change but for its case: `fields.id_tag` with another key is a
    /// [`StoreError::Conflict`]. `None` when the team has no such tag.
    pub async fn replace_id_tag(
        &self,
        team_id: i64,
        id_tag: &str,
        fields: &IdTagFields,
    ) -> Result<Option<IdTag>> {
        let key = id_tag_key(id_tag);
        if id_tag_key(&fields.id_tag) != key {
            return Err(StoreError::Conflict(
                "The id tag cannot change: delete the tag and create the new one.".into(),
            ));
        }
        Ok(sqlx::query_as(&format!(
            "UPDATE id_tags SET id_tag = $3, status = $4, expiry_date = $5, parent_id_tag = $6,
                name = $7, updated_at = $8
             WHERE team_id = $1 AND id_tag_key = $2 RETURNING {COLUMNS}"
        ))
        .bind(team_id)
        .bind(&key)
        .bind(&fields.id_tag)
        .bind(&fields.status)
        .bind(&fields.expiry_date)
        .bind(&fields.parent_id_tag)
        .bind(&fields.name)
        .bind(now_record_time())
        .fetch_optional(self.db())
        .await?)
    }

    /// Deletes the team's tag `id_tag` (in any case); `false` when there is none.
    pub async fn delete_id_tag(&self, team_id: i64, id_tag: &str) -> Result<bool> {
        let deleted = sqlx::query("DELETE FROM id_tags WHERE team_id = $1 AND id_tag_key = $2")
            .bind(team_id)
            .bind(id_tag_key(id_tag))
            .execute(self.db())
            .await?;
        Ok(deleted.rows_affected() > 0)
    }

    /// Creates the team's tags that are new and replaces the fields of those it has (matched
    /// in any case), [`IMPORT_CHUNK`] rows per transaction: a failure part way leaves the
    /// chunks before it written. A tag given twice counts once, with its last fields. An import
    /// whose new tags would not fit in the team's quota writes nothing.
    pub async fn import_id_tags(&self, team_id: i64, tags: &[IdTagFields]) -> Result<ImportCounts> {
        let mut last_of_key = HashMap::with_capacity(tags.len());
        for (i, tag) in tags.iter().enumerate() {
            last_of_key.insert(id_tag_key(&tag.id_tag), i);
        }
        let unique: Vec<(String, &IdTagFields)> = tags
            .iter()
            .enumerate()
            .filter_map(|(i, tag)| {
                let key = id_tag_key(&tag.id_tag);
                (last_of_key[&key] == i).then_some((key, tag))
            })
            .collect();
        let mut new = 0;
        for chunk in unique.chunks(IMPORT_CHUNK) {
            new += chunk.len() - existing_keys(self.db(), team_id, chunk).await?.len();
        }
        let holder = tag_quota_holder(self.db(), team_id).await?;
        self.check_quota(Quota::IdTags, holder, new as i64).await?;
        let mut counts = ImportCounts::default();
        for chunk in unique.chunks(IMPORT_CHUNK) {
            let chunk_counts = self.upsert_id_tag_chunk(team_id, chunk).await?;
            counts.created += chunk_counts.created;
            counts.updated += chunk_counts.updated;
        }
        Ok(counts)
    }

    async fn upsert_id_tag_chunk(
        &self,
        team_id: i64,
        chunk: &[(String, &IdTagFields)],
    ) -> Result<ImportCounts> {
        let mut tx = self.begin_write().await?;
        // The keys the team has already, to tell updates from creations; inside the write
        // transaction, so no other writer slips in between on SQLite.
        let existing = existing_keys(&mut *tx, team_id, chunk).await?;

        // `$1` team, `$2` now, then six per row.
        let rows: Vec<String> = (0..chunk.len())
            .map(|r| {
                let row = crate::parameters(3 + r * 6, 6);
                format!("($1, {row}, $2, $2)")
            })
            .collect();
        let sql = format!(
            "INSERT INTO id_tags (team_id, id_tag, id_tag_key, status, expiry_date, parent_id_tag,
                name, created_at, updated_at)
             VALUES {}
             ON CONFLICT (team_id, id_tag_key) DO UPDATE SET id_tag = excluded.id_tag,
                status = excluded.status, expiry_date = excluded.expiry_date,
                parent_id_tag = excluded.parent_id_tag, name = excluded.name,
                updated_at = excluded.updated_at",
            rows.join(", ")
        );
        let mut insert = sqlx::query(&sql).bind(team_id).bind(now_record_time());
        for (key, tag) in chunk {
            insert = insert
                .bind(&tag.id_tag)
                .bind(key)
                .bind(&tag.status)
                .bind(&tag.expiry_date)
                .bind(&tag.parent_id_tag)
                .bind(&tag.name);
        }
        insert.execute(&mut *tx).await?;
        let holder = tag_quota_holder(&mut *tx, team_id).await?;
        self.enforce_quota(&mut tx, Quota::IdTags, holder).await?;
        tx.commit().await?;
        let updated = existing.len() as u64;
        Ok(ImportCounts {
            created: chunk.len() as u64 - updated,
            updated,
        })
    }
}

/// Which of the chunk's keys the team has already.
async fn existing_keys<'e>(
    db: impl sqlx::Executor<'e, Database = sqlx::Any>,
    team_id: i64,
    chunk: &[(String, &IdTagFields)],
) -> Result<HashSet<String>> {
    let in_list = (0..chunk.len())
        .map(|i| format!("${}", i + 2))
        .collect::<Vec<_>>()
        .join(", ");
    let select =
        format!("SELECT id_tag_key FROM id_tags WHERE team_id = $1 AND id_tag_key IN ({in_list})");
    let mut existing = sqlx::query_scalar::<_, String>(&select).bind(team_id);
    for (key, _) in chunk {
        existing = existing.bind(key);
    }
    Ok(existing.fetch_all(db).await?.into_iter().collect())
}

/// The team whose id-tag quota a tag of `team_id` counts in: a provider's tags (kept in a team
/// of the provider's own) count in the quota of the team that has the provider.
async fn tag_quota_holder<'e>(
    db: impl sqlx::Executor<'e, Database = sqlx::Any>,
    team_id: i64,
) -> Result<i64> {
    let owner: Option<i64> =
        sqlx::query_scalar("SELECT team_id FROM providers WHERE id_tag_team_id = $1")
            .bind(team_id)
            .fetch_optional(db)
            .await?;
    Ok(owner.unwrap_or(team_id))
}

#[cfg(test)]
mod tests;
