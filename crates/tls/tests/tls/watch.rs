//! `watch`: a rotated certificate is served without anyone calling `reload`, whether the
//! files change under it or an operator sends SIGHUP.

use std::sync::Arc;
use std::time::Duration;

use cms_tls::ServerTls;
use cms_tls::rustls::ClientConfig;
use cms_tls::rustls::pki_types::CertificateDer;
use cms_tls::test_pki::TestPki;
use tokio_util::sync::CancellationToken;

use crate::support::{
    EchoServer, STEP, TLS13, certificates, client_config, connect_and_echo, served_chain,
};

/// Polls fast enough that a test is not waiting on it.
const POLL: Duration = Duration::from_millis(50);

async fn wait_until_served(
    server: &EchoServer,
    client: &Arc<ClientConfig>,
    chain: &[CertificateDer<'_>],
) {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        let stream = connect_and_echo(server.addr, client).await.unwrap();
        if served_chain(&stream) == chain {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the new certificate was never served"
        );
        tokio::time::sleep(POLL).await;
    }
}

#[tokio::test]
async fn a_replaced_certificate_file_is_noticed_and_served_to_new_connections() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let tls = ServerTls::load("ocpp", pki.server_files()).unwrap();
    let server = EchoServer::start(tls.clone()).await;
    let client = Arc::new(client_config(&pki.ca_certificate(), &[&TLS13], None));
    let shutdown = CancellationToken::new();
    let watcher = tls.watch(POLL, shutdown.clone()).unwrap();

    pki.replace_server_certificate();

    wait_until_served(&server, &client, &certificates(&pki.server_chain())).await;
    shutdown.cancel();
    tokio::time::timeout(STEP, watcher)
        .await
        .expect("watch ends on shutdown")
        .unwrap();
}

#[tokio::test]
async fn sighup_reloads_the_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let tls = ServerTls::load("ocpp", pki.server_files()).unwrap();
    let server = EchoServer::start(tls.clone()).await;
    let client = Arc::new(client_config(&pki.ca_certificate(), &[&TLS13], None));
    let shutdown = CancellationToken::new();
    // Polling too slow to be what notices the change: only the signal can.
    let _watcher = tls
        .watch(Duration::from_secs(3600), shutdown.clone())
        .unwrap();
    let old_chain = certificates(&pki.server_chain());

    pki.replace_server_certificate();
    let before_signal = connect_and_echo(server.addr, &client).await.unwrap();
    rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::HUP).unwrap();

    assert_eq!(
        served_chain(&before_signal),
        old_chain,
        "nothing reloaded before SIGHUP"
    );
    wait_until_served(&server, &client, &certificates(&pki.server_chain())).await;
    shutdown.cancel();
}
