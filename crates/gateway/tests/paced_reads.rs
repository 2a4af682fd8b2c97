//! The configuration reads a gateway makes after boots are spaced at the configured rate: a
//! fleet booting at once is read one charger after another, in boot order, and each charger is
//! still read. A real gateway, real websocket clients, the in-process bus.

mod support;

use cms_bus::{InProcessBus, InProcessConfig, Topics};
use cms_gateway::Gateway;
use futures_util::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

const CHARGERS: usize = 4;
const READS_PER_SECOND: u32 = 5;

async fn start_gateway() -> (Gateway, Arc<InProcessBus>) {
    let topics = Topics::with_prefix("paced");
    let bus = Arc::new(InProcessBus::new(InProcessConfig::default(), &topics.all()));
    let chargers = (0..CHARGERS).map(|n| format!("CP-PACED-{n}"));
    let gateway = support::start_gateway(&bus, topics, "gw-paced", chargers, |config| {
        config.configuration_reads_per_second = READS_PER_SECOND
    })
    .await;
    (gateway, bus)
}

/// Connects and boots charger `n`; returns when its configuration read arrived, after answering
/// it as a charger with no keys would.
async fn boot_and_await_the_read(addr: SocketAddr, n: usize) -> Instant {
    let mut ws = support::connect_charger(addr, &format!("CP-PACED-{n}")).await;
    let boot =
        r#"[2,"boot-1","BootNotification",{"chargePointVendor":"V","chargePointModel":"M"}]"#;
    ws.send(Message::text(boot)).await.unwrap();
    loop {
        let frame = ws.next().await.expect("the connection stays").unwrap();
        let Message::Text(text) = frame else { continue };
        let call: serde_json::Value = serde_json::from_str(&text).unwrap();
        if call[0] == 2 && call[2] == "GetConfiguration" {
            let arrived = Instant::now();
            let answer = serde_json::json!([3, call[1], {"configurationKey": []}]);
            ws.send(Message::text(answer.to_string())).await.unwrap();
            return arrived;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_booting_at_once_has_its_configurations_read_at_the_configured_rate() {
    let (gateway, _bus) = start_gateway().await;
    let addr = gateway.local_addr().unwrap();
    let started = Instant::now();
    let chargers = (0..CHARGERS).map(|n| tokio::spawn(boot_and_await_the_read(addr, n)));
    let mut arrivals = Vec::new();
    for charger in chargers {
        let arrived = tokio::time::timeout(Duration::from_secs(30), charger)
            .await
            .expect("every charger's configuration is read")
            .unwrap();
        arrivals.push(arrived);
    }
    arrivals.sort();
    let interval = Duration::from_secs(1) / READS_PER_SECOND;
    // The first boot is read at once; each next one an interval later at the least (a slow
    // moment of the machine can only widen the gaps).
    assert!(
        arrivals[0] - started < Duration::from_secs(5),
        "the first read waited {:?}",
        arrivals[0] - started
    );
    for pair in arrivals.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap >= interval - Duration::from_millis(20),
            "reads {gap:?} apart, under the {interval:?} the rate allows: {arrivals:?}"
        );
    }
}
