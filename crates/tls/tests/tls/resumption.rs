//! Cheap reconnects: a client that kept its session resumes instead of a full handshake, even
//! after the server's certificate was rotated; but not once its certificate would no longer be
//! accepted (its CA removed, the certificate revoked or expired).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cms_tls::ServerTls;
use cms_tls::rustls::client::Resumption;
use cms_tls::rustls::{ClientConfig, HandshakeKind, SupportedProtocolVersion};
use cms_tls::test_pki::{ClientFiles, TestPki};

use crate::support::{EchoServer, TLS12, TLS13, client_config, connect, connect_and_echo};

fn resuming_client(
    pki: &TestPki,
    version: &'static SupportedProtocolVersion,
    certificate: Option<&ClientFiles>,
) -> Arc<ClientConfig> {
    let mut config = client_config(&pki.ca_certificate(), &[version], certificate);
    config.resumption = Resumption::in_memory_sessions(16);
    Arc::new(config)
}

#[tokio::test]
async fn a_reconnect_with_the_same_session_store_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let server = EchoServer::start(ServerTls::load("ocpp", pki.server_files()).unwrap()).await;

    for version in [&TLS13, &TLS12] {
        let client = resuming_client(&pki, version, None);
        let first = connect_and_echo(server.addr, &client).await.unwrap();
        let second = connect_and_echo(server.addr, &client).await.unwrap();

        assert_eq!(
            first.get_ref().1.handshake_kind(),
            Some(HandshakeKind::Full),
            "{version:?}"
        );
        assert_eq!(
            second.get_ref().1.handshake_kind(),
            Some(HandshakeKind::Resumed),
            "{version:?}"
        );
    }
}

#[tokio::test]
async fn a_resumed_session_still_names_the_chargers_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let mut server = EchoServer::start(ServerTls::load("ocpp", pki.server_files()).unwrap()).await;
    let client = resuming_client(&pki, &TLS13, Some(&pki.client("CP-0042")));

    connect_and_echo(server.addr, &client).await.unwrap();
    server.next_handshake().await.unwrap();
    let second = connect_and_echo(server.addr, &client).await.unwrap();

    assert_eq!(
        second.get_ref().1.handshake_kind(),
        Some(HandshakeKind::Resumed)
    );
    let certificate = server
        .next_handshake()
        .await
        .unwrap()
        .expect("the resumed certificate");
    assert!(certificate.identifies("CP-0042"));
}

#[tokio::test]
async fn sessions_resume_across_a_certificate_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let tls = ServerTls::load("ocpp", pki.server_files()).unwrap();
    let server = EchoServer::start(tls.clone()).await;

    for version in [&TLS13, &TLS12] {
        let client = resuming_client(&pki, version, None);
        connect_and_echo(server.addr, &client).await.unwrap();
        pki.replace_server_certificate();
        tls.reload().unwrap();

        let after = connect_and_echo(server.addr, &client).await.unwrap();

        assert_eq!(
            after.get_ref().1.handshake_kind(),
            Some(HandshakeKind::Resumed),
            "{version:?}"
        );
    }
}

/// Writes `contents` over `path` by a rename, as a certificate manager would.
fn replace_file(path: &Path, contents: &[u8]) {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, contents).unwrap();
    std::fs::rename(&partial, path).unwrap();
}

/// The client resumes (or tries to) and is refused: the server reports why, and no data passes.
async fn expect_resumption_refused(
    server: &mut EchoServer,
    client: &Arc<ClientConfig>,
    why: &str,
    what: &str,
) {
    let outcome = match connect(server.addr, client).await {
        Ok(mut stream) => crate::support::echo(&mut stream, b"Heartbeat")
            .await
            .map(drop),
        Err(error) => Err(error),
    };
    assert!(outcome.is_err(), "{what}: the client exchanged data");
    let refusal = server.next_handshake().await.unwrap_err();
    assert!(refusal.contains(why), "{what}: {refusal}");
}

#[tokio::test]
async fn a_session_whose_ca_was_removed_from_the_client_ca_file_does_not_resume() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let client_ca = dir.path().join("client-ca.pem");
    std::fs::copy(pki.ca_certificate(), &client_ca).unwrap();
    let files = pki
        .server_files_without_client_ca()
        .with_client_ca(&client_ca);
    let tls = ServerTls::load("ocpp", files).unwrap();
    let mut server = EchoServer::start(tls.clone()).await;
    let charger = pki.client("CP-0042");

    for version in [&TLS13, &TLS12] {
        replace_file(&client_ca, &std::fs::read(pki.ca_certificate()).unwrap());
        tls.reload().unwrap();
        let client = resuming_client(&pki, version, Some(&charger));
        connect_and_echo(server.addr, &client).await.unwrap();
        server.next_handshake().await.unwrap();

        replace_file(
            &client_ca,
            &std::fs::read(pki.other_ca_certificate()).unwrap(),
        );
        tls.reload().unwrap();

        let what = format!("{version:?}, CA removed");
        expect_resumption_refused(&mut server, &client, "UnknownIssuer", &what).await;
    }
}

#[tokio::test]
async fn a_session_whose_certificate_was_revoked_since_does_not_resume() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let tls = ServerTls::load("ocpp", pki.server_files().with_client_crl(pki.crl())).unwrap();
    let mut server = EchoServer::start(tls.clone()).await;

    for version in [&TLS13, &TLS12] {
        let charger = pki.client("CP-0042");
        let client = resuming_client(&pki, version, Some(&charger));
        connect_and_echo(server.addr, &client).await.unwrap();
        server.next_handshake().await.unwrap();

        pki.revoke(&charger);
        tls.reload().unwrap();

        let what = format!("{version:?}, revoked");
        expect_resumption_refused(&mut server, &client, "Revoked", &what).await;
    }
}

#[tokio::test]
async fn a_session_whose_certificate_expired_since_does_not_resume() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let mut server = EchoServer::start(ServerTls::load("ocpp", pki.server_files()).unwrap()).await;
    // Long enough for a full handshake on a busy machine; the trust itself does not change.
    let valid_for = Duration::from_secs(4);
    let charger = pki.short_lived_client("CP-0042", valid_for);
    let client = resuming_client(&pki, &TLS13, Some(&charger));
    connect_and_echo(server.addr, &client).await.unwrap();
    server.next_handshake().await.unwrap();

    tokio::time::sleep(valid_for + Duration::from_secs(1)).await;

    expect_resumption_refused(&mut server, &client, "Expired", "expired since").await;
}
