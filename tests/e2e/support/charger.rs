//! A charge point speaking OCPP-J 1.6 over a real websocket.

use super::{Cms, REPLY_TIMEOUT};
use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

type Ws = WebSocketStream<TcpStream>;

/// How a charger opens its websocket: which identity in the URL, which subprotocol, which
/// credentials.
pub struct Handshake {
    url: String,
    subprotocol: Option<&'static str>,
    authorization: Option<String>,
}

impl Handshake {
    /// `ws://…/ocpp/{path_identity}` offering `ocpp1.6`, without credentials.
    pub fn new(cms: &Cms, path_identity: &str) -> Handshake {
        Handshake {
            url: cms.ocpp_url(path_identity),
            subprotocol: Some("ocpp1.6"),
            authorization: None,
        }
    }

    /// `url` (`ws://…/ocpp/{identity}`, of any gateway) offering `ocpp1.6`, without
    /// credentials.
    pub fn at(url: &str) -> Handshake {
        Handshake {
            url: url.to_string(),
            subprotocol: Some("ocpp1.6"),
            authorization: None,
        }
    }

    /// Offers `protocols` instead of `ocpp1.6`: one name, or several comma-separated in the
    /// charger's order of preference (e.g. `"ocpp2.0.1, ocpp1.6"`).
    pub fn offering(mut self, protocols: &'static str) -> Self {
        self.subprotocol = Some(protocols);
        self
    }

    /// Offers no subprotocol at all.
    pub fn without_subprotocol(mut self) -> Self {
        self.subprotocol = None;
        self
    }

    /// `Authorization: Basic base64(user:password)`.
    pub fn basic_auth(mut self, user: &str, password: &str) -> Self {
        let encoded =
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        self.authorization = Some(format!("Basic {encoded}"));
        self
    }

    /// Performs the handshake (bounded in time).
    pub async fn open(self) -> Result<Charger, WsError> {
        let mut request = self
            .url
            .as_str()
            .into_client_request()
            .expect("valid ws url");
        if let Some(protocol) = self.subprotocol {
            request
                .headers_mut()
                .insert("Sec-WebSocket-Protocol", HeaderValue::from_static(protocol));
        }
        if let Some(auth) = &self.authorization {
            let value = HeaderValue::from_str(auth).expect("header value");
            request.headers_mut().insert("Authorization", value);
        }
        let authority = request
            .uri()
            .authority()
            .expect("ws url has a host")
            .to_string();
        let connecting = async {
            let tcp = TcpStream::connect(&authority).await?;
            tokio_tungstenite::client_async(request, tcp).await
        };
        let (ws, response) = tokio::time::timeout(REPLY_TIMEOUT, connecting)
            .await
            .unwrap_or_else(|_| panic!("websocket handshake with {} timed out", self.url))?;
        let subprotocol = response
            .headers()
            .get("sec-websocket-protocol")
            .map(|v| v.to_str().unwrap_or("<not ascii>").to_string());
        Ok(Charger {
            ws,
            next_id: 0,
            subprotocol,
        })
    }

    /// Performs the handshake expecting the server to refuse it with a plain HTTP response;
    /// returns that response's status.
    pub async fn refused_status(self) -> u16 {
        let url = self.url.clone();
        match self.open().await {
            Ok(_) => panic!("expected the upgrade to {url} to be refused, but it succeeded"),
            Err(WsError::Http(response)) => response.status().as_u16(),
            Err(other) => panic!("expected an HTTP error status from {url}, got: {other}"),
        }
    }
}

/// A connected charger.
pub struct Charger {
    ws: Ws,
    next_id: u64,
    /// The `Sec-WebSocket-Protocol` the server answered with, if any.
    pub subprotocol: Option<String>,
}

/// Something other than a text frame that ended a wait.
#[derive(Debug)]
#[allow(dead_code)] // the fields are read through Debug, in failure messages
pub enum Ended {
    Closed(Option<(u16, String)>),
    StreamEnd,
    Error(String),
}

impl Charger {
    /// Connects as `identity` (no password), offering `ocpp1.6`; fails the test if refused.
    pub async fn connect(cms: &Cms, identity: &str) -> Charger {
        Handshake::new(cms, identity)
            .open()
            .await
            .unwrap_or_else(|e| panic!("charger {identity} could not connect: {e}"))
    }

    /// Connects and sends a BootNotification reporting `firmware`.
    pub async fn connect_and_boot(cms: &Cms, identity: &str, firmware: &str) -> Charger {
        let mut charger = Charger::connect(cms, identity).await;
        let answer = charger
            .call_result("BootNotification", super::boot_payload(firmware))
            .await;
        assert_eq!(
            answer["status"], "Accepted",
            "BootNotification answer: {answer}"
        );
        charger
    }

    /// Sends a CALL and returns the whole answer frame (a CALLRESULT or a CALLERROR), checking
    /// that it answers this CALL's message id.
    pub async fn call(&mut self, action: &str, payload: Value) -> Value {
        self.next_id += 1;
        let id = format!("e2e-{}", self.next_id);
        self.send_text(&json!([2, id, action, payload]).to_string())
            .await;
        let answer = self.next_frame().await;
        assert_eq!(
            answer[1],
            json!(id),
            "answer to {action} ({id}) carries another id: {answer}"
        );
        answer
    }

