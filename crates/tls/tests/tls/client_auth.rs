//! OCPP security profile 3 on a port shared with profile 2: a certificate is asked for, a good
//! one is read, a bad one ends the handshake, and none at all is let through to the gateway.

use std::sync::Arc;

use cms_tls::ServerTls;
use cms_tls::test_pki::TestPki;

use crate::support::{EchoServer, TLS12, TLS13, client_config, connect_and_echo};

#[tokio::test]
async fn a_client_certificate_of_the_ca_is_accepted_and_its_common_name_read() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let mut server = EchoServer::start(ServerTls::load("ocpp", pki.server_files()).unwrap()).await;
    let charger = pki.client("CP-0042");

    for version in [&TLS13, &TLS12] {
        let client = Arc::new(client_config(
            &pki.ca_certificate(),
            &[version],
            Some(&charger),
        ));
        connect_and_echo(server.addr, &client).await.unwrap();

        let certificate = server
            .next_handshake()
            .await
            .unwrap()
            .expect("a client certificate");
        assert_eq!(certificate.common_names(), ["CP-0042"], "{version:?}");
        assert!(certificate.identifies("CP-0042"));
        assert!(
            !certificate.identifies("CP-0043"),
            "another charger's identity"
        );
        assert_eq!(
            certificate.not_after().to_rfc3339(),
            "4096-01-01T00:00:00+00:00"
        );
    }
}

/// OCPP 2.0.1 Part 2 A00.FR.404 (and the 1.6 security white paper, edition 2 on): the subject's
/// O names the charging station operator; the gateway compares it when told the operator's name.
#[tokio::test]
async fn the_subject_organization_of_a_client_certificate_is_read_beside_its_common_name() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let mut server = EchoServer::start(ServerTls::load("ocpp", pki.server_files()).unwrap()).await;

    for (files, organizations) in [
        (pki.client_of("CP-0042", "Example CPO"), vec!["Example CPO"]),
        (pki.client("CP-0042"), vec![]),
    ] {
        let client = Arc::new(client_config(
            &pki.ca_certificate(),
            &[&TLS13],
            Some(&files),
        ));
        connect_and_echo(server.addr, &client).await.unwrap();

        let certificate = server
            .next_handshake()
            .await
            .unwrap()
            .expect("a client certificate");
        assert_eq!(certificate.common_names(), ["CP-0042"]);
        assert_eq!(certificate.organizations(), organizations);
    }
}

#[tokio::test]
async fn a_client_certificate_from_another_ca_fails_the_handshake() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let mut server = EchoServer::start(ServerTls::load("ocpp", pki.server_files()).unwrap()).await;
    let impostor = pki.foreign_client("CP-0042");

    for version in [&TLS13, &TLS12] {
        let client = Arc::new(client_config(
            &pki.ca_certificate(),
            &[version],
            Some(&impostor),
        ));
        let outcome = connect_and_echo(server.addr, &client).await;

        assert!(outcome.is_err(), "{version:?}: the impostor exchanged data");
        let refusal = server.next_handshake().await.unwrap_err();
        assert!(refusal.contains("UnknownIssuer"), "{version:?}: {refusal}");
    }
}

#[tokio::test]
async fn an_expired_client_certificate_fails_the_handshake() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let mut server = EchoServer::start(ServerTls::load("ocpp", pki.server_files()).unwrap()).await;
    let lapsed = pki.expired_client("CP-0042");
    let client = Arc::new(client_config(
        &pki.ca_certificate(),
        &[&TLS13],
        Some(&lapsed),
    ));

    let outcome = connect_and_echo(server.addr, &client).await;

    assert!(outcome.is_err(), "an expired certificate exchanged data");
    let refusal = server.next_handshake().await.unwrap_err();
    assert!(refusal.contains("expired"), "{refusal}");
}

#[tokio::test]
async fn a_client_without_a_certificate_gets_in_for_the_gateway_to_judge() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let mut server = EchoServer::start(ServerTls::load("ocpp", pki.server_files()).unwrap()).await;

    for version in [&TLS13, &TLS12] {
        let profile_2 = Arc::new(client_config(&pki.ca_certificate(), &[version], None));
        connect_and_echo(server.addr, &profile_2).await.unwrap();

        assert_eq!(server.next_handshake().await, Ok(None), "{version:?}");
    }
}

#[tokio::test]
async fn a_listener_without_a_client_ca_asks_for_no_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let tls = ServerTls::load("http", pki.server_files_without_client_ca()).unwrap();
    let mut server = EchoServer::start(tls).await;
    let charger = pki.client("CP-0042");
    let client = Arc::new(client_config(
        &pki.ca_certificate(),
        &[&TLS13],
        Some(&charger),
    ));

    connect_and_echo(server.addr, &client).await.unwrap();

    assert_eq!(
        server.next_handshake().await,
        Ok(None),
        "no certificate was asked for or read"
    );
}

#[tokio::test]
async fn a_client_certificate_on_the_crl_fails_the_handshake_while_others_of_the_ca_get_in() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let revoked = pki.client("CP-0042");
    let other = pki.client("CP-0043");
    pki.revoke(&revoked);
    let files = pki.server_files().with_client_crl(pki.crl());
    let mut server = EchoServer::start(ServerTls::load("ocpp", files).unwrap()).await;

    for version in [&TLS13, &TLS12] {
        let client = Arc::new(client_config(
            &pki.ca_certificate(),
            &[version],
            Some(&revoked),
        ));
        let outcome = connect_and_echo(server.addr, &client).await;

        assert!(
            outcome.is_err(),
            "{version:?}: a revoked certificate exchanged data"
        );
        let refusal = server.next_handshake().await.unwrap_err();
        assert!(refusal.contains("Revoked"), "{version:?}: {refusal}");

        let client = Arc::new(client_config(
            &pki.ca_certificate(),
            &[version],
            Some(&other),
        ));
        connect_and_echo(server.addr, &client).await.unwrap();
        let certificate = server
            .next_handshake()
            .await
            .unwrap()
            .expect("a certificate");
        assert!(certificate.identifies("CP-0043"), "{version:?}");
    }
}
