//! One upstream of a relayed charger: an outbound websocket to `<websocket_url>/<identity>`
//! (`ocpp1.6`; TLS for `wss`; Basic auth when the URL carries credentials), reconnected with
//! backoff and jitter until the charger's session ends. Calls go one at a time, each waiting for
//! its answer (the OCPP-J rule), under message ids of cms's own.

use super::{Relayed, Replay};
use cms_ocpp::{ErrorCode, Frame, call_error, parse_frame};
use futures_util::{SinkExt, StreamExt};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_util::sync::CancellationToken;

/// How long connecting (TCP, TLS, upgrade) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an upstream has to answer a call before the next one goes.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
const FIRST_RETRY: Duration = Duration::from_secs(1);
const LAST_RETRY: Duration = Duration::from_secs(60);

pub struct Link {
    pub websocket_url: String,
    pub identity: String,
    pub tls: Arc<rustls::ClientConfig>,
    pub replay: Arc<Mutex<Replay>>,
    pub stop: CancellationToken,
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}
type Upstream = WebSocketStream<Box<dyn Io>>;

/// Why a connection to the upstream ended.
enum Ended {
    Stopped,
    Lost(String),
}

impl Link {
    /// Runs until the session ends: connect, replay, relay; on a failure, wait and again.
    pub async fn run(self, mut calls: mpsc::Receiver<Relayed>) {
        let mut retry = FIRST_RETRY;
        let target = redacted(&self.websocket_url);
        loop {
            let connected = tokio::select! {
                _ = self.stop.cancelled() => return,
                connected = tokio::time::timeout(CONNECT_TIMEOUT, self.connect()) => connected,
            };
            let outcome = match connected {
                Ok(Ok(ws)) => {
                    tracing::info!(upstream = %target, "relaying to the upstream");
                    metrics::counter!("cms_proxy_upstream_connects_total", "outcome" => "connected")
                        .increment(1);
                    retry = FIRST_RETRY;
                    let gauge = metrics::gauge!("cms_proxy_upstreams_connected");
                    gauge.increment(1.0);
                    let ended = self.relay(ws, &mut calls).await;
                    gauge.decrement(1.0);
                    ended
                }
                Ok(Err(why)) => Ended::Lost(why),
                Err(_) => Ended::Lost(format!("no connection within {CONNECT_TIMEOUT:?}")),
            };
            let Ended::Lost(why) = outcome else {
                return;
            };
            metrics::counter!("cms_proxy_upstream_connects_total", "outcome" => "failed")
                .increment(1);
            tracing::warn!(upstream = %target, reason = %why, retry_in = ?retry, "upstream unavailable");
            tokio::select! {
                _ = self.stop.cancelled() => return,
                _ = tokio::time::sleep(jittered(retry)) => {}
            }
            retry = (retry * 2).min(LAST_RETRY);
        }
    }

    async fn connect(&self) -> Result<Upstream, String> {
        let target = UpstreamUrl::parse(&self.websocket_url, &self.identity)?;
        let mut request = target
            .url
            .as_str()
            .into_client_request()
            .map_err(|e| e.to_string())?;
        let headers = request.headers_mut();
        headers.insert(
            "Sec-WebSocket-Protocol",
            HeaderValue::from_static("ocpp1.6"),
        );
        if let Some(basic) = &target.basic {
            let value = HeaderValue::from_str(basic).map_err(|e| e.to_string())?;
            headers.insert("Authorization", value);
        }
        let tcp = TcpStream::connect((target.host.as_str(), target.port))
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let _ = tcp.set_nodelay(true);
        let io: Box<dyn Io> = if target.tls {
            let name = rustls::pki_types::ServerName::try_from(target.host.clone())
                .map_err(|e| format!("server name {:?}: {e}", target.host))?;
            let connector = tokio_rustls::TlsConnector::from(self.tls.clone());
            let tls = connector
                .connect(name, tcp)
                .await
                .map_err(|e| format!("TLS: {e}"))?;
            Box::new(tls)
        } else {
            Box::new(tcp)
        };
        let (ws, response) = tokio_tungstenite::client_async(request, io)
            .await
            .map_err(|e| format!("upgrade: {e}"))?;
        let agreed = response.headers().get("Sec-WebSocket-Protocol");
        if agreed.and_then(|v| v.to_str().ok()) != Some("ocpp1.6") {
            return Err("the upstream did not agree to ocpp1.6".into());
        }
        Ok(ws)
    }

