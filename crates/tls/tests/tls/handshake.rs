//! Handshakes as a charger or an HTTPS client makes them.

use std::path::Path;
use std::sync::Arc;

use cms_tls::test_pki::TestPki;
use cms_tls::{ServerTls, TlsFiles};

use crate::support::{
    EchoServer, TLS12, TLS13, certificates, client_config, connect_and_echo, served_chain,
};

#[tokio::test]
async fn a_tls13_client_completes_the_handshake_and_sees_the_servers_chain() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let server = EchoServer::start(ServerTls::load("ocpp", pki.server_files()).unwrap()).await;
    let client = Arc::new(client_config(&pki.ca_certificate(), &[&TLS13], None));

    let stream = connect_and_echo(server.addr, &client).await.unwrap();

    let connection = stream.get_ref().1;
    assert_eq!(
        connection.protocol_version(),
        Some(cms_tls::rustls::ProtocolVersion::TLSv1_3)
    );
    let chain = served_chain(&stream);
    assert_eq!(chain, certificates(&pki.server_chain()));
    assert_eq!(
        chain.len(),
        2,
        "the server certificate and its intermediate"
    );
}

#[tokio::test]
async fn a_tls12_client_completes_the_handshake_too() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let server = EchoServer::start(ServerTls::load("ocpp", pki.server_files()).unwrap()).await;
    let client = Arc::new(client_config(&pki.ca_certificate(), &[&TLS12], None));

    let stream = connect_and_echo(server.addr, &client).await.unwrap();

    let connection = stream.get_ref().1;
    assert_eq!(
        connection.protocol_version(),
        Some(cms_tls::rustls::ProtocolVersion::TLSv1_2)
    );
    assert_eq!(served_chain(&stream), certificates(&pki.server_chain()));
}

#[tokio::test]
async fn http11_is_chosen_when_offered_and_a_client_offering_no_alpn_is_served_all_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let server = EchoServer::start(ServerTls::load("http", pki.server_files()).unwrap()).await;
    let mut browser_like = client_config(&pki.ca_certificate(), &[&TLS13], None);
    browser_like.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let charger_like = client_config(&pki.ca_certificate(), &[&TLS13], None);

    let offered = connect_and_echo(server.addr, &Arc::new(browser_like))
        .await
        .unwrap();
    let not_offered = connect_and_echo(server.addr, &Arc::new(charger_like))
        .await
        .unwrap();

    assert_eq!(offered.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    assert_eq!(not_offered.get_ref().1.alpn_protocol(), None);
}

#[tokio::test]
async fn pkcs1_rsa_and_sec1_ec_keys_serve_as_well_as_pkcs8() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for name in ["rsa-pkcs1", "ec-sec1"] {
        let chain = fixtures.join(format!("{name}.pem"));
        let files = TlsFiles::new(&chain, fixtures.join(format!("{name}.key")));
        let server = EchoServer::start(ServerTls::load("http", files).unwrap()).await;
        let client = Arc::new(client_config(&chain, &[&TLS13, &TLS12], None));

        let stream = connect_and_echo(server.addr, &client).await.unwrap();

        assert_eq!(served_chain(&stream), certificates(&chain), "{name}");
    }
}

#[tokio::test]
async fn the_server_picks_aes_128_gcm_though_the_client_prefers_aes_256() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let server = EchoServer::start(ServerTls::load("ocpp", pki.server_files()).unwrap()).await;
    let client = client_config(&pki.ca_certificate(), &[&TLS13, &TLS12], None);
    let offered = client.crypto_provider().cipher_suites[0].suite();
    assert_eq!(
        offered,
        cms_tls::rustls::CipherSuite::TLS13_AES_256_GCM_SHA384,
        "rustls' default client asks for AES-256 first"
    );

    let stream = connect_and_echo(server.addr, &Arc::new(client))
        .await
        .unwrap();

    let negotiated = stream.get_ref().1.negotiated_cipher_suite().unwrap();
    assert_eq!(
        negotiated.suite(),
        cms_tls::rustls::CipherSuite::TLS13_AES_128_GCM_SHA256
    );
}
