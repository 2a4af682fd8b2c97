//! The store over TLS: `cms up` on PostgreSQL with `sslmode=verify-full` (rustls, the server's
//! CA named by `sslrootcert`), and refused when the CA is not the one that signed the server.
//!
//! The test server of scripts/test serves TLS with a throwaway CA (`CMS_TEST_POSTGRES_CA`).

use crate::support::{Api, Cms};
use std::process::{Command, Stdio};

/// The test server's CA, or `None` (the test is skipped) outside scripts/test.
fn server_ca() -> Option<String> {
    match std::env::var("CMS_TEST_POSTGRES_CA") {
        Ok(ca) => Some(ca),
        Err(_) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CMS_TEST_POSTGRES_CA is not set: run the tests with scripts/test"
            );
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_is_reached_over_verified_tls() {
    let (Some(server), Some(ca)) = (cms_store::testing::postgres_url(), server_ca()) else {
        return;
    };
    let schema = cms_store::testing::fresh_schema(&server)
        .await
        .expect("a schema");
    // verify-full: TLS, the server's certificate chained to the CA and naming 127.0.0.1.
    // Without TLS the connection could not be made at all.
    let url = format!("{schema}&sslmode=verify-full&sslrootcert={ca}");
    let cms = Cms::up_on_database(&url).await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let uuid = cms.add_charger("CP-TLS-STORE").await;
    let charger = api.get_ok(&format!("/api/v3/chargers/{uuid}")).await;
    assert_eq!(charger["data"]["identity"], "CP-TLS-STORE");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_whose_certificate_does_not_verify_is_refused() {
    let (Some(server), Some(_)) = (cms_store::testing::postgres_url(), server_ca()) else {
        return;
    };
    let schema = cms_store::testing::fresh_schema(&server)
        .await
        .expect("a schema");
    // Another CA than the server's.
    let pki_dir = tempfile::tempdir().expect("a directory");
    let pki = cms_tls::test_pki::TestPki::create(pki_dir.path());
    let wrong = pki.ca_certificate().display().to_string();
    let url = format!("{schema}&sslmode=verify-full&sslrootcert={wrong}");
    let data = tempfile::tempdir().expect("a data dir");
    let out = Command::new(env!("CARGO_BIN_EXE_cms"))
        .args(["token", "create", "--email", "x@example.com", "--name", "x"])
        .arg("--database-url")
        .arg(&url)
        .arg("--data-dir")
        .arg(data.path())
        .stdin(Stdio::null())
        .output()
        .expect("run cms");
    assert!(
        !out.status.success(),
        "connected to a server the CA did not sign"
    );
    let said = String::from_utf8_lossy(&out.stderr).to_lowercase();
    assert!(
        said.contains("certificate") || said.contains("tls"),
        "the error says what is wrong: {said}"
    );
}
