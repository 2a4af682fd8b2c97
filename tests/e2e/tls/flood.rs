//! Strangers who open TCP connections to the wss port and send nothing cannot crowd chargers
//! out: from one address they get 16 handshakes at once (`--tls-handshakes-per-address`), the
//! rest are closed at once; spread over many addresses they hold sockets but no handshake
//! turn, and each is closed once `--tls-hello-timeout` (2 s) passes without a ClientHello.

use super::TlsCms;
use super::wss_charger::WssCharger;
use crate::support::{Api, eventually_within};
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;
use tokio::net::{TcpSocket, TcpStream};

/// More idle sockets than the listener has handshake turns (1,024).
const IDLE_SOCKETS: usize = 1_100;

/// Opens `count` TCP connections to `target`, from the loopback addresses `sources` in turn,
/// sending nothing on them.
async fn idle_sockets(target: SocketAddr, sources: &[Ipv4Addr], count: usize) -> Vec<TcpStream> {
    let mut sockets = Vec::with_capacity(count);
    for i in 0..count {
        let socket = TcpSocket::new_v4().expect("a socket");
        let source = SocketAddr::from((sources[i % sources.len()], 0));
        socket.bind(source).expect("a loopback source address");
        sockets.push(socket.connect(target).await.expect("the kernel accepts"));
    }
    sockets
}

/// The rejections counted under `reason` so far.
async fn counted(api: &Api, reason: &str) -> f64 {
    let metrics = api.metrics().await;
    let labels = [("reason", reason)];
    let sum = metrics.sum("cms_gateway_handshake_rejections_total", &labels);
    sum.unwrap_or(0.0)
}

/// Waits until `reason` has counted `expected` rejections (and no more).
async fn wait_for_count(api: &Api, reason: &str, expected: f64, limit: Duration) {
    let what = format!("{expected} rejections counted as {reason}");
    eventually_within(limit, &what, async || match counted(api, reason).await {
        seen if seen == expected => Ok(()),
        seen => Err(format!("{seen}")),
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charger_gets_in_while_one_stranger_holds_1100_idle_sockets() {
    let tls = TlsCms::up().await;
    tls.add_charger("CP-TLS-CROWDED", 0).await;
    let api = Api::new(&tls.cms, &tls.cms.operator_token().await);
    for reason in ["tls_per_address", "tls_slow_start", "tls_busy"] {
        assert_eq!(
            counted(&api, reason).await,
            0.0,
            "{reason} reads 0 from the start"
        );
    }
    let target = tls.wss_authority().parse().expect("an address");
    let stranger = [Ipv4Addr::new(127, 0, 0, 2)];
    let idle = idle_sockets(target, &stranger, IDLE_SOCKETS).await;

    let url = tls.cms.wss_url("CP-TLS-CROWDED");
    let mut charger = WssCharger::connect(&tls.pki, &url, None).await;
    charger.heartbeat().await;

    let limit = Duration::from_secs(10);
    let refused = (IDLE_SOCKETS - 16) as f64;
    wait_for_count(&api, "tls_per_address", refused, limit).await;
    wait_for_count(&api, "tls_slow_start", 16.0, limit).await;
    assert_eq!(counted(&api, "tls_busy").await, 0.0);
    drop(idle);
    charger.heartbeat().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charger_gets_in_while_idle_sockets_spread_over_many_addresses_are_held() {
    let tls = TlsCms::up().await;
    tls.add_charger("CP-TLS-SPREAD", 0).await;
    let api = Api::new(&tls.cms, &tls.cms.operator_token().await);
    let target = tls.wss_authority().parse().expect("an address");
    // 100 addresses, 11 sockets each: under the per-address limit everywhere.
    let strangers: Vec<_> = (2..102).map(|n| Ipv4Addr::new(127, 0, 0, n)).collect();
    let idle = idle_sockets(target, &strangers, IDLE_SOCKETS).await;

    let url = tls.cms.wss_url("CP-TLS-SPREAD");
    let mut charger = WssCharger::connect(&tls.pki, &url, None).await;
    charger.heartbeat().await;

    // None of them held a handshake turn; each was closed after the hello time-out.
    let limit = Duration::from_secs(15);
    wait_for_count(&api, "tls_slow_start", IDLE_SOCKETS as f64, limit).await;
    assert_eq!(counted(&api, "tls_busy").await, 0.0);
    assert_eq!(counted(&api, "tls_per_address").await, 0.0);
    drop(idle);
    charger.heartbeat().await;
}