    /// Replays the charger's state, then relays its calls until the connection or the session
    /// ends.
    async fn relay(&self, mut ws: Upstream, calls: &mut mpsc::Receiver<Relayed>) -> Ended {
        let mut replay: VecDeque<Relayed> = self
            .replay
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .calls()
            .into();
        let mut next_id: u64 = 0;
        // The call waiting for its answer: its message id, when sent, and until when it waits.
        let mut awaiting: Option<(String, Instant)> = None;
        loop {
            if awaiting.is_none()
                && let Some(call) = replay.pop_front()
            {
                next_id += 1;
                let id = format!("cms-{next_id}");
                if let Err(e) = send_call(&mut ws, &id, &call).await {
                    return Ended::Lost(e);
                }
                awaiting = Some((id, Instant::now()));
                continue;
            }
            let deadline = awaiting.as_ref().map(|(_, sent)| *sent + ANSWER_TIMEOUT);
            let timeout = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = self.stop.cancelled() => {
                    let _ = ws.close(None).await;
                    return Ended::Stopped;
                }
                call = calls.recv(), if awaiting.is_none() => {
                    let Some(call) = call else { return Ended::Stopped };
                    next_id += 1;
                    let id = format!("cms-{next_id}");
                    if let Err(e) = send_call(&mut ws, &id, &call).await {
                        return Ended::Lost(e);
                    }
                    metrics::counter!("cms_proxy_frames_relayed_total").increment(1);
                    awaiting = Some((id, Instant::now()));
                }
                _ = timeout => {
                    metrics::counter!("cms_proxy_upstream_timeouts_total").increment(1);
                    awaiting = None;
                }
                message = ws.next() => {
                    let text = match message {
                        Some(Ok(Message::Text(text))) => text,
                        Some(Ok(Message::Close(_))) | None => return Ended::Lost("closed by the upstream".into()),
                        Some(Err(e)) => return Ended::Lost(e.to_string()),
                        Some(Ok(_)) => continue,
                    };
                    if let Some(reply) = on_upstream_frame(text.as_str(), &mut awaiting)
                        && let Err(e) = ws.send(Message::text(reply)).await
                    {
                        return Ended::Lost(e.to_string());
                    }
                }
            }
        }
    }
}

async fn send_call(ws: &mut Upstream, id: &str, call: &Relayed) -> Result<(), String> {
    let payload = std::str::from_utf8(&call.payload).map_err(|e| e.to_string())?;
    let frame = cms_ocpp::call(id, call.action.as_str(), payload);
    ws.send(Message::text(frame))
        .await
        .map_err(|e| e.to_string())
}

/// What a frame from the upstream asks of cms: an answer to the call awaited ends the wait
/// (its content is the upstream's business); a call of its own is refused, for a follower
/// never commands the charger. `Some(frame)`: the reply to send.
fn on_upstream_frame(text: &str, awaiting: &mut Option<(String, Instant)>) -> Option<String> {
    match parse_frame(text) {
        Ok(Frame::CallResult { message_id, .. }) | Ok(Frame::CallError { message_id, .. }) => {
            if let Some((id, sent)) = awaiting.as_ref()
                && *id == message_id
            {
                metrics::histogram!("cms_proxy_upstream_answer_seconds")
                    .record(sent.elapsed().as_secs_f64());
                *awaiting = None;
            }
            None
        }
        Ok(Frame::Call { message_id, .. }) => {
            metrics::counter!("cms_proxy_upstream_calls_refused_total").increment(1);
            Some(call_error(
                &message_id,
                ErrorCode::SecurityError,
                "not the leader: cms relays this charger to this central system as a follower",
            ))
        }
        Err(_) => None,
    }
}

/// Between half and all of `retry`: chargers whose upstream went down together do not all
/// knock again at once.
fn jittered(retry: Duration) -> Duration {
    let random = uuid::Uuid::new_v4().as_u128() as u64;
    retry.mul_f64(0.5 + (random % 1000) as f64 / 2000.0)
}

/// The URL without its password, for logs.
fn redacted(url: &str) -> String {
    match url
        .split_once("://")
        .and_then(|(s, rest)| Some((s, rest.split_once('@')?)))
    {
        Some((scheme, (_, host))) => format!("{scheme}://***@{host}"),
        None => url.to_string(),
    }
}

