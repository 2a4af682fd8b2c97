//! A charger whose whole configuration is larger than the gateway's frame limit
//! (`--max-frame-size`, 64 KiB by default): the read after its boot closes its connection once
//! (1009) and ends `failed` with `FrameTooLarge`; the gateway does not read it after a boot
//! again, so the charger stays connected through its next boots instead of being closed at
//! each one. An operator's GetConfiguration is still sent.

use crate::support::commanded::calls::{Commands, wait_final};
use crate::support::{Api, Cms, REPLY_TIMEOUT, boot_payload, eventually};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

/// The gateway's default `--max-frame-size`.
const MAX_FRAME_SIZE: usize = 64 * 1024;
/// How long a booted charger waits to see that no configuration read comes: one that comes
/// does within milliseconds of the boot's answer (nothing else is booting).
const NO_READ_WINDOW: Duration = Duration::from_secs(2);

/// A charger played frame by frame: unlike `support::Charger`, it sees the gateway's own
/// calls (the configuration read after a boot) and answers them itself.
struct RawCharger {
    ws: WebSocketStream<TcpStream>,
}

/// What the gateway sent next: a text frame, or how the connection ended.
#[derive(Debug)]
#[allow(dead_code)] // `Ended`'s reason is read through Debug, in failure messages
enum Next {
    Frame(Value),
    Closed(Option<u16>),
    Ended(String),
}

impl RawCharger {
    async fn connect(cms: &Cms, identity: &str) -> RawCharger {
        let mut request = cms.ocpp_url(identity).into_client_request().unwrap();
        let protocol = HeaderValue::from_static("ocpp1.6");
        request
            .headers_mut()
            .insert("Sec-WebSocket-Protocol", protocol);
        let connecting = async {
            let tcp = TcpStream::connect(cms.ocpp_addr()).await.unwrap();
            tokio_tungstenite::client_async(request, tcp).await
        };
        let (ws, _) = tokio::time::timeout(REPLY_TIMEOUT, connecting)
            .await
            .expect("the handshake in time")
            .unwrap_or_else(|e| panic!("{identity} could not connect: {e}"));
        RawCharger { ws }
    }

    async fn send(&mut self, frame: &Value) {
        let text = frame.to_string();
        tokio::time::timeout(REPLY_TIMEOUT, self.ws.send(Message::text(text)))
            .await
            .expect("sending in time")
            .expect("sending a frame");
    }

    /// The next text frame or the connection's end, within `limit`; `None` when nothing came.
    /// Pings are answered by tungstenite along the way.
    async fn next_within(&mut self, limit: Duration) -> Option<Next> {
        let reading = async {
            loop {
                match self.ws.next().await {
                    Some(Ok(Message::Text(text))) => {
                        return Next::Frame(serde_json::from_str(&text).unwrap());
                    }
                    Some(Ok(Message::Close(frame))) => {
                        return Next::Closed(frame.map(|f| f.code.into()));
                    }
                    Some(Ok(_ping_or_pong)) => {}
                    Some(Err(e)) => return Next::Ended(e.to_string()),
                    None => return Next::Ended("end of stream".into()),
                }
            }
        };
        tokio::time::timeout(limit, reading).await.ok()
    }

    async fn next_frame(&mut self) -> Value {
        match self.next_within(REPLY_TIMEOUT).await {
            Some(Next::Frame(frame)) => frame,
            other => panic!("expected a frame from the gateway, got {other:?}"),
        }
    }

    /// Sends a CALL and returns the CALLRESULT's payload.
    async fn call(&mut self, id: &str, action: &str, payload: Value) -> Value {
        self.send(&json!([2, id, action, payload])).await;
        let answer = self.next_frame().await;
        assert_eq!(
            (&answer[0], &answer[1]),
            (&json!(3), &json!(id)),
            "{answer}"
        );
        answer[2].clone()
    }

    async fn boot(&mut self) {
        let answer = self
            .call("boot", "BootNotification", boot_payload("1.0"))
            .await;
        assert_eq!(answer["status"], "Accepted", "{answer}");
    }

