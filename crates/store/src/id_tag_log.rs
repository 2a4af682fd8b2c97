//! The id tags as a change log, for the gateways that answer Authorize from memory and must not
//! query the store: `cms up` follows it, and `cms api` publishes it to the id-tags topic.

use crate::{Result, Store};

/// One change: a team's tag as it is now (`None`: deleted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdTagChange {
    pub seq: i64,
    pub team_id: i64,
    /// The tag in ASCII uppercase, as chargers compare tags.
    pub id_tag_key: String,
    pub tag: Option<IdTagState>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdTagState {
    pub id_tag: String,
    pub status: String,
    /// As stored: `2026-11-21T10:00:00Z`.
    pub expiry_date: Option<String>,
    pub parent_id_tag: Option<String>,
}

impl Store {
    /// Up to `limit` id-tag changes after `seq`, oldest first, each with the tag's state now.
    pub async fn id_tag_changes_since(&self, seq: i64, limit: i64) -> Result<Vec<IdTagChange>> {
        type LogRow = (
            i64,
            i64,
            String,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let rows: Vec<LogRow> = sqlx::query_as(
            "SELECT ch.seq, ch.team_id, ch.id_tag_key, t.id_tag, t.status, t.expiry_date,
                    t.parent_id_tag
             FROM id_tag_changes ch
             LEFT JOIN id_tags t ON t.team_id = ch.team_id AND t.id_tag_key = ch.id_tag_key
             WHERE ch.seq > $1 ORDER BY ch.seq LIMIT $2",
        )
        .bind(seq)
        .bind(limit)
        .fetch_all(self.db())
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(seq, team_id, id_tag_key, id_tag, status, expiry_date, parent_id_tag)| {
                    let tag = id_tag.zip(status).map(|(id_tag, status)| IdTagState {
                        id_tag,
                        status,
                        expiry_date,
                        parent_id_tag,
                    });
                    IdTagChange {
                        seq,
                        team_id,
                        id_tag_key,
                        tag,
                    }
                },
            )
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::store_test;
    use std::time::Duration;

    store_test!(
        changes_become_visible_in_the_order_of_their_numbers,
        |store| {
            let team = store
                .ensure_user_in("owner@example.com", false)
                .await
                .unwrap()
                .personal_team_id;
            let insert = "INSERT INTO id_tags (team_id, id_tag, id_tag_key, status, created_at,
                      updated_at) VALUES ($1, $2, $2, 'Accepted', 'now', 'now')";
            // A first writer takes its change number and has not committed yet...
            let mut first = store.pool.begin().await.unwrap();
            sqlx::query(insert)
                .bind(team)
                .bind("FIRST")
                .execute(&mut *first)
                .await
                .unwrap();
            // ...so a second one waits for it instead of committing a higher number before it,
            // which a reader that moved past would then never see the first below.
            let pool = store.pool.clone();
            let second = tokio::spawn(async move {
                sqlx::query(insert)
                    .bind(team)
                    .bind("SECOND")
                    .execute(&pool)
                    .await
                    .unwrap();
            });
            tokio::time::sleep(Duration::from_millis(300)).await;
            assert!(store.id_tag_changes_since(0, 10).await.unwrap().is_empty());
            first.commit().await.unwrap();
            second.await.unwrap();
            let changes = store.id_tag_changes_since(0, 10).await.unwrap();
            let order: Vec<&str> = changes.iter().map(|c| c.id_tag_key.as_str()).collect();
            assert_eq!(order, ["FIRST", "SECOND"]);
        }
    );
}
