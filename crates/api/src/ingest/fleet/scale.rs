//! The fleet views at 20,000 chargers with 1,000 status changes a second (issue 43's Scale;
//! docs/performance.md "Fleet views"): a running API (in-process bus, materialiser, SQLite
//! store, HTTP listener), its chargers connected, StatusNotifications flowing while the overview,
//! the list's first page and a filtered page are timed over loopback. A measurement, not a
//! check: ignored by default; run with `cargo nextest run -p cms-api --run-ignored only -E
//! 'test(/twenty_thousand/)' --no-capture` (add `--release` for the figure).

use crate::{Api, ApiConfig, DEFAULT_ACCESS_CACHE_ENTRIES, DEFAULT_STREAM_BUFFER, StreamLimits};
use bytes::Bytes;
use cms_bus::{
    ConnectionEvent, Header, Headers, InProcessBus, InProcessConfig, Publisher, Record, Topics,
    header,
};
use cms_store::{NewCharger, Scope};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CHARGERS: usize = 20_000;
const CHANGES_PER_S: usize = 1_000;

fn status(topic: &'static str, identity: String, n: usize) -> Record {
    let statuses = ["Available", "Preparing", "Charging", "Faulted"];
    let body = format!(
        r#"{{"connectorId":1,"errorCode":"NoError","status":"{}"}}"#,
        statuses[n % statuses.len()]
    );
    Record {
        topic: Cow::Borrowed(topic),
        key: Bytes::from(identity),
        headers: Headers::from_iter([
            Header::new(header::ACTION, "StatusNotification"),
            Header::new(header::MESSAGE_ID, format!("m-{n}")),
            Header::new(header::RECEIVED_AT, cms_store::now_record_time()),
            Header::new(header::GATEWAY, "gw-1"),
            Header::new(header::SESSION, "s-1"),
        ]),
        value: Bytes::from(body),
    }
}

/// Median and worst of `n` timed GETs of `url`.
async fn timed(http: &reqwest::Client, url: &str, token: &str, n: usize) -> (Duration, Duration) {
    let mut took = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let response = http.get(url).bearer_auth(token).send().await.unwrap();
        assert_eq!(response.status(), 200, "{url}");
        response.bytes().await.unwrap();
        took.push(started.elapsed());
    }
    took.sort();
    (took[n / 2], took[n - 1])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement: minutes in a debug build"]
async fn twenty_thousand_chargers_with_a_thousand_changes_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let store = cms_store::Store::open(dir.path()).await.unwrap();
    let operator = store.ensure_user("op@example.com").await.unwrap();
    let scopes = [Scope::CHARGERS_READ].map(String::from);
    let token = store.create_token(operator.id, "t", &scopes).await.unwrap();
    let setup = Instant::now();
    for n in 0..CHARGERS {
        let new = NewCharger {
            identity: format!("SCALE-{n:05}"),
            ..Default::default()
        };
        store.add_charger(&new).await.unwrap();
    }
    eprintln!("{CHARGERS} chargers registered in {:?}", setup.elapsed());
    let topics = Topics::with_prefix("scale");
    let bus = Arc::new(InProcessBus::new(InProcessConfig::default(), &topics.all()));
    let config = ApiConfig {
        http_addr: "127.0.0.1:0".parse().unwrap(),
        topics,
        http_limits: Default::default(),
        action_times: Default::default(),
        tls: None,
        local_lists: Default::default(),
        smart_charging: Default::default(),
        stream_buffer: DEFAULT_STREAM_BUFFER,
        streams: StreamLimits::beside(64),
        ops_addr: None,
        metrics_token: None,
        follow_latest_values: false,
        gateway_timeout: Duration::from_secs(600),
        secrets_key: None,
        access_cache_entries: DEFAULT_ACCESS_CACHE_ENTRIES,
        heartbeat_interval: crate::DEFAULT_HEARTBEAT_INTERVAL,
        webhooks: Default::default(),
        ocpi: Default::default(),
        station_certificates: Default::default(),
    };
    let metrics = metrics_exporter_prometheus::PrometheusBuilder::new()
        .build_recorder()
        .handle();
    let api = Api::start(config, store, bus.clone(), metrics)
        .await
        .unwrap();
    for n in 0..CHARGERS {
        let connected = ConnectionEvent::Connected {
            identity: format!("SCALE-{n:05}"),
            session: "s-1".into(),
            gateway: "gw-1".into(),
            at: cms_store::now_record_time(),
            remote_addr: "127.0.0.1:50000".into(),
            subprotocol: "ocpp1.6".into(),
        };
        let key = Bytes::from(format!("SCALE-{n:05}"));
        let record = connected.record(
            topics.connections,
            key,
            Bytes::from_static(b"gw-1"),
            Some(Bytes::from_static(b"s-1")),
        );
        bus.publish(record).await.unwrap();
    }
    let base = format!("http://{}", api.local_addr());
    let http = reqwest::Client::new();
    // Every charger online in the overview, then the changes flowing.
    let overview = format!("{base}/api/v3/overview");
    for _ in 0..600 {
        let body: serde_json::Value = http
            .get(&overview)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if body["data"]["chargers"]["online"] == CHARGERS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let flowing = bus.clone();
    let changes = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(10));
        let mut n = 0;
        loop {
            tick.tick().await;
            for _ in 0..CHANGES_PER_S / 100 {
                let identity = format!("SCALE-{:05}", (n * 7919) % CHARGERS);
                flowing
                    .publish(status(topics.messages, identity, n))
                    .await
                    .unwrap();
                n += 1;
            }
        }
    });
    tokio::time::sleep(Duration::from_secs(3)).await;
    for (what, path) in [
        ("overview", "/api/v3/overview"),
        ("chargers, page 1", "/api/v3/chargers"),
        (
            "chargers, faulted, page 1",
            "/api/v3/chargers?filter[status]=faulted",
        ),
        (
            "chargers, search, page 1",
            "/api/v3/chargers?filter[search]=scale-1999",
        ),
    ] {
        let (median, worst) = timed(&http, &format!("{base}{path}"), &token, 50).await;
        eprintln!("{what}: median {median:?}, worst {worst:?} (50 requests)");
    }
    changes.abort();
}
