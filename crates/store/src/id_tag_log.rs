//! The id tags as a change log, for the gateways that answer Authorize from memory and must not
//! query the store: `cms up` follows it, and `cms api` publishes it to the id-tags topic. A
//! change of a provider's OCPI connection is logged as one of its team's tag `''` (no tag has
//! that key), and read with what a gateway needs to ask the party in real time.

use crate::ocpi::tokens::PartyLink;
use crate::{Result, Store};

/// One change: a team's tag as it is now (`None`: deleted), or the team's OCPI party link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdTagChange {
    pub seq: i64,
    pub team_id: i64,
    /// The tag in ASCII uppercase, as chargers compare tags; empty for a change of the team's
    /// OCPI party ([`IdTagChange::is_party`]).
    pub id_tag_key: String,
    pub tag: Option<IdTagState>,
    /// For a party change: the link as it is now (`None`: none a gateway could use).
    pub party: Option<PartyLink>,
}

impl IdTagChange {
    /// Whether this is a change of the team's OCPI party rather than of a tag.
    pub fn is_party(&self) -> bool {
        self.id_tag_key.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdTagState {
    pub id_tag: String,
    pub status: String,
    /// As stored: `2026-11-21T10:00:00Z`.
    pub expiry_date: Option<String>,
    pub parent_id_tag: Option<String>,
    /// An OCPI token's type and whitelist (docs/ocpi.md, "Tokens"); `None` for other tags.
    pub ocpi_type: Option<String>,
    pub ocpi_whitelist: Option<String>,
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
            Option<String>,
            Option<String>,
        );
        let rows: Vec<LogRow> = sqlx::query_as(
            "SELECT ch.seq, ch.team_id, ch.id_tag_key, t.id_tag, t.status, t.expiry_date,
                    t.parent_id_tag, t.ocpi_type, t.ocpi_whitelist
             FROM id_tag_changes ch
             LEFT JOIN id_tags t ON t.team_id = ch.team_id AND t.id_tag_key = ch.id_tag_key
             WHERE ch.seq > $1 ORDER BY ch.seq LIMIT $2",
        )
        .bind(seq)
        .bind(limit)
        .fetch_all(self.db())
        .await?;
        let mut parties: Vec<i64> = (rows.iter())
            .filter(|row| row.2.is_empty())
            .map(|row| row.1)
            .collect();
        parties.sort_unstable();
        parties.dedup();
        let links = self.ocpi_party_links(&parties).await?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let (seq, team_id, id_tag_key, id_tag, status, expiry_date, parent_id_tag) =
                    (row.0, row.1, row.2, row.3, row.4, row.5, row.6);
                let tag = id_tag.zip(status).map(|(id_tag, status)| IdTagState {
                    id_tag,
                    status,
                    expiry_date,
                    parent_id_tag,
                    ocpi_type: row.7,
                    ocpi_whitelist: row.8,
                });
                let party = match id_tag_key.is_empty() {
                    true => links.get(&team_id).cloned(),
                    false => None,
                };
                IdTagChange {
                    seq,
                    team_id,
                    id_tag_key,
                    tag,
                    party,
                }
            })
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
