//! An action that reaches the gateway after the session it is addressed to ended: the API took
//! it while the charger was connected, and the bus brought it a moment too late. The gateway
//! reports it `expired` (`Disconnected`) at once; an action for a session another gateway holds
//! is left alone. A real gateway, a real websocket client, the in-process bus.

use chrono::Utc;
mod support;

use cms_bus::{
    ActionRequest, ActionStatus, Bus, InProcessBus, InProcessConfig, Message, Publisher,
    RequestedBy, Subscriber, Topics, command_record, report_of,
};
use cms_gateway::Gateway;
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use support::Ws;

const IDENTITY: &str = "CP-LATE-1";

/// A gateway on the in-process bus, with one registered charger, and what it publishes.
struct Harness {
    topics: Topics,
    bus: Arc<InProcessBus>,
    connections: Box<dyn Subscriber>,
    reports: Box<dyn Subscriber>,
    gateway: Gateway,
}

impl Harness {
    async fn start() -> Harness {
        let topics = Topics::with_prefix("late");
        let bus = Arc::new(InProcessBus::new(InProcessConfig::default(), &topics.all()));
        let connections = bus.subscribe("test", &[topics.connections]).unwrap();
        let reports = bus.subscribe("test", &[topics.command_results]).unwrap();
        let gateway =
            support::start_gateway(&bus, topics, "gw-late", [IDENTITY.to_string()], |config| {
                config.read_configuration_at_boot = false
            })
            .await;
        Harness {
            topics,
            bus,
            connections,
            reports,
            gateway,
        }
    }

    /// Connects the charger and returns its socket and its session id.
    async fn connect(&mut self) -> (Ws, String) {
        let addr = self.gateway.local_addr().unwrap();
        let ws = support::connect_charger(addr, IDENTITY).await;
        let connected = next_event(&mut *self.connections, "connected").await;
        let session = connected.record.header_str("session").unwrap().to_string();
        (ws, session)
    }

    async fn command(&self, command: &ActionRequest) {
        let record = command_record(&self.topics, command);
        self.bus.publish(record).await.unwrap();
    }

    /// Asserts that the one report made is the late action's: expired, never sent.
    async fn assert_only_expired(&mut self, uuid: &str) {
        let reported = reports_after_the_first(&mut *self.reports).await;
        let [report] = &reported[..] else {
            panic!("one report, of the late action only: {reported:?}");
        };
        assert_eq!(report.command.uuid, uuid, "{report:?}");
        assert_eq!(report.status, ActionStatus::Expired, "{report:?}");
        assert_eq!(report.error.as_ref().unwrap().code, "Disconnected");
        assert_eq!(report.sent_at, None, "never sent: {report:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_for_a_session_that_ended_is_reported_expired_at_once() {
    let mut harness = Harness::start().await;
    let (mut ws, session) = harness.connect().await;
    ws.close(None).await.unwrap();
    while ws.next().await.is_some() {}
    next_event(&mut *harness.connections, "disconnected").await;

    // Taken while the session was live, arriving after its end.
    harness.command(&action("late-1", &session)).await;
    // Another gateway's session: not this gateway's to report.
    harness
        .command(&action("elsewhere-1", "a-session-of-another-gateway"))
        .await;
    harness.assert_only_expired("late-1").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_for_a_replaced_session_is_reported_expired_at_once_and_never_sent() {
    let mut harness = Harness::start().await;
    let (_first, replaced) = harness.connect().await;
    let (mut second, _) = harness.connect().await;

    harness.command(&action("late-2", &replaced)).await;
    harness.assert_only_expired("late-2").await;
    // The charger's live connection got nothing.
    let got = tokio::time::timeout(Duration::from_millis(300), second.next()).await;
    assert!(got.is_err(), "the live connection was sent {got:?}");
}

fn action(uuid: &str, session: &str) -> ActionRequest {
    let now = Utc::now();
    let time = |t: chrono::DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    ActionRequest {
        uuid: uuid.into(),
        identity: IDENTITY.into(),
        session: session.into(),
        action: "Reset".into(),
        ocpp_version: cms_ocpp::OcppVersion::V16,
        request: serde_json::json!({"type": "Soft"}),
        requested_by: RequestedBy::system(),
        created_at: time(now),
        expires_at: time(now + chrono::Duration::seconds(60)),
        timeout_ms: 30_000,
        sealed_request: None,
    }
}

async fn next_event(connections: &mut dyn Subscriber, event: &str) -> Message {
    let wait = async {
        let mut batch = Vec::new();
        loop {
            batch.clear();
            connections.next_batch(&mut batch, 16).await.unwrap();
            if let Some(found) = batch
                .iter()
                .find(|m| m.record.header_str("event") == Some(event))
            {
                return found.clone();
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .unwrap_or_else(|_| panic!("no {event} event"))
}

/// The reports that come within 10 s (without the fix, none: the gateway ignored the late
/// action and the API ended it once overdue), and any that follow within half a second.
async fn reports_after_the_first(reports: &mut dyn Subscriber) -> Vec<cms_bus::ActionReport> {
    let mut found = Vec::new();
    let mut batch = Vec::new();
    let mut wait = Duration::from_secs(10);
    while let Ok(read) = tokio::time::timeout(wait, reports.next_batch(&mut batch, 16)).await {
        read.unwrap();
        found.extend(batch.drain(..).filter_map(|m| report_of(&m)));
        if !found.is_empty() {
            wait = Duration::from_millis(500);
        }
    }
    found
}
