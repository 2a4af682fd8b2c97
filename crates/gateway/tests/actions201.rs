//! The calls cms makes to an OCPP 2.0.1 station, through a real gateway to a real websocket
//! client on the in-process bus: an action taken for 2.0.1 is sent as the 2.0.1 call, its answer
//! checked against the 2.0.1 response schema (a refusal spelled as 2.0.1 spells it) and
//! reported; an action taken for 1.6 is never sent to a 2.0.1 session.

mod support;

use cms_bus::{
    ActionName, ActionReport, ActionRequest, ActionStatus, Bus, InProcessBus, InProcessConfig,
    Message, Publisher, RequestedBy, Subscriber, Topics, command_record, report_of,
};
use cms_gateway::Gateway;
use cms_ocpp::OcppVersion;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use support::Ws;
use tokio_tungstenite::tungstenite::Message as WsMessage;

const IDENTITY: &str = "CS-ACT-1";

struct Harness {
    topics: Topics,
    bus: Arc<InProcessBus>,
    reports: Box<dyn Subscriber>,
    _gateway: Gateway,
    ws: Ws,
    session: String,
}

impl Harness {
    /// A gateway with one 2.0.1 station connected (no read after boot: it does not boot).
    async fn start() -> Harness {
        let topics = Topics::with_prefix("a201");
        let bus = Arc::new(InProcessBus::new(InProcessConfig::default(), &topics.all()));
        let mut connections = bus.subscribe("test", &[topics.connections]).unwrap();
        let reports = bus.subscribe("test", &[topics.command_results]).unwrap();
        let gateway = support::start_gateway(&bus, topics, "gw-a201", [IDENTITY.into()], |c| {
            c.read_configuration_at_boot = false
        })
        .await;
        let addr = gateway.local_addr().unwrap();
        let (ws, agreed) = support::connect_offering(addr, IDENTITY, "ocpp2.0.1").await;
        assert_eq!(agreed.as_deref(), Some("ocpp2.0.1"));
        let connected = next_connected(&mut *connections).await;
        let session = connected.record.header_str("session").unwrap().to_string();
        Harness {
            topics,
            bus,
            reports,
            _gateway: gateway,
            ws,
            session,
        }
    }

    /// Publishes an action for the station's session.
    async fn take(&self, uuid: &str, action: ActionName, version: OcppVersion, request: Value) {
        let now = chrono::Utc::now();
        let time = |t: chrono::DateTime<chrono::Utc>| {
            t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
        };
        let command = ActionRequest {
            uuid: uuid.into(),
            identity: IDENTITY.into(),
            session: self.session.clone(),
            action,
            ocpp_version: version,
            request,
            requested_by: RequestedBy::system(),
            created_at: time(now),
            expires_at: time(now + chrono::Duration::seconds(60)),
            timeout_ms: 30_000,
            sealed_request: None,
        };
        let record = command_record(&self.topics, &command);
        self.bus.publish(record).await.unwrap();
    }

    /// The next CALL the station gets.
    async fn call(&mut self) -> Value {
        let next = tokio::time::timeout(Duration::from_secs(10), self.ws.next()).await;
        match next {
            Ok(Some(Ok(WsMessage::Text(text)))) => serde_json::from_str(text.as_str()).unwrap(),
            other => panic!("no call came: {other:?}"),
        }
    }

    async fn answer(&mut self, call: &Value, payload: Value) {
        let frame = json!([3, call[1], payload]).to_string();
        self.ws.send(WsMessage::text(frame)).await.unwrap();
    }

    /// The reports of action `uuid` up to its final one.
    async fn reports_of(&mut self, uuid: &str) -> Vec<ActionReport> {
        let mut found: Vec<ActionReport> = Vec::new();
        let mut batch = Vec::new();
        let wait = async {
            while !found.last().is_some_and(|r| r.status.is_final()) {
                batch.clear();
                self.reports.next_batch(&mut batch, 16).await.unwrap();
                let of_it = batch.iter().filter_map(report_of);
                found.extend(of_it.filter(|r| r.command.uuid == uuid));
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .unwrap_or_else(|_| panic!("no final report of {uuid}"));
        found
    }
}

async fn next_connected(connections: &mut dyn Subscriber) -> Message {
    let wait = async {
        let mut batch = Vec::new();
        loop {
            batch.clear();
            connections.next_batch(&mut batch, 16).await.unwrap();
            let connected = batch
                .iter()
                .find(|m| m.record.header_str("event") == Some("connected"));
            if let Some(found) = connected {
                return found.clone();
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .expect("a connected event")
}

fn statuses(reports: &[ActionReport]) -> Vec<ActionStatus> {
    reports.iter().map(|r| r.status).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_201_call_is_sent_answered_checked_against_the_201_schema_and_reported() {
    let mut h = Harness::start().await;
    let reset = ActionName::V201(cms_ocpp::v201::Command::Reset);

    h.take(
        "r-1",
        reset.clone(),
        OcppVersion::V201,
        json!({"type": "Immediate"}),
    )
    .await;
    let call = h.call().await;
    assert_eq!(call, json!([2, "r-1", "Reset", {"type": "Immediate"}]));
    h.answer(&call, json!({"status": "Accepted"})).await;
    let reports = h.reports_of("r-1").await;
    assert_eq!(
        statuses(&reports),
        [ActionStatus::Sent, ActionStatus::Answered]
    );
    let answered = reports.last().unwrap();
    assert_eq!(answered.response, Some(json!({"status": "Accepted"})));
    assert_eq!(answered.command.ocpp_version, OcppVersion::V201);
    assert_eq!(answered.command.action, reset);

    // An answer that breaks 2.0.1's response schema (no status): failed, in 2.0.1's spelling.
    h.take(
        "r-2",
        reset.clone(),
        OcppVersion::V201,
        json!({"type": "OnIdle"}),
    )
    .await;
    let call = h.call().await;
    h.answer(&call, json!({})).await;
    let reports = h.reports_of("r-2").await;
    let failed = reports.last().unwrap();
    assert_eq!(failed.status, ActionStatus::Failed);
    let error = failed.error.as_ref().unwrap();
    assert_eq!(error.code, "OccurrenceConstraintViolation", "{error:?}");
    assert!(error.description.contains("status"), "{error:?}");

    // A 1.6 action, for a session that now speaks 2.0.1: never sent.
    let soft = ActionName::V16(cms_ocpp::v16::Command::Reset);
    h.take("r-3", soft, OcppVersion::V16, json!({"type": "Soft"}))
        .await;
    let reports = h.reports_of("r-3").await;
    assert_eq!(statuses(&reports), [ActionStatus::Failed]);
    assert_eq!(reports[0].error.as_ref().unwrap().code, "VersionMismatch");
    assert_eq!(reports[0].sent_at, None);

    // A 2.0.1 request the 2.0.1 schema refuses: never sent, the next one is.
    h.take(
        "r-4",
        reset.clone(),
        OcppVersion::V201,
        json!({"type": "Soft"}),
    )
    .await;
    h.take(
        "r-5",
        reset,
        OcppVersion::V201,
        json!({"type": "Immediate", "evseId": 1}),
    )
    .await;
    let reports = h.reports_of("r-4").await;
    assert_eq!(statuses(&reports), [ActionStatus::Failed]);
    let call = h.call().await;
    assert_eq!(call[1], "r-5", "the refused one was not sent: {call}");
}
