//! Abuse cases of secrets given to `cms`: a database password never reaches the logs, an error
//! message or `--help`, whatever its shape.

use crate::support::{Api, Cms};
use std::process::{Command, Stdio};

/// The test server's URL with `password` put in as `shape` says.
fn with_password(url: &str, shape: &str, password: &str) -> String {
    match shape {
        "user info" => url.replacen(
            "postgres://postgres@",
            &format!("postgres://postgres:{password}@"),
            1,
        ),
        "query" => format!("{url}&password={password}"),
        other => panic!("no shape {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_password_never_appears_in_the_logs() {
    let Some(server) = cms_store::testing::postgres_url() else {
        return;
    };
    // The test server trusts local connections, so any password lets `cms up` in.
    for (shape, password) in [
        ("user info", "Plain-S3cret-1"),
        // Characters a URL reserves are percent-encoded in a password, as URLs require.
        ("user info", "pa%40ss%3A%2F-S3cret-2"),
        ("query", "Query-S3cret-4"),
    ] {
        let schema = cms_store::testing::fresh_schema(&server)
            .await
            .expect("a schema");
        let url = with_password(&schema, shape, password);
        let cms = Cms::up_on_database(&url).await;
        // Something logged about the store on the way: it started and served a request.
        let api = Api::new(&cms, &cms.operator_token().await);
        assert_eq!(api.get("/api/v3/chargers").await.status, 200);
        let log = cms.log();
        assert!(log.contains("cms up"), "the start is logged: {log}");
        // Every password holds `S3cret`; no fragment of one may show.
        assert!(
            !log.contains("S3cret"),
            "{shape} password {password:?} leaked: {log}"
        );
    }
}

#[test]
fn a_database_password_never_appears_in_an_error_or_in_help() {
    let cms = env!("CARGO_BIN_EXE_cms");
    // A raw `@` in the password too: wrong as a URL, and the error must not show it either.
    let secret = "pa@ss-Unreachable-S3cret";
    // Nothing listens on port 1: the store cannot be opened and `cms up` says why.
    let url = format!("postgres://cms:{secret}@127.0.0.1:1/cms?password={secret}");
    let data = tempfile::tempdir().expect("a data dir");
    let out = Command::new(cms)
        .args([
            "up",
            "--ocpp-addr",
            "127.0.0.1:0",
            "--http-addr",
            "127.0.0.1:0",
        ])
        .arg("--data-dir")
        .arg(data.path())
        .env("CMS_DATABASE_URL", &url)
        .stdin(Stdio::null())
        .output()
        .expect("run cms up");
    assert!(!out.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("127.0.0.1"),
        "the error names the database: {said}"
    );
    assert!(!said.contains("S3cret"), "the password leaked: {said}");

    // Neither an unknown URL form nor `--help` shows it.
    for args in [
        &["up", "--database-url", "host=db password=S3cret-Form"][..],
        &["up", "--help"],
    ] {
        let out = Command::new(cms)
            .args(args)
            .env("CMS_DATABASE_URL", &url)
            .env("CMS_CHARGER_PASSWORD", "S3cret-Charger-Pw")
            .env("CMS_USER_PASSWORD", "S3cret-User-Pw")
            .arg("--data-dir")
            .arg(data.path())
            .stdin(Stdio::null())
            .output()
            .expect("run cms");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!said.contains("S3cret"), "{args:?} showed a secret: {said}");
    }
    for command in [
        &["charger", "add", "--help"][..],
        &["user", "create", "--help"],
        &["gateway", "--help"],
        &["api", "--help"],
    ] {
        let out = Command::new(cms)
            .args(command)
            .env("CMS_DATABASE_URL", &url)
            .env("CMS_CHARGER_PASSWORD", "S3cret-Charger-Pw")
            .env("CMS_USER_PASSWORD", "S3cret-User-Pw")
            .env("CMS_KAFKA_OPTIONS", "sasl.password=S3cret-Kafka-Pw")
            .output()
            .expect("run cms");
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.contains("--"), "{command:?} printed its help: {said}");
        assert!(
            !said.contains("S3cret"),
            "{command:?} showed a secret: {said}"
        );
    }
}
