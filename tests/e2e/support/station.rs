//! A charge point that writes its OCPP-J frames by hand, byte for byte, to any gateway URL, and
//! that survives its connection dying (for the fault tests): every failure is a value, not a
//! panic.

use super::REPLY_TIMEOUT;
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use std::time::{Duration, SystemTime};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

type Ws = WebSocketStream<TcpStream>;

/// Why a handshake did not give a usable connection.
#[derive(Debug)]
pub enum Refused {
    /// The server answered the upgrade with this HTTP status.
    Status(u16),
    /// No answer at all: connection refused or reset, or a time-out.
    Unreachable(String),
}

/// One CALL as it went on the wire, and what came back.
#[derive(Debug, Clone)]
pub struct Sent {
    pub message_id: String,
    pub action: String,
    /// The payload object exactly as written into the frame.
    pub payload: String,
    pub sent_at: SystemTime,
    /// When the answer arrived; `None` when none did.
    pub answered_at: Option<SystemTime>,
    /// The whole answer frame.
    pub answer: Option<Value>,
}

pub struct Station {
    pub identity: String,
    ws: Ws,
    next_id: u64,
    /// Prefix of this connection's message ids, so ids never repeat across reconnects.
    id_prefix: String,
}

impl Station {
    /// Opens `ws://{addr}/ocpp/{identity}` offering `ocpp1.6`.
    pub async fn connect(addr: &str, identity: &str, id_prefix: &str) -> Result<Station, Refused> {
        let ws = handshake(addr, identity, Some("ocpp1.6")).await?;
        Ok(Station {
            identity: identity.to_string(),
            ws,
            next_id: 0,
            id_prefix: id_prefix.to_string(),
        })
    }

    /// Sends `[2, id, action, payload]` written with the given separators around the payload,
    /// and waits for the answer (bounded by `limit`). Returns what went out and what came back
    /// (`answered_at` stays `None` when the connection ended or nothing came within `limit`).
    pub async fn call_raw(
        &mut self,
        action: &str,
        payload: &str,
        limit: Duration,
    ) -> (Sent, Option<Ended>) {
        self.next_id += 1;
        let message_id = format!("{}-{}", self.id_prefix, self.next_id);
        // Whitespace between the elements, and around the payload, is legal JSON; the payload
        // itself is the caller's text untouched.
        let frame = format!("[2,\t\"{message_id}\" ,\n  \"{action}\",\r\n {payload} \n]");
        let mut sent = Sent {
            message_id: message_id.clone(),
            action: action.to_string(),
            payload: payload.to_string(),
            sent_at: SystemTime::now(),
            answered_at: None,
            answer: None,
        };
        if let Err(ended) = self.send_text(frame).await {
            return (sent, Some(ended));
        }
        match self.answer_to(&message_id, limit).await {
            Ok(answer) => {
                sent.answered_at = Some(SystemTime::now());
                sent.answer = Some(answer);
                (sent, None)
            }
            Err(ended) => (sent, Some(ended)),
        }
    }

    /// `call_raw` that must get a CALLRESULT within [`REPLY_TIMEOUT`]; returns the record of it.
    pub async fn call_ok(&mut self, action: &str, payload: &str) -> Sent {
        let (sent, ended) = self.call_raw(action, payload, REPLY_TIMEOUT).await;
        if let Some(ended) = ended {
            panic!(
                "{} got no answer to {action} {payload}: {ended:?}",
                self.identity
            );
        }
        let answer = sent.answer.as_ref().expect("answered");
        assert_eq!(
            answer[0], 3,
            "{} expected a CALLRESULT to {action} {payload}, got {answer}",
            self.identity
        );
        sent
    }

    async fn send_text(&mut self, text: String) -> Result<(), Ended> {
        match tokio::time::timeout(REPLY_TIMEOUT, self.ws.send(Message::text(text))).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Ended::Error(e.to_string())),
            Err(_) => Err(Ended::TimedOut),
        }
    }

    /// Reads until the answer carrying `message_id` (answers to other ids are skipped).
    async fn answer_to(&mut self, message_id: &str, limit: Duration) -> Result<Value, Ended> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let next = match tokio::time::timeout_at(deadline, self.ws.next()).await {
                Ok(next) => next,
                Err(_) => return Err(Ended::TimedOut),
            };
            match next {
                Some(Ok(Message::Text(text))) => {
                    let frame: Value = serde_json::from_str(text.as_str()).map_err(|e| {
                        Ended::Error(format!("a frame that is not JSON ({e}): {text}"))
                    })?;
                    if frame[1] == message_id {
                        return Ok(frame);
                    }
                }
                Some(Ok(Message::Close(frame))) => {
                    return Err(Ended::Closed(
                        frame.map(|f| (u16::from(f.code), f.reason.to_string())),
                    ));
                }
                Some(Ok(_ping_pong_binary_or_raw)) => {}
                Some(Err(e)) => return Err(Ended::Error(e.to_string())),
                None => return Err(Ended::StreamEnd),
            }
        }
    }

    /// Closes from the charger side (1000) and waits (bounded) for the server's close.
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(REPLY_TIMEOUT, self.ws.close(None)).await;
        let _ = tokio::time::timeout(REPLY_TIMEOUT, async {
            while let Some(Ok(_)) = self.ws.next().await {}
        })
        .await;
    }
}

/// How a wait for an answer ended without one.
#[derive(Debug, Clone)]
#[allow(dead_code)] // the fields are read through Debug, in failure messages and summaries
pub enum Ended {
    Closed(Option<(u16, String)>),
    StreamEnd,
    Error(String),
    TimedOut,
}

/// Whether `identity` may connect to the gateway at `addr`, asked without opening a session:
/// the upgrade offers no subprotocol, so a known charger is upgraded and at once closed (101,
/// and no connection event is published), an unknown one refused (404), and a gateway still
/// loading its registry answers 503.
pub async fn probe(addr: &str, identity: &str) -> Result<u16, Refused> {
    handshake(addr, identity, None).await.map(|_| 101)
}

async fn handshake(addr: &str, identity: &str, subprotocol: Option<&str>) -> Result<Ws, Refused> {
    let url = format!("ws://{addr}/ocpp/{identity}");
    let mut request = url.as_str().into_client_request().expect("valid ws url");
    if let Some(protocol) = subprotocol {
        let value = HeaderValue::from_str(protocol).expect("header value");
        request
            .headers_mut()
            .insert("Sec-WebSocket-Protocol", value);
    }
    let connecting = async {
        let tcp = TcpStream::connect(addr).await?;
        tokio_tungstenite::client_async(request, tcp).await
    };
    match tokio::time::timeout(REPLY_TIMEOUT, connecting).await {
        Ok(Ok((ws, _response))) => Ok(ws),
        Ok(Err(WsError::Http(response))) => Err(Refused::Status(response.status().as_u16())),
        Ok(Err(e)) => Err(Refused::Unreachable(e.to_string())),
        Err(_) => Err(Refused::Unreachable(format!(
            "handshake with {url} timed out"
        ))),
    }
}