/// An upstream's address, as connecting needs it.
#[derive(Debug, PartialEq, Eq)]
struct UpstreamUrl {
    /// The URL to ask for, the charger's identity appended, without credentials.
    url: String,
    host: String,
    port: u16,
    tls: bool,
    /// `Basic <base64>` from the URL's `user:password@`.
    basic: Option<String>,
}

impl UpstreamUrl {
    fn parse(websocket_url: &str, identity: &str) -> Result<UpstreamUrl, String> {
        let (scheme, rest) = websocket_url
            .split_once("://")
            .ok_or_else(|| format!("not a URL: {}", redacted(websocket_url)))?;
        let tls = match scheme.to_ascii_lowercase().as_str() {
            "wss" => true,
            "ws" => false,
            other => return Err(format!("not a websocket URL (scheme {other})")),
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        let (credentials, host_port) = match authority.rsplit_once('@') {
            Some((credentials, host_port)) => (Some(credentials), host_port),
            None => (None, authority),
        };
        let (host, port) = split_port(host_port, if tls { 443 } else { 80 })?;
        let basic = credentials.map(|c| {
            use base64::Engine;
            let decoded = percent_encoding::percent_decode_str(c).decode_utf8_lossy();
            let encoded = base64::engine::general_purpose::STANDARD.encode(decoded.as_bytes());
            format!("Basic {encoded}")
        });
        let identity = percent_encoding::utf8_percent_encode(identity, SEGMENT);
        let path = path.trim_end_matches('/');
        Ok(UpstreamUrl {
            url: format!("{scheme}://{host_port}{path}/{identity}"),
            host,
            port,
            tls,
            basic,
        })
    }
}

/// What a path segment may not hold as it is.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'/')
    .add(b'?')
    .add(b'#')
    .add(b'%');

fn split_port(host_port: &str, default: u16) -> Result<(String, u16), String> {
    // `[::1]:9000`, `host:9000`, `host`.
    let (host, port) = match host_port.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => (host, Some(port)),
        _ => (host_port, None),
    };
    let port = match port {
        Some(port) => port.parse().map_err(|_| format!("bad port {port:?}"))?,
        None => default,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err("no host in the URL".into());
    }
    Ok((host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_is_appended_and_credentials_become_basic_auth() {
        let url = UpstreamUrl::parse("wss://ops:s3cr%40t@csms.example:8443/ocpp/", "CP 1").unwrap();
        assert_eq!(url.url, "wss://csms.example:8443/ocpp/CP%201");
        assert_eq!(
            (url.host.as_str(), url.port, url.tls),
            ("csms.example", 8443, true)
        );
        // base64("ops:s3cr@t")
        assert_eq!(url.basic.as_deref(), Some("Basic b3BzOnMzY3JAdA=="));
        let plain = UpstreamUrl::parse("ws://127.0.0.1:9000", "CP-1").unwrap();
        assert_eq!(plain.url, "ws://127.0.0.1:9000/CP-1");
        assert_eq!((plain.port, plain.tls, plain.basic), (9000, false, None));
        assert_eq!(UpstreamUrl::parse("wss://h/ocpp", "X").unwrap().port, 443);
        assert!(UpstreamUrl::parse("https://h/ocpp", "X").is_err());
        assert!(UpstreamUrl::parse("no url", "X").is_err());
        assert_eq!(redacted("wss://ops:pw@h/ocpp"), "wss://***@h/ocpp");
    }

    #[test]
    fn a_call_of_a_follower_is_refused_and_the_awaited_answer_ends_the_wait() {
        let mut awaiting = Some(("cms-1".to_string(), Instant::now()));
        let refusal = on_upstream_frame(r#"[2,"u1","Reset",{"type":"Hard"}]"#, &mut awaiting);
        assert!(refusal.unwrap().starts_with(r#"[4,"u1","SecurityError""#));
        assert!(awaiting.is_some());
        assert_eq!(on_upstream_frame(r#"[3,"other",{}]"#, &mut awaiting), None);
        assert!(
            awaiting.is_some(),
            "an answer to another call changes nothing"
        );
        assert_eq!(on_upstream_frame(r#"[3,"cms-1",{}]"#, &mut awaiting), None);
        assert!(awaiting.is_none());
    }

    #[test]
    fn retries_spread_between_half_and_all_of_the_delay() {
        for _ in 0..100 {
            let wait = jittered(Duration::from_secs(10));
            assert!(wait >= Duration::from_secs(5) && wait <= Duration::from_secs(10));
        }
    }
}
