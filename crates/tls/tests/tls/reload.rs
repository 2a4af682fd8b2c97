//! Certificate rotation without a restart: new connections get the new certificate,
//! established ones keep talking, and a broken replacement changes nothing.

use std::sync::Arc;

use cms_tls::ServerTls;
use cms_tls::test_pki::TestPki;
use metrics_exporter_prometheus::PrometheusBuilder;

use crate::support::{
    EchoServer, TLS13, certificates, client_config, connect_and_echo, echo, served_chain,
};

#[tokio::test]
async fn after_a_reload_new_connections_see_the_new_certificate_and_old_ones_keep_talking() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let tls = ServerTls::load("ocpp", pki.server_files()).unwrap();
    let server = EchoServer::start(tls.clone()).await;
    let client = Arc::new(client_config(&pki.ca_certificate(), &[&TLS13], None));
    let old_chain = certificates(&pki.server_chain());
    let mut established = connect_and_echo(server.addr, &client).await.unwrap();

    pki.replace_server_certificate();
    tls.reload().unwrap();
    let fresh = connect_and_echo(server.addr, &client).await.unwrap();

    let new_chain = certificates(&pki.server_chain());
    assert_ne!(new_chain, old_chain);
    assert_eq!(served_chain(&fresh), new_chain);
    assert_eq!(served_chain(&established), old_chain);
    assert_eq!(
        echo(&mut established, b"Heartbeat").await.unwrap(),
        b"Heartbeat"
    );
}

#[tokio::test]
async fn a_broken_replacement_keeps_the_old_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let tls = ServerTls::load("ocpp", pki.server_files()).unwrap();
    let server = EchoServer::start(tls.clone()).await;
    let client = Arc::new(client_config(&pki.ca_certificate(), &[&TLS13], None));
    let good_chain = certificates(&pki.server_chain());
    let good_pem = std::fs::read_to_string(pki.server_chain()).unwrap();
    let cut_short = &good_pem[..good_pem.find("-----END").unwrap() / 2];
    let unrelated = pki.client("CP-0042");

    // Half a file, as a copy cut short leaves it; and a certificate without its key.
    let broken = [
        (cut_short.as_bytes().to_vec(), "NotPem"),
        (
            std::fs::read(&unrelated.certificate).unwrap(),
            "KeyMismatch",
        ),
    ];
    for (contents, expected) in broken {
        std::fs::write(pki.server_chain(), contents).unwrap();

        let error = tls.reload().unwrap_err();
        let stream = connect_and_echo(server.addr, &client).await.unwrap();

        assert!(format!("{error:?}").starts_with(expected), "{error:?}");
        assert_eq!(served_chain(&stream), good_chain);
    }
}

#[test]
fn reloads_are_counted_and_the_expiry_gauge_follows_the_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let recorder = PrometheusBuilder::new().build_recorder();
    let scrape = recorder.handle();

    let before = metrics::with_local_recorder(&recorder, || {
        let tls = ServerTls::load("ocpp", pki.server_files()).unwrap();
        let before = scrape.render();
        let next_year = pki.replace_server_certificate();
        tls.reload().unwrap();
        std::fs::write(pki.server_key(), "not a key").unwrap();
        tls.reload().unwrap_err();
        assert_eq!(
            tls.not_after().to_rfc3339(),
            format!("{next_year}-01-01T00:00:00+00:00")
        );
        before
    });
    let after = scrape.render();

    let expiry = "cms_tls_certificate_expiry_timestamp_seconds{listener=\"ocpp\"}";
    assert_eq!(
        sample(&before, expiry),
        Some(4_102_444_800.0),
        "2100-01-01:\n{before}"
    );
    assert_eq!(
        sample(&after, expiry),
        Some(4_133_980_800.0),
        "2101-01-01:\n{after}"
    );
    let ok = "cms_tls_reloads_total{listener=\"ocpp\",result=\"ok\"}";
    let failed = "cms_tls_reloads_total{listener=\"ocpp\",result=\"error\"}";
    assert_eq!(sample(&after, ok), Some(1.0), "{after}");
    assert_eq!(sample(&after, failed), Some(1.0), "{after}");
}

/// The value of one series in Prometheus text, as a scrape would read it.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
}
