//! What a store held before tariffs had versions and readings were kept by the minute
//! (migrations 0025 and 0026) is carried over: each tariff becomes its version 1, each
//! transaction keeps its copy of its tariff, and the readings kept so far are folded by the
//! minute as new ones are.

use crate::{Backend, Store};
use sqlx::Executor;

/// The schema before migration 0025, made on the database at `url`.
async fn schema_before_versions(url: &str, backend: Backend) {
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(url).await.unwrap();
    let mut before = match backend {
        Backend::Sqlite => sqlx::migrate!("./migrations/sqlite"),
        Backend::Postgres => sqlx::migrate!("./migrations/postgres"),
    };
    before.migrations = before
        .migrations
        .iter()
        .filter(|m| m.version < 25)
        .cloned()
        .collect();
    before.run(&pool).await.unwrap();
    // A team's tariff, edited once, and a transaction priced with it: two readings and two
    // status changes in its 10:05, one reading in its 10:06.
    let t = "2026-02-10T10:00:00.000000Z";
    pool.execute(
        format!(
            "INSERT INTO teams (id, uuid, name, type, created_at, updated_at)
               VALUES (1, 'team', 'Ops', 'operators', '{t}', '{t}');
             INSERT INTO sites (id, uuid, team_id, name, street, postal_code, house_number,
               city, country, created_at, updated_at)
               VALUES (1, 'site', 1, 'Site', 'Street', '1000', 1, 'City', 'NL', '{t}', '{t}');
             INSERT INTO chargers (id, uuid, site_id, identity, created_at, updated_at)
               VALUES (1, 'charger', 1, 'CP-1', '{t}', '{t}');
             INSERT INTO tariffs (id, uuid, team_id, name, currency, body, created_at, updated_at)
               VALUES (1, 'tariff', 1, 'Edited', 'EUR', '{{\"v\":2}}', '{t}',
                 '2026-02-10T10:30:00.000000Z');
             INSERT INTO transactions (id, charger_id, connector_id, ocpp_transaction_id, id_tag,
               meter_start, started_at, created_at, updated_at, tariff_id, tariff_uuid, tariff)
               VALUES (1, 1, 1, 7, 'TAG', 0, '{t}', '{t}', '{t}', 1, 'tariff', '{{\"v\":1}}');
             INSERT INTO transaction_readings (transaction_id, at, energy_wh, parking) VALUES
               (1, '2026-02-10T10:05:40.000000Z', 540, NULL),
               (1, '2026-02-10T10:05:10.000000Z', 510, NULL),
               (1, '2026-02-10T10:05:20.000000Z', NULL, 1),
               (1, '2026-02-10T10:05:30.000000Z', NULL, 0),
               (1, '2026-02-10T10:06:10.000000Z', 610, NULL);"
        )
        .as_str(),
    )
    .await
    .unwrap();
    pool.close().await;
}

async fn carried_over(store: &Store) {
    let tariff = store.tariff(1, "tariff").await.unwrap().unwrap();
    assert_eq!((tariff.version, tariff.body.as_str()), (1, "{\"v\":2}"));
    let version: (i64, String, String) = sqlx::query_as(
        "SELECT version, body, valid_from FROM tariff_versions WHERE tariff_uuid = 'tariff'",
    )
    .fetch_one(&store.pool)
    .await
    .unwrap();
    let since_its_edit = "2026-02-10T10:30:00.000000Z";
    assert_eq!(version, (1, "{\"v\":2}".into(), since_its_edit.into()));
    let transaction = store.transaction_of("CP-1", 7).await.unwrap().unwrap();
    assert_eq!(transaction.tariff.as_deref(), Some("{\"v\":1}"));
    assert_eq!(transaction.tariff_version, None);
    let minutes: Vec<_> = store
        .transaction_readings(&[1])
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.minute, m.energy_at, m.energy_wh, m.parking_at, m.parking))
        .collect();
    let at = |s: &str| Some(format!("2026-02-10T10:{s}.000000Z"));
    assert_eq!(
        minutes,
        [
            (
                "2026-02-10T10:05".to_string(),
                at("05:10"),
                Some(510),
                at("05:30"),
                Some(0)
            ),
            (
                "2026-02-10T10:06".to_string(),
                at("06:10"),
                Some(610),
                None,
                None
            ),
        ]
    );
}

#[tokio::test]
async fn a_sqlite_store_is_carried_over() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cms.sqlite3");
    let url = format!("sqlite://{}?mode=rwc", file.display());
    schema_before_versions(&url, Backend::Sqlite).await;
    carried_over(&Store::open_file(&file).await.unwrap()).await;
}

#[tokio::test]
async fn a_postgres_store_is_carried_over() {
    let Some(url) = crate::testing::postgres_url() else {
        return;
    };
    let url = crate::testing::fresh_schema(&url).await.unwrap();
    schema_before_versions(&url, Backend::Postgres).await;
    carried_over(&Store::open_url(&url).await.unwrap()).await;
}
