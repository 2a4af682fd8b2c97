//! Store tests run on both backends: SQLite in a temporary directory, and PostgreSQL in a fresh
//! schema of the server that `CMS_TEST_POSTGRES_URL` names (`scripts/test` starts one).

use crate::Store;

/// Declares a test that runs once on each backend, as `NAME::sqlite` and `NAME::postgres`.
macro_rules! store_test {
    ($name:ident, |$store:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test]
            async fn sqlite() {
                let ($store, _dir) = $crate::test_support::sqlite().await;
                $body
            }
            #[tokio::test]
            async fn postgres() {
                let Some($store) = $crate::test_support::postgres().await else {
                    return;
                };
                $body
            }
        }
    };
}
pub(crate) use store_test;

pub async fn sqlite() -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (Store::open(dir.path()).await.unwrap(), dir)
}

/// A store in a new schema of the test server; `None` (the test is skipped) when no server is
/// configured outside CI. In CI a missing server fails the test.
pub async fn postgres() -> Option<Store> {
    let url = crate::testing::postgres_url()?;
    let url = crate::testing::fresh_schema(&url).await.unwrap();
    Some(Store::open_url(&url).await.unwrap())
}

/// Registers `new` (on the operators' default site, unless it names one) and returns it as an
/// operator sees it.
pub async fn operator_charger(store: &Store, new: crate::NewCharger) -> crate::ChargerRow {
    let op = store.ensure_user("op@example.com").await.unwrap();
    let uuid = store.add_charger(&new).await.unwrap();
    store
        .charger_visible_to(op.id, &uuid)
        .await
        .unwrap()
        .unwrap()
}

/// Registers `identity` on the operators' default site; returns its id.
pub async fn charger_id(store: &Store, identity: &str) -> i64 {
    let new = crate::NewCharger {
        identity: identity.into(),
        ..Default::default()
    };
    operator_charger(store, new).await.id
}
