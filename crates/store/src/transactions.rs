//! Charging sessions as the API lists them (endpoint 5): one charger's transactions, newest
//! first, narrowed by a filter. The rows themselves are written by the materialiser from
//! StartTransaction and StopTransaction (see `state.rs`).

mod team;
#[cfg(test)]
mod team_tests;

pub use team::{After, TeamTransaction};

use crate::{Backend, Result, Store};

/// Whether a transaction is still running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionStatus {
    /// Started, not stopped yet.
    Active,
    Stopped,
}

/// What to list; every part is optional and they all must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransactionFilter {
    pub status: Option<TransactionStatus>,
    /// The connector's number on its charger.
    pub connector_id: Option<i64>,
    /// Compared case-insensitively: OCPP id tags are case-insensitive strings (CiString20).
    pub id_tag: Option<String>,
    /// Record time: only transactions started at or after it.
    pub started_after: Option<String>,
    /// Record time: only transactions started before it.
    pub started_before: Option<String>,
}

/// A transaction as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct TransactionRow {
    /// The store's own id (what its readings are kept under).
    pub id: i64,
    /// The transactionId a 1.6 charger knows it by (what its own logs show); for a 2.0.1
    /// station's, minus `id` (its own id is `station_transaction_id`).
    pub ocpp_transaction_id: i64,
    /// The transactionId a 2.0.1 station gave it; `None` for a 1.6 charger's.
    pub station_transaction_id: Option<String>,
    pub charger_id: i64,
    /// The connector's row (`connectors.id`).
    pub charger_connector_id: Option<i64>,
    /// The connector's number on its charger.
    pub connector_id: i64,
    pub reservation_id: Option<i64>,
    pub id_tag: String,
    /// How the gateway answered the id tag at start (Accepted, Blocked, Expired, Invalid,
    /// ConcurrentTx); `None` for a transaction recorded before tags were checked.
    pub id_tag_status: Option<String>,
    /// Wh.
    pub meter_start: i64,
    /// Wh; `None` while the transaction runs.
    pub meter_stop: Option<i64>,
    pub started_at: String,
    pub stopped_at: Option<String>,
    pub stop_reason: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// The tariff in force at the start (`None`: the site had none), whole as it was then.
    pub tariff_uuid: Option<String>,
    pub tariff: Option<String>,
    /// Which version of it (`None` for a transaction started before tariffs had versions).
    pub tariff_version: Option<i64>,
    /// The site's time zone at the start.
    pub time_zone: Option<String>,
    /// The final cost (JSON), once the transaction stopped and was priced.
    pub cost: Option<String>,
    /// The provider whose driver started it (by their tag), if any.
    pub provider_uuid: Option<String>,
    /// Its uuid: the id of its OCPI Session and CDR (given when it is stored).
    pub uuid: Option<String>,
}

/// The columns of [`TransactionRow`].
const COLUMNS: &str = "id, ocpp_transaction_id, station_transaction_id, charger_id, charger_connector_id, connector_id,
    reservation_id, id_tag, id_tag_status, meter_start, meter_stop, started_at, stopped_at,
    stop_reason, created_at, updated_at, tariff_uuid, tariff, tariff_version, time_zone, cost,
    provider_uuid, uuid";

