//! A team's tariffs (docs/tariffs.md). The store keeps a tariff's rules as the JSON the API
//! checked (`body`); pricing reads them with `cms-tariffs`. A site's tariff prices its chargers'
//! transactions, each keeping the tariff it started under.
//!
//! Every edit makes a new version of the tariff, and every version is kept in
//! `tariff_versions`, a deleted tariff's too: a transaction takes the version in force when the
//! gateway received its start (`state.rs`), however late the store learns of that start.

use crate::team_owned::TeamOwned;
use crate::{Quota, Result, Store, StoreError, now_record_time};

/// A tariff as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct TariffRow {
    pub id: i64,
    pub uuid: String,
    pub team_id: i64,
    pub name: String,
    pub currency: String,
    /// The rules: `{currency, elements, min_price, max_price}` as JSON.
    pub body: String,
    /// 1 when created, one more with each edit.
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

/// What a tariff is made of when written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTariff {
    pub name: String,
    pub currency: String,
    pub body: String,
}

const COLUMNS: &str = "id, uuid, team_id, name, currency, body, version, created_at, updated_at";

/// A team's tariffs, oldest first, by uuid.
const TARIFFS: TeamOwned = TeamOwned {
    from: "tariffs",
    columns: COLUMNS,
    order: "id",
    key: "uuid",
};

impl Store {
    /// A page of the team's tariffs, oldest first, and how many it has.
    pub async fn tariffs(
        &self,
        team_id: i64,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<TariffRow>, i64)> {
        TARIFFS.page(self, team_id, limit, offset).await
    }

    /// The team's tariff with this uuid.
    pub async fn tariff(&self, team_id: i64, uuid: &str) -> Result<Option<TariffRow>> {
        TARIFFS.one(self, team_id, uuid).await
    }

