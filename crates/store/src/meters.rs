//! Meters attached to chargers (endpoints 4 and 12). A `ct_meter` measures the supply of the
//! charger it is attached to; its readings are the charger's own Inlet meter values, so they
//! are read from `latest_meter_values` rather than stored twice.

use crate::access::Permissions;
use crate::{Result, Store, StoreError, StoredMeterValue, now_record_time};

/// The meter types there are.
pub const CT_METER: &str = "ct_meter";

/// A meter as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct MeterRow {
    pub id: i64,
    pub uuid: String,
    pub team_id: i64,
    pub charger_id: i64,
    #[sqlx(rename = "type")]
    pub kind: String,
    pub created_at: String,
    pub updated_at: String,
}

const METER_COLUMNS: &str = "id, uuid, team_id, charger_id, type, created_at, updated_at";

impl Store {
    /// Whether the user belongs to the team (and may therefore act for it).
    pub async fn meter_team_member(&self, team_id: i64, user_id: i64) -> Result<bool> {
        let member: Option<i64> =
            sqlx::query_scalar("SELECT 1 FROM team_user WHERE team_id = $1 AND user_id = $2")
                .bind(team_id)
                .bind(user_id)
                .fetch_optional(self.db())
                .await?;
        Ok(member.is_some())
    }

    /// What a team may do with the charger a meter would be attached to: full access when the
    /// team owns the charger's site, basic when it reaches it through site access, `None` when
    /// it does not reach it at all.
    pub async fn meter_charger_access(
        &self,
        team_id: i64,
        charger_id: i64,
    ) -> Result<Option<Permissions>> {
        let full: Option<i64> = sqlx::query_scalar(
            "SELECT MAX(full_access) FROM (
                SELECT 1 AS full_access FROM chargers c JOIN sites s ON s.id = c.site_id
                WHERE c.id = $1 AND s.team_id = $2
                UNION ALL
                SELECT 0 FROM chargers c JOIN site_access a ON a.site_id = c.site_id
                WHERE c.id = $1 AND a.team_id = $2 AND (a.can_access_all_assets = 1 OR EXISTS (
                    SELECT 1 FROM site_access_assets x
                    WHERE x.site_access_id = a.id AND x.charger_id = c.id))
             ) team_charger_paths",
        )
        .bind(charger_id)
        .bind(team_id)
        .fetch_one(self.db())
        .await?;
        // Sensitivity is the user's concern (checked on reads), not the team's here.
        Ok(full.map(|full| Permissions::from_grants(full, 0)))
    }

    /// Attaches a meter of `kind` to a charger for a team. A second meter of the same kind on
    /// the same charger is a [`StoreError::Conflict`].
    pub async fn add_meter(&self, team_id: i64, charger_id: i64, kind: &str) -> Result<MeterRow> {
        let now = now_record_time();
        let inserted = sqlx::query_as(&format!(
            "INSERT INTO meters (uuid, team_id, charger_id, type, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING {METER_COLUMNS}"
        ))
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(team_id)
        .bind(charger_id)
        .bind(kind)
        .bind(&now)
        .bind(&now)
        .fetch_one(self.db())
        .await;
        match inserted {
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(StoreError::Conflict(
                format!("The charger already has a {kind}."),
            )),
            other => Ok(other?),
        }
    }

    /// The meter of `kind` attached to a charger, if any.
    pub async fn meter_of_charger(&self, charger_id: i64, kind: &str) -> Result<Option<MeterRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {METER_COLUMNS} FROM meters WHERE charger_id = $1 AND type = $2"
        ))
        .bind(charger_id)
        .bind(kind)
        .fetch_optional(self.db())
        .await?)
    }

    /// The latest reading of each of a charger's connectors (connector 0 included), newest
    /// first: what a meter on that charger shows. Read from the store, not the cache, so that
    /// every API replica answers the same.
    pub async fn latest_readings_of_charger(
        &self,
        charger_id: i64,
    ) -> Result<Vec<StoredMeterValue>> {
        Ok(sqlx::query_as(
            "SELECT c.identity, m.connector_id, m.meter_value, m.measured_at
             FROM latest_meter_values m JOIN chargers c ON c.id = m.charger_id
             WHERE m.charger_id = $1 ORDER BY m.measured_at DESC, m.connector_id",
        )
        .bind(charger_id)
        .fetch_all(self.db())
        .await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StateChange;
    use crate::test_support::{charger_id, store_test};

    fn reading(identity: &str, connector: i64, value: &str, second: u32) -> StateChange {
        let at = format!("2026-02-10T09:00:{second:02}.000000Z");
        StateChange::MeterValue {
            identity: identity.into(),
            connector_id: connector,
            meter_value: value.into(),
            measured_at: at.clone(),
            energy: None,
            at,
        }
    }

    store_test!(a_charger_gets_one_meter_of_a_kind_from_its_team, |store| {
        let cp = charger_id(&store, "CP-1").await;
        let operator = store.ensure_user("op@example.com").await.unwrap();
        let guest = store
            .ensure_user_in("guest@example.com", false)
            .await
            .unwrap();
        let team: i64 = sqlx::query_scalar("SELECT team_id FROM sites")
            .fetch_one(&store.pool)
            .await
            .unwrap();
        assert!(store.meter_team_member(team, operator.id).await.unwrap());
        assert!(!store.meter_team_member(team, guest.id).await.unwrap());
        let owner = store.meter_charger_access(team, cp).await.unwrap();
        assert_eq!(owner.map(|p| p.full), Some(true));
        let stranger = guest.personal_team_id;
        assert_eq!(
            store.meter_charger_access(stranger, cp).await.unwrap(),
            None
        );

        assert_eq!(store.meter_of_charger(cp, CT_METER).await.unwrap(), None);
        let meter = store.add_meter(team, cp, CT_METER).await.unwrap();
        assert_eq!((meter.team_id, meter.charger_id), (team, cp));
        assert_eq!(meter.kind, CT_METER);
        assert!(matches!(
            store.add_meter(team, cp, CT_METER).await,
            Err(StoreError::Conflict(m)) if m == "The charger already has a ct_meter."
        ));
        assert_eq!(
            store.meter_of_charger(cp, CT_METER).await.unwrap(),
            Some(meter)
        );
    });

    store_test!(
        a_meter_reads_every_connector_of_its_charger_newest_first,
        |store| {
            let cp = charger_id(&store, "CP-1").await;
            charger_id(&store, "CP-2").await;
            assert!(
                store
                    .latest_readings_of_charger(cp)
                    .await
                    .unwrap()
                    .is_empty()
            );
            store
                .apply(&[
                    reading("CP-1", 0, "[0]", 5),
                    reading("CP-1", 1, "[1]", 9),
                    reading("CP-2", 0, "[2]", 30),
                ])
                .await
                .unwrap();
            let readings = store.latest_readings_of_charger(cp).await.unwrap();
            let seen: Vec<(i64, &str)> = readings
                .iter()
                .map(|r| (r.connector_id, r.meter_value.as_str()))
                .collect();
            assert_eq!(seen, [(1, "[1]"), (0, "[0]")]);
            assert_eq!(readings[1].measured_at, "2026-02-10T09:00:05.000000Z");
        }
    );
}