    /// Sends a CALL and returns the CALLRESULT payload, failing the test on anything else.
    pub async fn call_result(&mut self, action: &str, payload: Value) -> Value {
        let sent = payload.to_string();
        let answer = self.call(action, payload).await;
        assert_eq!(
            answer[0], 3,
            "expected a CALLRESULT to {action} {sent}, got {answer}"
        );
        answer[2].clone()
    }

    /// Sends a Heartbeat and checks it is answered: proof the connection still works.
    pub async fn heartbeat(&mut self) -> Value {
        let answer = self.call_result("Heartbeat", json!({})).await;
        assert!(
            answer["currentTime"].is_string(),
            "Heartbeat answer: {answer}"
        );
        answer
    }

    pub async fn send_text(&mut self, text: &str) {
        self.send(Message::text(text.to_string())).await;
    }

    pub async fn send_binary(&mut self, bytes: Vec<u8>) {
        self.send(Message::binary(bytes)).await;
    }

    async fn send(&mut self, message: Message) {
        tokio::time::timeout(REPLY_TIMEOUT, self.ws.send(message))
            .await
            .expect("sending a frame timed out")
            .expect("sending a frame failed");
    }

    /// The next text frame, parsed as JSON (pings are answered along the way).
    pub async fn next_frame(&mut self) -> Value {
        match self.next_text(REPLY_TIMEOUT).await {
            Ok(text) => serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("server sent a frame that is not JSON ({e}): {text}")),
            Err(ended) => panic!("expected an OCPP frame, but the connection ended: {ended:?}"),
        }
    }

    /// Reads until a text frame arrives or the connection ends; panics after `limit`.
    async fn next_text(&mut self, limit: Duration) -> Result<String, Ended> {
        let reading = async {
            loop {
                match self.ws.next().await {
                    Some(Ok(Message::Text(text))) => {
                        if let Some(reply) = answer_to_server_call(text.as_str()) {
                            // cms's own calls (the configuration read after a boot): answered
                            // here, so a test reading its answers never sees them.
                            let sent = self.ws.send(Message::text(reply)).await;
                            sent.map_err(|e| Ended::Error(e.to_string()))?;
                            continue;
                        }
                        return Ok(text.to_string());
                    }
                    Some(Ok(Message::Close(frame))) => {
                        return Err(Ended::Closed(
                            frame.map(|f| (u16::from(f.code), f.reason.to_string())),
                        ));
                    }
                    Some(Ok(Message::Binary(bytes))) => {
                        panic!("server sent a binary frame: {bytes:?}")
                    }
                    Some(Ok(_ping_pong_or_raw)) => continue,
                    Some(Err(e)) => return Err(Ended::Error(e.to_string())),
                    None => return Err(Ended::StreamEnd),
                }
            }
        };
        tokio::time::timeout(limit, reading)
            .await
            .unwrap_or_else(|_| panic!("nothing arrived from the server within {limit:?}"))
    }

    /// Waits for the server's close frame and returns its code and reason. Fails the test if a
    /// text frame arrives first, or the connection ends without a close frame.
    pub async fn expect_close(&mut self) -> (u16, String) {
        match self.next_text(REPLY_TIMEOUT).await {
            Ok(text) => panic!("expected a close frame, got a text frame: {text}"),
            Err(Ended::Closed(Some(frame))) => frame,
            Err(other) => panic!("expected a close frame with a code, got {other:?}"),
        }
    }

    /// Waits for the connection to end in any way (close frame, EOF or reset).
    pub async fn expect_end(&mut self, limit: Duration) -> Ended {
        match self.next_text(limit).await {
            Ok(text) => panic!("expected the connection to end, got a text frame: {text}"),
            Err(ended) => ended,
        }
    }

    /// Keeps reading (and so answering pings) for `window`; returns how many pings arrived.
    /// Fails the test if the connection ends or the server sends a text frame meanwhile.
    pub async fn stay_for(&mut self, window: Duration) -> usize {
        let mut pings = 0;
        let end = tokio::time::Instant::now() + window;
        loop {
            match tokio::time::timeout_at(end, self.ws.next()).await {
                Err(_) => return pings,
                Ok(Some(Ok(Message::Ping(_)))) => pings += 1,
                Ok(Some(Ok(Message::Pong(_)))) => {}
                Ok(Some(Ok(Message::Text(text)))) if answer_to_server_call(&text).is_some() => {
                    let reply = answer_to_server_call(&text).unwrap_or_default();
                    self.ws
                        .send(Message::text(reply))
                        .await
                        .expect("answering the server's call");
                }
                Ok(other) => panic!("expected a quiet open connection, got {other:?}"),
            }
        }
    }

    /// Closes the websocket from the charger side (code 1000) and waits for the server's reply.
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(REPLY_TIMEOUT, self.ws.close(None)).await;
        let _ = tokio::time::timeout(REPLY_TIMEOUT, async {
            while let Some(Ok(_)) = self.ws.next().await {}
        })
        .await;
    }
}

/// The answer to a CALL from the server: an empty configuration for GetConfiguration, and a
/// CALLERROR `NotImplemented` for anything else this simple charger does not do; `None` for a
/// frame that is not a CALL.
fn answer_to_server_call(text: &str) -> Option<String> {
    let frame: Value = serde_json::from_str(text).ok()?;
    if frame[0] != 2 {
        return None;
    }
    let id = &frame[1];
    Some(
        match frame[2].as_str() {
            Some("GetConfiguration") => json!([3, id, {"configurationKey": []}]),
            _ => json!([4, id, "NotImplemented", "not done by this test charger", {}]),
        }
        .to_string(),
    )
}
