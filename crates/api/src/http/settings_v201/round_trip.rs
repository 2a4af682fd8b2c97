//! A 2.0.1 station's settings through a running API (real bus, materialiser, store and HTTP
//! listener): NotifyReport records listed by `GET .../settings`; a `PUT` refused before
//! anything is sent, or taken as one SetVariables; its answer keeping what the station took.

use crate::{Api, ApiConfig, DEFAULT_ACCESS_CACHE_ENTRIES, DEFAULT_STREAM_BUFFER, StreamLimits};
use bytes::Bytes;
use cms_bus::{
    ActionReport, ActionStatus, Bus, ConnectionEvent, Header, Headers, InProcessBus,
    InProcessConfig, Message, Record, SecretsKey, Topics, header,
};
use cms_store::{NewCharger, Scope, Store};
use serde_json::{Value, json};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

const IDENTITY: &str = "CS-201";
const AT: &str = "2026-11-21T10:00:00.000000Z";

struct Bench {
    api: Api,
    bus: Arc<InProcessBus>,
    topics: Topics,
    key: SecretsKey,
    token: String,
    path: String,
    http: reqwest::Client,
}

impl Bench {
    async fn start(store: Store) -> Bench {
        let topics = Topics::with_prefix("t201");
        let bus = Arc::new(InProcessBus::new(InProcessConfig::default(), &topics.all()));
        let operator = store.ensure_user("op@example.com").await.unwrap();
        let scopes = [Scope::CHARGERS_READ, Scope::CHARGERS_WRITE].map(String::from);
        let token = store.create_token(operator.id, "t", &scopes).await.unwrap();
        let new = NewCharger {
            identity: IDENTITY.into(),
            ..Default::default()
        };
        let uuid = store.add_charger(&new).await.unwrap();
        let key = SecretsKey::random();
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
            secrets_key: Some(key.clone()),
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
        let path = format!(
            "http://{}/api/v3/chargers/{uuid}/settings",
            api.local_addr()
        );
        Bench {
            api,
            bus,
            topics,
            key,
            token,
            path,
            http: reqwest::Client::new(),
        }
    }

    async fn publish(&self, record: Record) {
        cms_bus::Publisher::publish(&*self.bus, record)
            .await
            .unwrap();
    }

    /// The station connected (so an action can be taken for it) and sent `reports`.
    async fn connected_and_reported(&self, reports: &[Value]) {
        let connected = ConnectionEvent::Connected {
            identity: IDENTITY.into(),
            session: "s-1".into(),
            gateway: "gw-1".into(),
            at: AT.into(),
            remote_addr: "127.0.0.1:50000".into(),
            subprotocol: "ocpp2.0.1".into(),
        };
        let key = Bytes::from_static(IDENTITY.as_bytes());
        let session = Some(Bytes::from_static(b"s-1"));
        let gateway = Bytes::from_static(b"gw-1");
        self.publish(connected.record(self.topics.connections, key, gateway, session))
            .await;
        for report in reports {
            self.publish(notify_report(self.topics.messages, report))
                .await;
        }
    }

