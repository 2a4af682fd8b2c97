//! Cheap reconnects: a client that kept its session resumes instead of a full handshake, even
//! after the server's certificate was rotated.

use std::sync::Arc;

use cms_tls::ServerTls;
use cms_tls::rustls::client::Resumption;
use cms_tls::rustls::{ClientConfig, HandshakeKind, SupportedProtocolVersion};
use cms_tls::test_pki::{ClientFiles, TestPki};

use crate::support::{EchoServer, TLS12, TLS13, client_config, connect_and_echo};

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