    pub async fn create_tariff(&self, team_id: i64, new: &NewTariff) -> Result<TariffRow> {
        let uuid = uuid::Uuid::new_v4().to_string();
        let now = now_record_time();
        let mut tx = self.begin_write().await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO tariffs (uuid, team_id, name, currency, body, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(&uuid)
        .bind(team_id)
        .bind(&new.name)
        .bind(&new.currency)
        .bind(&new.body)
        .bind(&now)
        .bind(&now)
        .fetch_one(&mut *tx)
        .await?;
        self.enforce_quota(&mut tx, Quota::Tariffs, team_id).await?;
        add_version(&mut tx, id, &uuid, 1, new, &now).await?;
        tx.commit().await?;
        self.tariff(team_id, &uuid)
            .await?
            .ok_or_else(|| StoreError::NotFound("tariff".into()))
    }

    /// Replaces the team's tariff with a new version; `None` when it has no such tariff.
    /// Transactions that started under an earlier version keep it.
    pub async fn replace_tariff(
        &self,
        team_id: i64,
        uuid: &str,
        new: &NewTariff,
    ) -> Result<Option<TariffRow>> {
        let mut tx = self.begin_write().await?;
        // Taken with the write lock (SQLite's) held: versions follow each other in time.
        let now = now_record_time();
        let replaced: Option<(i64, i64)> = sqlx::query_as(
            "UPDATE tariffs SET name = $1, currency = $2, body = $3, updated_at = $4,
               version = version + 1
             WHERE team_id = $5 AND uuid = $6 RETURNING id, version",
        )
        .bind(&new.name)
        .bind(&new.currency)
        .bind(&new.body)
        .bind(&now)
        .bind(team_id)
        .bind(uuid)
        .fetch_optional(&mut *tx)
        .await?;
        let Some((id, version)) = replaced else {
            return Ok(None);
        };
        add_version(&mut tx, id, uuid, version, new, &now).await?;
        tx.commit().await?;
        self.tariff(team_id, uuid).await
    }

    /// Deletes the team's tariff: `Ok(false)` when it has no such tariff, a
    /// [`StoreError::Conflict`] naming the sites (or providers) while one of them prices with
    /// it. Its versions stay, with the transactions priced by them.
    pub async fn delete_tariff(&self, team_id: i64, uuid: &str) -> Result<bool> {
        let mut tx = self.begin_write().await?;
        for (what, table) in [("site", "sites"), ("provider", "providers")] {
            let users: Vec<String> = sqlx::query_scalar(&format!(
                "SELECT u.uuid FROM {table} u JOIN tariffs t ON t.id = u.tariff_id
                 WHERE t.team_id = $1 AND t.uuid = $2 ORDER BY u.id LIMIT 5"
            ))
            .bind(team_id)
            .bind(uuid)
            .fetch_all(&mut *tx)
            .await?;
            if !users.is_empty() {
                return Err(StoreError::Conflict(format!(
                    "The tariff is in use by {what}(s) {}.",
                    users.join(", ")
                )));
            }
        }
        let done = sqlx::query("DELETE FROM tariffs WHERE team_id = $1 AND uuid = $2")
            .bind(team_id)
            .bind(uuid)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }
}

/// Keeps `new` as version `version` of the tariff, in force from `valid_from` on.
async fn add_version(
    db: &mut sqlx::AnyConnection,
    tariff_id: i64,
    uuid: &str,
    version: i64,
    new: &NewTariff,
    valid_from: &str,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO tariff_versions (tariff_id, tariff_uuid, version, name, currency, body,
           valid_from) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(tariff_id)
    .bind(uuid)
    .bind(version)
    .bind(&new.name)
    .bind(&new.currency)
    .bind(&new.body)
    .bind(valid_from)
    .execute(&mut *db)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sites::SiteChanges;
    use crate::test_support::{charger_id, store_test};
    use crate::{EnergyReading, StateChange};

    fn at(minute: u32) -> String {
        format!("2026-02-10T09:{minute:02}:00.000000Z")
    }

    fn start(id: i64, connector: i64, minute: u32) -> StateChange {
        StateChange::TransactionStarted {
            identity: "CP-1".into(),
            ocpp_transaction_id: id,
            connector_id: connector,
            id_tag: "TAG".into(),
            id_tag_status: Some("Accepted".into()),
            meter_start: 0,
            reservation_id: None,
            started_at: at(minute),
            at: at(minute),
        }
    }

    fn energy(connector: i64, minute: u32, wh: i64) -> StateChange {
        StateChange::TransactionEnergy {
            identity: "CP-1".into(),
            connector_id: connector,
            energy: EnergyReading { at: at(minute), wh },
        }
    }

    fn status(connector: i64, status: &str, minute: u32) -> StateChange {
        StateChange::Status {
            identity: "CP-1".into(),
            connector_id: connector,
            status: status.into(),
            error: "NoError".into(),
            info: None,
            vendor_id: None,
            vendor_error_code: None,
            at: at(minute),
        }
    }

    /// The charger's site (the operators') and its owner team.
    async fn site_of(store: &Store, charger: i64) -> (i64, i64) {
        sqlx::query_as(
            "SELECT s.id, s.team_id FROM sites s JOIN chargers c ON c.site_id = s.id
             WHERE c.id = $1",
        )
        .bind(charger)
        .fetch_one(&store.pool)
        .await
        .unwrap()
    }

    fn tariff(name: &str) -> NewTariff {
        NewTariff {
            name: name.into(),
            currency: "EUR".into(),
            body: format!(r#"{{"currency":"EUR","name":"{name}"}}"#),
        }
    }

    store_test!(
        a_priced_transaction_keeps_its_tariff_and_readings,
        |store| {
            let charger = charger_id(&store, "CP-1").await;
            let (site, team) = site_of(&store, charger).await;
            // Connector 1 starts before the site has a tariff: not priced, keeps nothing.
            store.apply(&[start(1, 1, 0)]).await.unwrap();
            let standard = store
                .create_tariff(team, &tariff("Standard"))
                .await
                .unwrap();
            let changes = SiteChanges {
                tariff_id: Some(Some(standard.id)),
                time_zone: Some("Europe/Amsterdam".into()),
                ..Default::default()
            };
            store.update_site(site, changes).await.unwrap();
            store.apply(&[start(2, 2, 1)]).await.unwrap();
            // Edited after the start: the transaction keeps what it started under.
            store
                .replace_tariff(team, &standard.uuid, &tariff("Edited"))
                .await
                .unwrap();
            store
                .apply(&[
                    energy(1, 5, 500),
                    energy(2, 5, 700),
                    // Before the start: not this transaction's.
                    energy(2, 0, 100),
                    status(2, "SuspendedEV", 6),
                    status(2, "Charging", 7),
                    energy(2, 8, 900),
                ])
                .await
                .unwrap();
            let unpriced = store.transaction_of("CP-1", 1).await.unwrap().unwrap();
            let priced = store.transaction_of("CP-1", 2).await.unwrap().unwrap();
            assert_eq!(unpriced.tariff, None);
            assert_eq!(priced.tariff_uuid.as_deref(), Some(standard.uuid.as_str()));
            assert_eq!(priced.tariff.as_deref(), Some(standard.body.as_str()));
            assert_eq!(priced.time_zone.as_deref(), Some("Europe/Amsterdam"));
            let readings = store
                .transaction_readings(&[unpriced.id, priced.id])
                .await
                .unwrap();
            type Kept = (Option<String>, Option<i64>, Option<String>, Option<i64>);
            let kept: Vec<Kept> = readings
                .into_iter()
                .map(|r| {
                    assert_eq!(r.transaction_id, priced.id);
                    (r.energy_at, r.energy_wh, r.parking_at, r.parking)
                })
                .collect();
            assert_eq!(
                kept,
                [
                    (Some(at(5)), Some(700), None, None),
                    (None, None, Some(at(6)), Some(1)),
                    (None, None, Some(at(7)), Some(0)),
                    (Some(at(8)), Some(900), None, None),
                ]
            );

            // A start the gateway refused is not priced: the driver was turned away.
            let mut refused = start(3, 3, 9);
            if let StateChange::TransactionStarted { id_tag_status, .. } = &mut refused {
                *id_tag_status = Some("Invalid".into());
            }
            store.apply(&[refused]).await.unwrap();
            let refused = store.transaction_of("CP-1", 3).await.unwrap().unwrap();
            assert_eq!((refused.tariff, refused.tariff_uuid), (None, None));

            // Connector 2's stop is lost; a newer, unpriced transaction starts there: its
            // readings are not the old one's.
            let unpriced_site = SiteChanges {
                tariff_id: Some(None),
                ..Default::default()
            };
            store.update_site(site, unpriced_site).await.unwrap();
            store
                .apply(&[start(4, 2, 20), energy(2, 25, 5000)])
                .await
                .unwrap();
            let kept = store.transaction_readings(&[priced.id]).await.unwrap();
            assert_eq!(kept.len(), 4, "still the four above: {kept:?}");

            // The final cost is written once.
            store
                .set_transaction_cost(priced.id, "{\"a\":1}")
                .await
                .unwrap();
            store
                .set_transaction_cost(priced.id, "{\"b\":2}")
                .await
                .unwrap();
            let priced = store.transaction_of("CP-1", 2).await.unwrap().unwrap();
            assert_eq!(priced.cost.as_deref(), Some("{\"a\":1}"));
        }
    );

    store_test!(
        a_start_takes_the_tariff_as_it_was_when_the_gateway_received_it,
        |store| {
            let charger = charger_id(&store, "CP-1").await;
            let (site, team) = site_of(&store, charger).await;
            let standard = store
                .create_tariff(team, &tariff("Standard"))
                .await
                .unwrap();
            let changes = SiteChanges {
                tariff_id: Some(Some(standard.id)),
                ..Default::default()
            };
            store.update_site(site, changes).await.unwrap();
            // The gateway receives a start; the tariff is edited before the materialiser
            // applies it: the start still takes the tariff as it was when it was received.
            let received = now_record_time();
            // Record times have microseconds: the edit is strictly later.
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            let edited = store
                .replace_tariff(team, &standard.uuid, &tariff("Edited"))
                .await
                .unwrap()
                .unwrap();
            let mut late = start(1, 1, 0);
            if let StateChange::TransactionStarted { at, .. } = &mut late {
                *at = received;
            }
            // A start received after the edit takes the edited tariff.
            let mut after = start(2, 2, 1);
            if let StateChange::TransactionStarted { at, .. } = &mut after {
                *at = now_record_time();
            }
            store.apply(&[late, after]).await.unwrap();
            let before_edit = store.transaction_of("CP-1", 1).await.unwrap().unwrap();
            let after_edit = store.transaction_of("CP-1", 2).await.unwrap().unwrap();
            assert_eq!(before_edit.tariff.as_deref(), Some(standard.body.as_str()));
            assert_eq!(after_edit.tariff.as_deref(), Some(edited.body.as_str()));
            assert_eq!(
                before_edit.tariff_uuid.as_deref(),
                Some(standard.uuid.as_str())
            );
            assert_eq!(edited.version, 2);
            assert_eq!(
                (before_edit.tariff_version, after_edit.tariff_version),
                (Some(1), Some(2))
            );

            // A tariff the site took after the start was received: taken as it first was.
            let received = now_record_time();
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            let newer = store.create_tariff(team, &tariff("Newer")).await.unwrap();
            let changes = SiteChanges {
                tariff_id: Some(Some(newer.id)),
                ..Default::default()
            };
            store.update_site(site, changes).await.unwrap();
            let mut late = start(3, 3, 2);
            if let StateChange::TransactionStarted { at, .. } = &mut late {
                *at = received;
            }
            store.apply(&[late]).await.unwrap();
            let taken = store.transaction_of("CP-1", 3).await.unwrap().unwrap();
            assert_eq!(taken.tariff.as_deref(), Some(newer.body.as_str()));
            assert_eq!(taken.tariff_version, Some(1));

            // Deleted, a tariff's versions stay, and its sessions keep what they took.
            assert!(store.delete_tariff(team, &standard.uuid).await.unwrap());
            let versions: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM tariff_versions WHERE tariff_uuid = $1")
                    .bind(&standard.uuid)
                    .fetch_one(&store.pool)
                    .await
                    .unwrap();
            assert_eq!(versions, 2);
            let kept = store.transaction_of("CP-1", 1).await.unwrap().unwrap();
            assert_eq!(kept.tariff.as_deref(), Some(standard.body.as_str()));
        }
    );

    store_test!(a_tariff_in_use_is_not_deleted, |store| {
        let charger = charger_id(&store, "CP-1").await;
        let (site, team) = site_of(&store, charger).await;
        let used = store.create_tariff(team, &tariff("Used")).await.unwrap();
        let spare = store.create_tariff(team, &tariff("Spare")).await.unwrap();
        let changes = SiteChanges {
            tariff_id: Some(Some(used.id)),
            ..Default::default()
        };
        store.update_site(site, changes).await.unwrap();
        let Err(StoreError::Conflict(message)) = store.delete_tariff(team, &used.uuid).await else {
            panic!("a tariff in use was deleted");
        };
        assert!(message.contains("in use"), "{message}");
        assert!(store.delete_tariff(team, &spare.uuid).await.unwrap());
        assert!(!store.delete_tariff(team, &spare.uuid).await.unwrap());
        // Another team's tariff is not this team's to delete.
        assert!(!store.delete_tariff(team + 1000, &used.uuid).await.unwrap());
        let (page, total) = store.tariffs(team, 25, 0).await.unwrap();
        assert_eq!((page.len(), total), (1, 1));
    });
}