    async fn request(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut request = self.http.request(method, path).bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// The settings listed, once `ready` holds of them (within 10 s).
    async fn settings_once(&self, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        for _ in 0..200 {
            let (status, body) = self.request("GET", &self.path, None).await;
            assert_eq!(status, 200, "{body}");
            let data = body["data"].as_array().cloned().unwrap_or_default();
            if ready(&data) {
                return data;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the settings never became as expected");
    }
}

fn notify_report(topic: &'static str, payload: &Value) -> Record {
    Record {
        topic: Cow::Borrowed(topic),
        key: Bytes::from_static(IDENTITY.as_bytes()),
        headers: Headers::from_iter([
            Header::new(header::ACTION, "NotifyReport"),
            Header::new(header::MESSAGE_ID, "m-1"),
            Header::new(header::RECEIVED_AT, AT),
            Header::new(header::OCPP_VERSION, "ocpp2.0.1"),
        ]),
        value: Bytes::from(payload.to_string()),
    }
}

/// A base report in two parts, as a station sends one.
fn base_report() -> [Value; 2] {
    let data = |component: Value, variable: &str, attributes: Value, characteristics: Value| {
        json!({"component": component, "variable": {"name": variable},
               "variableAttribute": attributes, "variableCharacteristics": characteristics})
    };
    let integer = json!({"dataType": "integer", "minLimit": 1, "unit": "s",
                         "supportsMonitoring": false});
    let decimal = json!({"dataType": "decimal", "maxLimit": 22000, "unit": "W",
                         "supportsMonitoring": true});
    let string = json!({"dataType": "string", "supportsMonitoring": false});
    [
        json!({"requestId": 7, "generatedAt": "2026-11-21T10:00:00Z", "seqNo": 0, "tbc": true,
        "reportData": [
            data(json!({"name": "OCPPCommCtrlr"}), "HeartbeatInterval",
                 json!([{"value": "300"}]), integer),
            data(json!({"name": "EVSE", "evse": {"id": 1}}), "Power",
                 json!([{"value": "0", "mutability": "ReadOnly"},
                        {"type": "MaxSet", "value": "22000"}]), decimal),
        ]}),
        json!({"requestId": 7, "generatedAt": "2026-11-21T10:00:01Z", "seqNo": 1,
        "reportData": [
            data(json!({"name": "SecurityCtrlr"}), "BasicAuthPassword",
                 json!([{"mutability": "WriteOnly"}]), string.clone()),
            data(json!({"name": "NetworkCtrlr"}), "ApnPassword",
                 json!([{"value": "s3cret-4f1c"}]), string),
        ]}),
    ]
}

/// `(key, value, readonly, mutability)` of each setting listed.
fn listed(data: &[Value]) -> Vec<(String, Value, bool, String)> {
    data.iter()
        .map(|s| {
            let text = |field: &str| s[field].as_str().unwrap_or_default().to_string();
            (
                text("key"),
                s["value"].clone(),
                s["readonly"] == true,
                text("mutability"),
            )
        })
        .collect()
}

fn item(
    key: &str,
    value: Value,
    readonly: bool,
    mutability: &str,
) -> (String, Value, bool, String) {
    (key.into(), value, readonly, mutability.into())
}

async fn the_device_model_is_listed_changed_and_kept(store: Store) {
    let bench = Bench::start(store).await;
    bench.connected_and_reported(&base_report()).await;
    let data = bench.settings_once(|data| data.len() == 5).await;
    assert_eq!(
        listed(&data),
        [
            item("EVSE@1/Power", json!("0"), true, "ReadOnly"),
            item("EVSE@1/Power#MaxSet", json!("22000"), false, "ReadWrite"),
            item("NetworkCtrlr/ApnPassword", json!("***"), false, "ReadWrite"),
            item(
                "OCPPCommCtrlr/HeartbeatInterval",
                json!("300"),
                false,
                "ReadWrite"
            ),
            item(
                "SecurityCtrlr/BasicAuthPassword",
                json!("***"),
                false,
                "WriteOnly"
            ),
        ]
    );
    let power = &data[1];
    assert_eq!(
        (
            &power["component"],
            &power["evse_id"],
            &power["connector_id"]
        ),
        (&json!("EVSE"), &json!(1), &Value::Null)
    );
    assert_eq!(
        (
            &power["variable"],
            &power["attribute_type"],
            &power["data_type"],
            &power["unit"]
        ),
        (
            &json!("Power"),
            &json!("MaxSet"),
            &json!("decimal"),
            &json!("W")
        )
    );
    assert_eq!(
        (&power["component_instance"], &power["variable_instance"]),
        (&Value::Null, &Value::Null)
    );

    // Refused before anything is sent: each key told why.
    let mut commands = bench.bus.follow(&[bench.topics.commands]).await.unwrap();
    let refused = json!({"settings": {
        "EVSE@1/Power": "7400",
        "EVSE@1/Power#MaxSet": "22001",
        "OCPPCommCtrlr/HeartbeatInterval": "0",
        "OCPPCommCtrlr/NoSuchVariable": "1",
        "NetworkCtrlr/ApnPassword": "***",
    }});
    let (status, body) = bench.request("PUT", &bench.path, Some(&refused)).await;
    assert_eq!(status, 422, "{body}");
    let errors = body["errors"].as_object().unwrap();
    let fields: Vec<&String> = errors.keys().collect();
    assert_eq!(
        fields,
        [
            "settings.EVSE@1/Power",
            "settings.EVSE@1/Power#MaxSet",
            "settings.NetworkCtrlr/ApnPassword",
            "settings.OCPPCommCtrlr/HeartbeatInterval",
            "settings.OCPPCommCtrlr/NoSuchVariable",
        ],
        "{body}"
    );
    assert_eq!(
        errors["settings.EVSE@1/Power"],
        json!(["The EVSE@1/Power setting is read-only."])
    );

    // Taken: one SetVariables of every key, the secret masked where it is kept and shown.
    let change = json!({"settings": {
        "EVSE@1/Power#MaxSet": "11000",
        "ocppcommctrlr/heartbeatinterval": "60",
        "NetworkCtrlr/ApnPassword": "n3w-s3cret",
    }});
    let put = format!("{}?wait=0", bench.path);
    let (status, body) = bench.request("PUT", &put, Some(&change)).await;
    assert_eq!(status, 202, "{body}");
    let data = body["data"].as_array().unwrap();
    let keys: Vec<(&Value, &Value)> = data.iter().map(|c| (&c["key"], &c["status"])).collect();
    assert_eq!(
        keys,
        [
            (&json!("EVSE@1/Power#MaxSet"), &json!("pending")),
            (&json!("OCPPCommCtrlr/HeartbeatInterval"), &json!("pending")),
            (&json!("NetworkCtrlr/ApnPassword"), &json!("pending")),
        ]
    );
    let uuid = data[0]["action"].as_str().unwrap();
    assert!(
        data.iter().all(|c| c["action"] == uuid),
        "one action: {body}"
    );
    let entries = |apn: &str| {
        json!({"setVariableData": [
            {"attributeType": "MaxSet", "attributeValue": "11000",
             "component": {"name": "EVSE", "evse": {"id": 1}}, "variable": {"name": "Power"}},
            {"attributeValue": "60", "component": {"name": "OCPPCommCtrlr"},
             "variable": {"name": "HeartbeatInterval"}},
            {"attributeValue": apn, "component": {"name": "NetworkCtrlr"},
             "variable": {"name": "ApnPassword"}},
        ]})
    };
    let mut batch: Vec<Message> = Vec::new();
    commands.next_batch(&mut batch, 10).await.unwrap();
    let command = cms_bus::command_of(&batch[0]).expect("a command");
    assert_eq!(batch.len(), 1, "one action");
    assert_eq!(
        (
            command.uuid.as_str(),
            command.action.as_str(),
            command.session.as_str()
        ),
        (uuid, "SetVariables", "s-1")
    );
    assert_eq!(command.request, entries("***"), "published masked");
    let sealed = command.sealed_request.as_deref().expect("sealed");
    let opened = bench.key.open(uuid, sealed).expect("opens with the key");
    let opened: Value = serde_json::from_slice(&opened).unwrap();
    assert_eq!(opened, entries("n3w-s3cret"), "the gateway's to send");
    let (status, action) = bench
        .request(
            "GET",
            &bench.path.replace("/settings", &format!("/actions/{uuid}")),
            None,
        )
        .await;
    assert_eq!(status, 200, "{action}");
    assert_eq!(action["data"]["request"], entries("***"), "kept masked");

    // The station's answer: what it took is kept (a secret's value never), the rest is not.
    let result = |component: Value, variable: &str, status: &str| json!({"component": component, "variable": {"name": variable}, "attributeStatus": status});
    let mut max_set = result(
        json!({"name": "EVSE", "evse": {"id": 1}}),
        "Power",
        "Rejected",
    );
    max_set["attributeType"] = json!("MaxSet");
    let response = json!({"setVariableResult": [
        max_set,
        result(json!({"name": "OCPPCommCtrlr"}), "HeartbeatInterval", "Accepted"),
        result(json!({"name": "NetworkCtrlr"}), "ApnPassword", "Accepted"),
    ]});
    let report = ActionReport {
        command,
        status: ActionStatus::Answered,
        gateway: "gw-1".into(),
        response: Some(response),
        error: None,
        sent_at: Some(AT.into()),
        finished_at: Some(AT.into()),
    };
    bench
        .publish(cms_bus::report_record(&bench.topics, &report))
        .await;
    let data = bench
        .settings_once(|data| data.iter().any(|s| s["value"] == "60"))
        .await;
    assert_eq!(
        listed(&data),
        [
            item("EVSE@1/Power", json!("0"), true, "ReadOnly"),
            item("EVSE@1/Power#MaxSet", json!("22000"), false, "ReadWrite"),
            item("NetworkCtrlr/ApnPassword", json!("***"), false, "ReadWrite"),
            item(
                "OCPPCommCtrlr/HeartbeatInterval",
                json!("60"),
                false,
                "ReadWrite"
            ),
            item(
                "SecurityCtrlr/BasicAuthPassword",
                json!("***"),
                false,
                "WriteOnly"
            ),
        ]
    );
    bench.bus.close();
    bench.api.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_device_model_is_listed_changed_and_kept_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).await.unwrap();
    the_device_model_is_listed_changed_and_kept(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_device_model_is_listed_changed_and_kept_on_postgres() {
    let Some(server) = cms_store::testing::postgres_url() else {
        return;
    };
    let url = cms_store::testing::fresh_schema(&server).await.unwrap();
    let store = Store::open_url(&url).await.unwrap();
    the_device_model_is_listed_changed_and_kept(store).await;
}
