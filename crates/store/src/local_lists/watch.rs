//! Which chargers' lists may need a look: the list keeper asks these each poll instead of
//! looking at every charger. The change logs (`id_tag_changes`, `charger_registry_changes`) are
//! read from a cursor; connections from the chargers themselves.

use crate::{Result, Store};

/// Where the keeper is in the change logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListCursors {
    pub id_tags: i64,
    pub registry: i64,
}

/// A site whose chargers keep lists.
const KEEPING_SITE: &str = "s.authorization_mode = 'id_tags' AND s.local_authorization_list = 1";

impl Store {
    /// The ends of both change logs now.
    pub async fn local_list_cursors(&self) -> Result<ListCursors> {
        let (id_tags, registry): (i64, i64) = sqlx::query_as(
            "SELECT (SELECT COALESCE(MAX(seq), 0) FROM id_tag_changes),
                    (SELECT COALESCE(MAX(seq), 0) FROM charger_registry_changes)",
        )
        .fetch_one(self.db())
        .await?;
        Ok(ListCursors { id_tags, registry })
    }

    /// The chargers (of sites that keep lists) whose tags or registration changed after
    /// `since`, and the cursors past those changes. A tag change marks every charger of the
    /// sites its team owns or has access to, or, for a provider's, is published to (whether the
    /// access covers the charger is the desired list's business).
    pub async fn local_list_changes(&self, since: ListCursors) -> Result<(Vec<i64>, ListCursors)> {
        let until = self.local_list_cursors().await?;
        let mut chargers: Vec<i64> = Vec::new();
        if until.id_tags > since.id_tags {
            chargers.extend(
                sqlx::query_scalar::<_, i64>(&format!(
                    "SELECT c.id FROM chargers c JOIN sites s ON s.id = c.site_id
                     WHERE {KEEPING_SITE} AND (s.team_id IN (
                         SELECT team_id FROM id_tag_changes WHERE seq > $1 AND seq <= $2)
                       OR EXISTS (SELECT 1 FROM site_access sa WHERE sa.site_id = s.id
                         AND sa.team_id IN (
                           SELECT team_id FROM id_tag_changes WHERE seq > $1 AND seq <= $2))
                       OR EXISTS (SELECT 1 FROM ocpi_publications op
                         JOIN providers p ON p.id = op.provider_id WHERE op.site_id = s.id
                         AND p.id_tag_team_id IN (
                           SELECT team_id FROM id_tag_changes WHERE seq > $1 AND seq <= $2)))"
                ))
                .bind(since.id_tags)
                .bind(until.id_tags)
                .fetch_all(self.db())
                .await?,
            );
        }
        if until.registry > since.registry {
            chargers.extend(
                sqlx::query_scalar::<_, i64>(
                    "SELECT DISTINCT c.id FROM charger_registry_changes ch
                     JOIN chargers c ON c.identity = ch.identity
                     WHERE ch.seq > $1 AND ch.seq <= $2",
                )
                .bind(since.registry)
                .bind(until.registry)
                .fetch_all(self.db())
                .await?,
            );
        }
        chargers.sort_unstable();
        chargers.dedup();
        Ok((chargers, until))
    }

    /// The online chargers of sites that keep lists whose current session has not had its
    /// list version checked yet (and did not say it keeps no list), with no call in flight:
    /// the chargers that connected since they were last looked at.
    pub async fn local_lists_unchecked(&self) -> Result<Vec<i64>> {
        Ok(sqlx::query_scalar(&format!(
            "SELECT c.id FROM chargers c JOIN sites s ON s.id = c.site_id
             LEFT JOIN charger_local_lists l ON l.charger_id = c.id
             WHERE {KEEPING_SITE} AND c.connection_status = 'online'
               AND l.pending_action IS NULL
               AND (l.checked_session IS NULL OR l.checked_session <> c.session)
               AND (l.unsupported_session IS NULL OR l.unsupported_session <> c.session)
             ORDER BY c.id"
        ))
        .fetch_all(self.db())
        .await?)
    }

    /// Every online charger of the sites that keep lists: for the keeper's start and its
    /// occasional full pass.
    pub async fn local_lists_online(&self) -> Result<Vec<i64>> {
        Ok(sqlx::query_scalar(&format!(
            "SELECT c.id FROM chargers c JOIN sites s ON s.id = c.site_id
             WHERE {KEEPING_SITE} AND c.connection_status = 'online' ORDER BY c.id"
        ))
        .fetch_all(self.db())
        .await?)
    }
}
