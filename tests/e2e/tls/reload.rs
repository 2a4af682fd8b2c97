//! Certificate rotation without a restart: after SIGHUP, or once the files are seen to change,
//! new connections get the new certificate, while connections made before keep talking.

use super::TlsCms;
use super::python_client::{Presenting, attempt, expect_charging_session, shown_certificate};
use super::wss_charger::{WssCharger, leaf_certificate, served_certificate};
use crate::support::{Api, boot_payload, eventually, eventually_within};
use cms_tls::DEFAULT_POLL_INTERVAL;
use cms_tls::test_pki::FIRST_SERVER_NOT_AFTER_YEAR;
use std::time::Duration;

/// 2101-01-01T00:00:00Z, the second server certificate's notAfter, in Unix seconds.
const SECOND_NOT_AFTER_UNIX: f64 = 4_133_980_800.0;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_sighup_new_connections_get_the_new_certificate_while_open_ones_keep_talking() {
    let tls = TlsCms::up().await;
    tls.add_charger("CP-TLS-BEFORE", 0).await;
    tls.add_charger("CP-TLS-AFTER", 0).await;
    let api = Api::new(&tls.cms, &tls.cms.operator_token().await);
    let pki = &tls.pki;
    let first = leaf_certificate(&pki.server_chain());
    let mut before = WssCharger::connect(pki, &tls.cms.wss_url("CP-TLS-BEFORE"), None).await;
    assert!(
        before.served == first,
        "the wss listener should serve server.pem"
    );
    before
        .call_result("BootNotification", boot_payload("1.0.0"))
        .await;
    before.heartbeat().await;

    let year = pki.replace_server_certificate();
    assert_eq!(year, FIRST_SERVER_NOT_AFTER_YEAR + 1);
    let second = leaf_certificate(&pki.server_chain());
    tls.cms.hang_up();
    before.heartbeat().await;

    // The log says SIGHUP did it, not the file poll.
    let authority = tls.wss_authority();
    eventually_within(
        Duration::from_secs(2),
        "a new handshake to show the new certificate",
        async || match served_certificate(pki, &authority).await {
            served if served == second => Ok(()),
            served if served == first => Err("still the first certificate".to_string()),
            _ => Err("a certificate that is neither".to_string()),
        },
    )
    .await;
    let log = tls.cms.log();
    assert!(
        log.lines()
            .any(|l| l.contains("TLS certificate reloaded") && l.contains("Hangup")),
        "expected the log to say the certificate was reloaded on SIGHUP"
    );

    // What a charger on OpenSSL sees, and that it gets in with it.
    let outcome = attempt(pki, &tls.cms.wss_url("CP-TLS-AFTER"), Presenting::default()).await;
    expect_charging_session(&outcome, "a charger connecting after the reload");
    let not_after = outcome["server_certificate"]["not_after"]
        .as_str()
        .unwrap_or_default();
    assert!(
        shown_certificate(&outcome) == second.as_ref() && not_after.contains(&year.to_string()),
        "expected the Python charger to be shown the new certificate (notAfter {year}); it saw \
         {}",
        outcome["server_certificate"]
    );

    // The connection made before the reload is served all along.
    before.heartbeat().await;
    before
        .call_result(
            "StatusNotification",
            serde_json::json!({
                "connectorId": 1, "errorCode": "NoError", "status": "Available"
            }),
        )
        .await;

    // Operators see the rotation: a good reload, and the new expiry to alert on.
    eventually("the reload in the TLS metrics", async || {
        let metrics = api.metrics().await;
        let reloads = metrics.sum(
            "cms_tls_reloads_total",
            &[("listener", "ocpp"), ("result", "ok")],
        );
        let expiry = metrics.sum(
            "cms_tls_certificate_expiry_timestamp_seconds",
            &[("listener", "ocpp")],
        );
        match (reloads, expiry) {
            (Some(1.0..), Some(SECOND_NOT_AFTER_UNIX)) => Ok(()),
            seen => Err(format!(
                "(ok reloads, expiry) = {seen:?}, expected (1 or more, {SECOND_NOT_AFTER_UNIX})"
            )),
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_replaced_on_disk_is_served_within_the_poll_interval_without_a_signal() {
    let tls = TlsCms::up().await;
    tls.add_charger("CP-TLS-POLLED", 0).await;
    let pki = &tls.pki;
    let mut before = WssCharger::connect(pki, &tls.cms.wss_url("CP-TLS-POLLED"), None).await;
    before.heartbeat().await;

    pki.replace_server_certificate();
    let second = leaf_certificate(&pki.server_chain());
    let authority = tls.wss_authority();
    let limit = DEFAULT_POLL_INTERVAL + Duration::from_secs(2);
    eventually_within(
        limit,
        "a new handshake to show the replaced certificate",
        async || match served_certificate(pki, &authority).await == second {
            true => Ok(()),
            false => Err("the previous certificate".to_string()),
        },
    )
    .await;
    before.heartbeat().await;
}
