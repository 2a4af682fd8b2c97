//! For test suites (this crate's and the end-to-end suite): a PostgreSQL database of their own.

use sqlx::{Connection, Executor};

/// The test server's URL (`CMS_TEST_POSTGRES_URL`, which `scripts/test` sets). Without it,
/// PostgreSQL tests are skipped outside CI and fail in CI.
pub fn postgres_url() -> Option<String> {
    match std::env::var("CMS_TEST_POSTGRES_URL") {
        Ok(url) => Some(url),
        Err(_) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CMS_TEST_POSTGRES_URL is not set: run the tests with scripts/test"
            );
            eprintln!("skipped: CMS_TEST_POSTGRES_URL is not set (scripts/test sets it)");
            None
        }
    }
}

/// Creates an empty schema on the server at `url` and returns a URL whose connections use it:
/// a database of its own for one test, far cheaper than `CREATE DATABASE`.
pub async fn fresh_schema(url: &str) -> Result<String, sqlx::Error> {
    sqlx::any::install_default_drivers();
    let schema = format!("test_{}", uuid::Uuid::new_v4().simple());
    let mut admin = sqlx::AnyConnection::connect(url).await?;
    admin
        .execute(format!("CREATE SCHEMA {schema}").as_str())
        .await?;
    admin.close().await?;
    let separator = if url.contains('?') { '&' } else { '?' };
    Ok(format!("{url}{separator}options[search_path]={schema}"))
}

/// Runs `sql` on the database at `url` over a connection of its own: for a test that changes
/// the schema under a store (a constraint the store does not know of, say).
pub async fn execute(url: &str, sql: &str) -> Result<(), sqlx::Error> {
    sqlx::any::install_default_drivers();
    let mut connection = sqlx::AnyConnection::connect(url).await?;
    connection.execute(sql).await?;
    connection.close().await
}