impl Store {
    /// A charger's transaction by the id the charger knows it by.
    pub async fn transaction_of(
        &self,
        identity: &str,
        ocpp_transaction_id: i64,
    ) -> Result<Option<TransactionRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM transactions
             WHERE charger_id = (SELECT id FROM chargers WHERE identity = $1)
               AND ocpp_transaction_id = $2"
        ))
        .bind(identity)
        .bind(ocpp_transaction_id)
        .fetch_optional(self.db())
        .await?)
    }

    /// A charger's transaction by the id the API shows for it: a 1.6 charger's by the
    /// transactionId it was given, a 2.0.1 station's by the store's own id.
    pub async fn transaction_of_charger(
        &self,
        charger_id: i64,
        api_id: i64,
    ) -> Result<Option<TransactionRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM transactions
             WHERE charger_id = $1
               AND ((station_transaction_id IS NULL AND ocpp_transaction_id = $2)
                 OR (station_transaction_id IS NOT NULL AND id = $2))"
        ))
        .bind(charger_id)
        .bind(api_id)
        .fetch_optional(self.db())
        .await?)
    }

    /// A 2.0.1 station's transaction by the transactionId the station gave it.
    pub async fn transaction_of_station(
        &self,
        identity: &str,
        station_transaction_id: &str,
    ) -> Result<Option<TransactionRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM transactions
             WHERE charger_id = (SELECT id FROM chargers WHERE identity = $1)
               AND station_transaction_id = $2"
        ))
        .bind(identity)
        .bind(station_transaction_id)
        .fetch_optional(self.db())
        .await?)
    }

    /// Of these 2.0.1 stations' transactions (identity, the station's transactionId), those
    /// stopped and not priced: their charger and `ocpp_transaction_id`, for
    /// `write_final_cost`. Many to a statement: the materialiser asks after every batch.
    pub async fn stopped_unpriced_of_stations(
        &self,
        keys: &[(&str, &str)],
    ) -> Result<Vec<(String, i64)>> {
        use crate::station_events::batch::{runs, statement, tuples};
        use std::sync::OnceLock;
        static CACHE: [OnceLock<Vec<String>>; 2] = [OnceLock::new(), OnceLock::new()];
        fn make(backend: Backend, rows: usize) -> String {
            format!(
                "WITH k(identity, tx) AS (VALUES {})
                 SELECT k.identity, t.ocpp_transaction_id
                 FROM k JOIN chargers c ON c.identity = k.identity
                 JOIN transactions t
                   ON t.charger_id = c.id AND t.station_transaction_id = k.tx
                 WHERE t.stopped_at IS NOT NULL AND t.cost IS NULL",
                tuples(backend, rows, &["{}", "{}"])
            )
        }
        let mut found = Vec::new();
        for (form, run) in runs(keys) {
            let mut query = sqlx::query_as(statement(&CACHE, self.backend, form, make));
            for (identity, tx) in run {
                query = query.bind(*identity).bind(*tx);
            }
            found.extend(query.fetch_all(self.db()).await?);
        }
        Ok(found)
    }

    /// Up to `limit` of a charger's transactions that pass `filter`, newest start first.
    pub async fn transactions_of_charger(
        &self,
        charger_id: i64,
        filter: &TransactionFilter,
        limit: i64,
    ) -> Result<Vec<TransactionRow>> {
        let stopped = filter.status.map(|s| match s {
            TransactionStatus::Active => 0_i64,
            TransactionStatus::Stopped => 1,
        });
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM transactions
             WHERE charger_id = $1
               AND ($2 IS NULL OR (CASE WHEN stopped_at IS NULL THEN 0 ELSE 1 END) = $2)
               AND ($3 IS NULL OR connector_id = $3)
               AND ($4 IS NULL OR LOWER(id_tag) = LOWER($4))
               AND ($5 IS NULL OR started_at >= $5)
               AND ($6 IS NULL OR started_at < $6)
             ORDER BY started_at DESC, id DESC
             LIMIT $7"
        ))
        .bind(charger_id)
        .bind(stopped)
        .bind(filter.connector_id)
        .bind(filter.id_tag.as_deref())
        .bind(filter.started_after.as_deref())
        .bind(filter.started_before.as_deref())
        .bind(limit)
        .fetch_all(self.db())
        .await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StateChange;
    use crate::test_support::{charger_id, store_test};

    fn at(minute: u32) -> String {
        format!("2026-02-10T09:{minute:02}:00.000000Z")
    }

    fn start(identity: &str, id: i64, connector: i64, tag: &str, minute: u32) -> StateChange {
        StateChange::TransactionStarted {
            identity: identity.into(),
            ocpp_transaction_id: id,
            connector_id: connector,
            id_tag: tag.into(),
            id_tag_status: Some("Accepted".into()),
            meter_start: 1000,
            reservation_id: None,
            started_at: at(minute),
            at: at(minute),
        }
    }

    fn stop(identity: &str, id: i64, minute: u32) -> StateChange {
        StateChange::TransactionStopped {
            identity: identity.into(),
            ocpp_transaction_id: id,
            meter_stop: 2500,
            stopped_at: at(minute),
            reason: "Local".into(),
            at: at(minute),
            signed: Vec::new(),
        }
    }

    async fn ids(store: &Store, charger: i64, filter: TransactionFilter, limit: i64) -> Vec<i64> {
        store
            .transactions_of_charger(charger, &filter, limit)
            .await
            .unwrap()
            .iter()
            .map(|t| t.ocpp_transaction_id)
            .collect()
    }

    store_test!(each_filter_narrows_a_chargers_transactions, |store| {
        let cp1 = charger_id(&store, "CP-1").await;
        let cp2 = charger_id(&store, "CP-2").await;
        store
            .apply(&[
                start("CP-1", 1, 1, "TAG-A", 0),
                stop("CP-1", 1, 5),
                start("CP-1", 2, 2, "tag-b", 10),
                start("CP-1", 3, 1, "TAG-B", 20),
                stop("CP-1", 3, 25),
                start("CP-2", 4, 1, "TAG-A", 30),
            ])
            .await
            .unwrap();

        assert_eq!(ids(&store, cp1, Default::default(), 100).await, [3, 2, 1]);
        assert_eq!(ids(&store, cp1, Default::default(), 2).await, [3, 2]);
        assert_eq!(ids(&store, cp2, Default::default(), 100).await, [4]);
        let only = |f: fn(&mut TransactionFilter)| {
            let mut filter = TransactionFilter::default();
            f(&mut filter);
            filter
        };
        let active = only(|f| f.status = Some(TransactionStatus::Active));
        assert_eq!(ids(&store, cp1, active, 100).await, [2]);
        let stopped = only(|f| f.status = Some(TransactionStatus::Stopped));
        assert_eq!(ids(&store, cp1, stopped, 100).await, [3, 1]);
        let connector = only(|f| f.connector_id = Some(1));
        assert_eq!(ids(&store, cp1, connector, 100).await, [3, 1]);
        let tag = only(|f| f.id_tag = Some("Tag-B".into()));
        assert_eq!(ids(&store, cp1, tag, 100).await, [3, 2]);
        let after = only(|f| f.started_after = Some(at(10)));
        assert_eq!(ids(&store, cp1, after, 100).await, [3, 2]);
        let before = only(|f| f.started_before = Some(at(10)));
        assert_eq!(ids(&store, cp1, before, 100).await, [1]);
        let all = TransactionFilter {
            status: Some(TransactionStatus::Stopped),
            connector_id: Some(1),
            id_tag: Some("tag-a".into()),
            started_after: Some(at(0)),
            started_before: Some(at(1)),
        };
        assert_eq!(ids(&store, cp1, all, 100).await, [1]);

        let rows = store
            .transactions_of_charger(cp1, &Default::default(), 100)
            .await
            .unwrap();
        let (stopped, running) = (&rows[0], &rows[1]);
        assert_eq!(
            (stopped.meter_stop, stopped.stopped_at.as_deref()),
            (Some(2500), Some(at(25).as_str()))
        );
        assert_eq!(stopped.stop_reason.as_deref(), Some("Local"));
        assert_eq!(
            (running.meter_stop, running.stop_reason.as_deref()),
            (None, None)
        );
        assert_eq!(running.connector_id, 2);
        assert!(running.charger_connector_id.is_some());
    });

    store_test!(a_transaction_is_found_by_the_id_the_api_shows, |store| {
        let cp1 = charger_id(&store, "CP-1").await;
        let cp2 = charger_id(&store, "CP-2").await;
        store
            .apply(&[start("CP-1", 7, 1, "TAG-A", 0), stop("CP-1", 7, 5)])
            .await
            .unwrap();
        let found = store.transaction_of_charger(cp1, 7).await.unwrap();
        let found = found.expect("CP-1's transaction 7");
        assert_eq!(
            (found.meter_stop, found.id_tag.as_str()),
            (Some(2500), "TAG-A")
        );
        assert_eq!(store.transaction_of_charger(cp1, 8).await.unwrap(), None);
        assert_eq!(
            store.transaction_of_charger(cp2, 7).await.unwrap(),
            None,
            "another charger's"
        );
    });
}
