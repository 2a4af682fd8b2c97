//! For tests (this crate's and the end-to-end suite) while the REST API of id tags and of the
//! sites' authorization is elsewhere: the rows it would write, written directly.

use crate::{Result, Store, now_record_time};

/// A charger's id, its site's id and the site's owner team.
pub async fn charger_site(store: &Store, identity: &str) -> Result<(i64, i64, i64)> {
    Ok(sqlx::query_as(
        "SELECT c.id, s.id, s.team_id FROM chargers c JOIN sites s ON s.id = c.site_id
         WHERE c.identity = $1",
    )
    .bind(identity)
    .fetch_one(&store.pool)
    .await?)
}

/// Sets a site's authorization mode (`open` or `id_tags`) and whether it keeps lists.
pub async fn set_site_authorization(
    store: &Store,
    site_id: i64,
    mode: &str,
    local_list: bool,
) -> Result<()> {
    sqlx::query(
        "UPDATE sites SET authorization_mode = $1, local_authorization_list = $2 WHERE id = $3",
    )
    .bind(mode)
    .bind(i64::from(local_list))
    .bind(site_id)
    .execute(&store.pool)
    .await?;
    Ok(())
}

/// Adds or replaces the team's tag `id_tag` (compared ASCII-case-insensitively).
pub async fn put_id_tag(
    store: &Store,
    team_id: i64,
    id_tag: &str,
    status: &str,
    expiry_date: Option<&str>,
    parent_id_tag: Option<&str>,
) -> Result<()> {
    let at = now_record_time();
    sqlx::query(
        "INSERT INTO id_tags (team_id, id_tag, id_tag_key, status, expiry_date, parent_id_tag,
           created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
         ON CONFLICT (team_id, id_tag_key) DO UPDATE SET id_tag = excluded.id_tag,
           status = excluded.status, expiry_date = excluded.expiry_date,
           parent_id_tag = excluded.parent_id_tag, updated_at = excluded.updated_at",
    )
    .bind(team_id)
    .bind(id_tag)
    .bind(id_tag.to_ascii_uppercase())
    .bind(status)
    .bind(expiry_date)
    .bind(parent_id_tag)
    .bind(&at)
    .execute(&store.pool)
    .await?;
    Ok(())
}

/// Removes the team's tag `id_tag`.
pub async fn remove_id_tag(store: &Store, team_id: i64, id_tag: &str) -> Result<()> {
    sqlx::query("DELETE FROM id_tags WHERE team_id = $1 AND id_tag_key = $2")
        .bind(team_id)
        .bind(id_tag.to_ascii_uppercase())
        .execute(&store.pool)
        .await?;
    Ok(())
}

/// Gives `team_id` access to the site, to all its chargers or (off) to those listed with
/// [`grant_charger`]; returns the access's id.
pub async fn grant_site_access(
    store: &Store,
    site_id: i64,
    team_id: i64,
    all_chargers: bool,
) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "INSERT INTO site_access (site_id, team_id, can_access_all_assets, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $4) RETURNING id",
    )
    .bind(site_id)
    .bind(team_id)
    .bind(i64::from(all_chargers))
    .bind(now_record_time())
    .fetch_one(&store.pool)
    .await?)
}

/// Lists a charger in a site access that does not cover every charger.
pub async fn grant_charger(store: &Store, access_id: i64, charger_id: i64) -> Result<()> {
    sqlx::query("INSERT INTO site_access_assets (site_access_id, charger_id) VALUES ($1, $2)")
        .bind(access_id)
        .bind(charger_id)
        .execute(&store.pool)
        .await?;
    Ok(())
}
