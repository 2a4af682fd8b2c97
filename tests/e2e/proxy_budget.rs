//! Relaying bounded in bytes (docs/proxy.md, "Bounded"): proxy servers that take cms's
//! connection and never read from it, chargers that send large calls. The gateway holds no more
//! of them than its budgets (per charger, and over all its chargers), drops the rest, counted,
//! and answers the chargers as ever.

use crate::support::{Api, Charger, Cms};
use cms_tls::test_pki::TestPki;
use cms_tls::{ServerTls, tokio_rustls::TlsAcceptor};
use serde_json::json;
use std::time::Duration;
use tempfile::TempDir;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::http::HeaderValue;

const CHARGER_BUDGET: usize = 128 * 1024;
const TOTAL_BUDGET: usize = 192 * 1024;

/// A central system that takes the upgrade (`wss`, `ocpp1.6`) and then never reads: each call
/// relayed to it waits for an answer that never comes. Stopped when dropped.
struct SilentUpstream {
    url: String,
    task: tokio::task::JoinHandle<()>,
}

impl SilentUpstream {
    async fn start(tls: TlsAcceptor) -> SilentUpstream {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("wss://{}/ocpp", listener.local_addr().expect("its address"));
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((tcp, _)) = listener.accept().await {
                let Ok(tcp) = tls.accept(tcp).await else {
                    continue;
                };
                // The callback's type is tungstenite's, large error and all.
                #[allow(clippy::result_large_err)]
                let agree = |_: &Request, mut response: Response| {
                    let protocol = HeaderValue::from_static("ocpp1.6");
                    response
                        .headers_mut()
                        .insert("Sec-WebSocket-Protocol", protocol);
                    Ok(response)
                };
                if let Ok(ws) = tokio_tungstenite::accept_hdr_async(tcp, agree).await {
                    held.push(ws);
                }
            }
        });
        SilentUpstream { url, task }
    }
}

impl Drop for SilentUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The gateway's queued relay bytes and its dropped relayed calls, from `/metrics`.
async fn relay_metrics(api: &Api) -> (f64, f64) {
    let metrics = api.metrics().await;
    let held = metrics.sum("cms_proxy_queued_bytes", &[]);
    let dropped = metrics.sum("cms_proxy_frames_dropped_total", &[]);
    (
        held.expect("cms_proxy_queued_bytes is registered at start"),
        dropped.unwrap_or(0.0),
    )
}

/// Sends `count` DataTransfers of about 40 KiB each; every one is answered by cms.
async fn send_large_calls(charger: &mut Charger, count: usize) {
    for n in 0..count {
        let data = format!("{n:04}").repeat(10_000);
        let payload = json!({"vendorId": "cms.test.large", "data": data});
        let answer = charger.call_result("DataTransfer", payload).await;
        assert_eq!(answer["status"], "UnknownVendorId", "call {n}: {answer}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstreams_that_never_answer_hold_no_more_than_the_byte_budgets() {
    let dir = TempDir::new().expect("a temp dir for the test PKI");
    let pki = TestPki::create(dir.path());
    let tls = ServerTls::load("silent upstream", pki.server_files_without_client_ca())
        .expect("the test server certificate")
        .acceptor();
    let upstreams = [
        SilentUpstream::start(tls.clone()).await,
        SilentUpstream::start(tls.clone()).await,
        SilentUpstream::start(tls).await,
    ];
    let ca = pki.ca_certificate();
    let cms = Cms::up_with(&[
        "--proxy-ca-file",
        ca.to_str().expect("utf-8 path"),
        "--relay-charger-bytes",
        &CHARGER_BUDGET.to_string(),
        "--relay-total-bytes",
        &TOTAL_BUDGET.to_string(),
    ])
    .await;
    let api = Api::new(&cms, &cms.operator_token().await);
    assert_eq!(relay_metrics(&api).await, (0.0, 0.0), "before any relaying");

    let servers: Vec<_> = upstreams
        .iter()
        .map(|u| json!({"websocket_url": u.url, "role": "follower"}))
        .collect();
    let identities = ["CP-BUDGET-1", "CP-BUDGET-2"];
    for identity in identities {
        let uuid = cms.add_charger(identity).await;
        cms.license(identity, false, true).await;
        let body = json!({"vendor_role": "ROLE_LEADER", "servers": servers});
        let path = format!("/api/v3/chargers/{uuid}/proxy");
        api.expect(200, "PUT", &path, Some(&body)).await;
    }
    // The gateway learns the set-up from the registry a few times a second.
    tokio::time::sleep(Duration::from_millis(600)).await;

    // One charger: its 12 calls × 40 KiB × 3 upstreams would be 1.4 MiB; the gateway keeps
    // at most the charger's budget and drops the rest.
    let mut first = Charger::connect(&cms, identities[0]).await;
    send_large_calls(&mut first, 12).await;
    let (held, dropped) = relay_metrics(&api).await;
    assert!(held > 0.0, "calls wait for the silent upstreams");
    assert!(held <= CHARGER_BUDGET as f64, "held {held} bytes");
    assert!(dropped > 0.0, "what did not fit is counted");

    // A second: together they stay within the gateway's total, less than two chargers' worth.
    let mut second = Charger::connect(&cms, identities[1]).await;
    send_large_calls(&mut second, 12).await;
    let (held, dropped_since) = relay_metrics(&api).await;
    assert!(held <= TOTAL_BUDGET as f64, "held {held} bytes");
    assert!(dropped_since > dropped);
    // And the chargers are served as ever.
    first.heartbeat().await;
    second.heartbeat().await;
}
