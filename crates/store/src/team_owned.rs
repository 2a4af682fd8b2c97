//! What a team owns by row (its providers, tariffs and id tags) is listed a page at a time and
//! looked up by key within the team the same way: one statement shape for all of them, so a
//! page and its total, and a look-up's team check, cannot differ between them.

use crate::{Result, Store};
use sqlx::any::AnyRow;

/// A table of rows owned by a team (`team_id`), as its listing and look-up read it.
pub(crate) struct TeamOwned {
    /// The table, with an alias the columns may use (`providers p`).
    pub from: &'static str,
    pub columns: &'static str,
    /// The listing's order.
    pub order: &'static str,
    /// The column a row is looked up by within its team.
    pub key: &'static str,
}

impl TeamOwned {
    /// A page of the team's rows in the table's order, and how many the team has.
    pub async fn page<T>(
        &self,
        store: &Store,
        team_id: i64,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<T>, i64)>
    where
        T: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin,
    {
        let total: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM {} WHERE team_id = $1",
            self.from
        ))
        .bind(team_id)
        .fetch_one(store.db())
        .await?;
        let page = sqlx::query_as(&format!(
            "SELECT {} FROM {} WHERE team_id = $1 ORDER BY {} LIMIT $2 OFFSET $3",
            self.columns, self.from, self.order
        ))
        .bind(team_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(store.db())
        .await?;
        Ok((page, total))
    }

    /// The team's row whose key is `key`.
    pub async fn one<T>(&self, store: &Store, team_id: i64, key: &str) -> Result<Option<T>>
    where
        T: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin,
    {
        Ok(sqlx::query_as(&format!(
            "SELECT {} FROM {} WHERE team_id = $1 AND {} = $2",
            self.columns, self.from, self.key
        ))
        .bind(team_id)
        .bind(key)
        .fetch_optional(store.db())
        .await?)
    }
}