    /// Waits for the gateway's GetConfiguration; returns its message id and payload.
    async fn configuration_read(&mut self) -> (Value, Value) {
        let call = self.next_frame().await;
        assert_eq!(
            (&call[0], &call[2]),
            (&json!(2), &json!("GetConfiguration")),
            "{call}"
        );
        (call[1].clone(), call[3].clone())
    }
}

/// A GetConfiguration answer of `keys` keys, as a charger with a large configuration gives it.
fn configuration_answer(id: &Value, keys: usize) -> Value {
    let key = |n: usize| {
        let value = "v".repeat(150);
        json!({"key": format!("VendorSetting{n:04}"), "readonly": false, "value": value})
    };
    let keys: Vec<Value> = (0..keys).map(key).collect();
    json!([3, id, {"configurationKey": keys}])
}

/// Closed once with 1009, then connected through its next boot with no read asked; the audit
/// log tells why the read failed and what raises the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configuration_over_the_frame_limit_closes_the_charger_once_then_is_not_read_at_boot() {
    let cms = Cms::up().await;
    let identity = "CP-ACT-HUGE";
    let uuid = cms.add_charger(identity).await;
    let token = cms.operator_token().await;
    let api = Api::new(&cms, &token);

    let mut charger = RawCharger::connect(&cms, identity).await;
    charger.boot().await;
    let (id, request) = charger.configuration_read().await;
    assert_eq!(request, json!({}), "the whole configuration");
    // 400 keys of about 200 bytes: some 80 KB, as a real charger's few hundred keys can be.
    let answer = configuration_answer(&id, 400);
    assert!(answer.to_string().len() > MAX_FRAME_SIZE);
    charger.send(&answer).await;
    match charger.next_within(REPLY_TIMEOUT).await {
        Some(Next::Closed(Some(1009))) => {}
        other => panic!("expected a close with 1009 for the large answer, got {other:?}"),
    }
    drop(charger);

    // The charger reconnects and boots again, as it would after every such close.
    let mut charger = RawCharger::connect(&cms, identity).await;
    charger.boot().await;
    if let Some(next) = charger.next_within(NO_READ_WINDOW).await {
        panic!("no configuration read after the second boot, and the connection open: {next:?}");
    }
    let beat = charger.call("beat", "Heartbeat", json!({})).await;
    assert!(beat["currentTime"].is_string(), "{beat}");

    let path = format!("/api/v3/chargers/{uuid}/actions");
    let read = eventually("the read after the first boot ended", async || {
        let log = api.get_ok(&path).await;
        match log["data"].as_array().map(Vec::as_slice) {
            Some([read]) if read["finished_at"].is_string() => Ok(read.clone()),
            _ => Err(log.to_string()),
        }
    })
    .await;
    assert_eq!(read["action"], "GetConfiguration", "{read}");
    assert_eq!(read["status"], "failed", "{read}");
    assert_eq!(read["error"]["code"], "FrameTooLarge", "{read}");
    let description = read["error"]["description"].as_str().unwrap_or_default();
    assert!(
        description.contains(&format!("{MAX_FRAME_SIZE} bytes"))
            && description.contains("--max-frame-size"),
        "names the limit and the flag that raises it: {read}"
    );
    let skipped = api
        .metrics()
        .await
        .sum("cms_gateway_configuration_reads_skipped_total", &[]);
    assert_eq!(skipped, Some(1.0), "the second boot's read skipped");

    // An operator asking for it still gets it sent (a small one, here).
    api.wait_for_charger(&uuid, "online", |c| c["connection_status"] == "online")
        .await;
    let commands = Commands::at(&cms.http_url(""), &token);
    let (_, location) = commands.queue(&uuid, "get-configuration", &json!({})).await;
    let (id, _) = charger.configuration_read().await;
    charger.send(&configuration_answer(&id, 1)).await;
    let asked = wait_final(&api, &location, REPLY_TIMEOUT).await;
    assert_eq!(asked["status"], "answered", "{asked}");
}
