//! One upstream of a relayed charger: an outbound websocket to `<websocket_url>/<identity>`
//! (in the charger's OCPP version, `ocpp1.6` or `ocpp2.0.1`; TLS for `wss`; Basic auth when
//! the URL carries credentials), reconnected with
//! backoff and jitter until the charger's session ends. Calls go one at a time, each waiting for
//! its answer (the OCPP-J rule), under message ids of cms's own.

use super::{DOWN, UP};
use super::{LeaderAnswer, Relayed, Replay};
use crate::actions::ActionInbox;
use crate::charger_calls::ChargerAnswer;
use crate::charger_calls_v201::call_error_v201;
use crate::events::{ConnectionEvent, EventTarget, connection_record};
use crate::record_time::record_time;
use cms_bus::ActionName;
use cms_bus::proxy_url::redacted;
use cms_bus::{ActionRequest, ProxyUrl, RequestedBy};
use cms_ocpp::{ErrorCode, Frame, OcppVersion, call_error, parse_frame};
use futures_util::{SinkExt, StreamExt};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_util::sync::CancellationToken;

/// How long connecting (TCP, TLS, upgrade) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an upstream has to answer a call before the next one goes.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
const FIRST_RETRY: Duration = Duration::from_secs(1);
/// How long a connection must have lasted for the next failure to start from [`FIRST_RETRY`].
const STEADY: Duration = Duration::from_secs(30);
/// An upstream is pinged this often; one from which nothing came for [`SILENT`] is lost (a
/// half-open connection that TCP alone would notice only after many minutes).
const PING_EVERY: Duration = Duration::from_secs(20);
const SILENT: Duration = Duration::from_secs(60);
/// How long a write to an upstream may take: one that stopped reading is lost, not waited for.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);
const LAST_RETRY: Duration = Duration::from_secs(60);

pub struct Link {
    pub websocket_url: String,
    /// Its place in the charger's list of proxy servers.
    pub position: usize,
    pub identity: String,
    /// The charger's OCPP version: the upstream is offered only that one, and its calls are
    /// that version's.
    pub version: OcppVersion,
    pub tls: Arc<rustls::ClientConfig>,
    pub ws_config: WebSocketConfig,
    pub replay: Arc<Mutex<Replay>>,
    /// Whether the first connection starts with the replay too (a set-up made mid-session).
    pub replay_first: bool,
    pub events: Events,
    /// Set when this upstream is the charger's leader: its calls reach the charger.
    pub leader: Option<LeaderSide>,
    /// [`super::CONNECTING`], [`super::UP`] or [`super::DOWN`]: the session asks before
    /// waiting for a leader's answer.
    pub state: Arc<AtomicU8>,
    /// Cleared whenever the upstream answers (see [`super::Relay::leader_missed`]).
    pub lagging: Arc<AtomicBool>,
    pub stop: CancellationToken,
}

/// Where the upstream's state is told: an `upstream` event on the connections topic, which the
/// API keeps as the proxy server's `connection_status`.
pub struct Events {
    pub bus: Arc<dyn cms_bus::Publisher>,
    pub target: EventTarget,
    pub identity_key: bytes::Bytes,
    pub session: bytes::Bytes,
}

impl Link {
    /// Publishes the upstream's state, without waiting: a lost event only leaves the proxy
    /// resource behind until the next one.
    fn tell(&self, connected: bool) {
        let events = &self.events;
        let event = ConnectionEvent::Upstream {
            position: self.position,
            websocket_url: redacted(&self.websocket_url),
            connected,
        };
        let record = connection_record(
            &events.target,
            &events.identity_key,
            &events.session,
            event,
            chrono::Utc::now(),
        );
        let delivery = events.bus.publish(record);
        let identity = self.identity.clone();
        tokio::spawn(async move {
            if let Err(e) = delivery.await {
                tracing::warn!(%identity, error = %e, "upstream state not published");
            }
        });
    }
}

/// Where a leader's calls go: the session's inbox, behind cms's own actions; which it may send.
pub struct LeaderSide {
    pub inbox: Arc<ActionInbox>,
    pub session: String,
    pub calls: super::LeaderCalls,
    pub refused: metrics::Counter,
}

/// How long a leader's call may wait for the charger's answer, queued and sent.
const LEADER_CALL_TTL: Duration = Duration::from_secs(60);
const LEADER_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A relayed call waiting for the upstream's answer.
struct Awaiting {
    id: String,
    sent: Instant,
    answer_to: Option<oneshot::Sender<LeaderAnswer>>,
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
        // On the first connection the charger's calls since it connected are all still queued;
        // after a failure, what was queued is gone and the replay stands in for it.
        let mut replay = self.replay_first;
        loop {
            let connected = tokio::select! {
                _ = self.stop.cancelled() => return,
                connected = tokio::time::timeout(CONNECT_TIMEOUT, self.connect()) => connected,
            };
            let outcome = match connected {
                Ok(Ok(ws)) => {
                    tracing::info!(identity = %self.identity, upstream = %target, "relaying to the upstream");
                    metrics::counter!("cms_proxy_upstream_connects_total", "outcome" => "connected")
                        .increment(1);
                    let up_since = Instant::now();
                    let gauge = metrics::gauge!("cms_proxy_upstreams_connected");
                    gauge.increment(1.0);
                    self.state.store(UP, Ordering::Release);
                    self.tell(true);
                    let ended = self.relay(ws, &mut calls, replay).await;
                    self.state.store(DOWN, Ordering::Release);
                    self.tell(false);
                    gauge.decrement(1.0);
                    // An upstream that takes the upgrade and then hangs up at once (refusing
                    // cms after all, crash-looping) is not tried again every second.
                    if up_since.elapsed() >= STEADY {
                        retry = FIRST_RETRY;
                    }
                    ended
                }
                Ok(Err(why)) => Ended::Lost(why),
                Err(_) => Ended::Lost(format!("no connection within {CONNECT_TIMEOUT:?}")),
            };
            let Ended::Lost(why) = outcome else {
                return;
            };
            self.state.store(DOWN, Ordering::Release);
            replay = true;
            // What waits now would reach the upstream long after; a charger waiting for the
            // leader's answer to it gets cms's at once (its sender dropped here).
            let mut dropped = 0;
            while calls.try_recv().is_ok() {
                dropped += 1;
            }
            metrics::counter!("cms_proxy_frames_dropped_total").increment(dropped);
            metrics::counter!("cms_proxy_upstream_connects_total", "outcome" => "failed")
                .increment(1);
            tracing::warn!(identity = %self.identity, upstream = %target, reason = %why,
                retry_in = ?retry, "upstream unavailable");
            tokio::select! {
                _ = self.stop.cancelled() => return,
                _ = tokio::time::sleep(jittered(retry)) => {}
            }
            retry = (retry * 2).min(LAST_RETRY);
        }
    }

    async fn connect(&self) -> Result<Upstream, String> {
        let target = ProxyUrl::parse(&self.websocket_url)?;
        let mut request = target
            .for_charger(&self.identity)
            .into_client_request()
            .map_err(|e| e.to_string())?;
        let headers = request.headers_mut();
        let subprotocol = self.version.subprotocol();
        headers.insert(
            "Sec-WebSocket-Protocol",
            HeaderValue::from_static(subprotocol),
        );
        if let Some(basic) = target.basic_auth() {
            let value = HeaderValue::from_str(&basic).map_err(|e| e.to_string())?;
            headers.insert("Authorization", value);
        }
        let tcp = TcpStream::connect((target.host(), target.port()))
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let _ = tcp.set_nodelay(true);
        let io: Box<dyn Io> = if target.is_secure() {
            let name = rustls::pki_types::ServerName::try_from(target.host().to_string())
                .map_err(|e| format!("server name {:?}: {e}", target.host()))?;
            let connector = tokio_rustls::TlsConnector::from(self.tls.clone());
            let tls = connector
                .connect(name, tcp)
                .await
                .map_err(|e| format!("TLS: {e}"))?;
            Box::new(tls)
        } else {
            Box::new(tcp)
        };
        let (ws, response) =
            tokio_tungstenite::client_async_with_config(request, io, Some(self.ws_config))
                .await
                .map_err(|e| format!("upgrade: {e}"))?;
        let agreed = response.headers().get("Sec-WebSocket-Protocol");
        if agreed.and_then(|v| v.to_str().ok()) != Some(subprotocol) {
            return Err(format!("the upstream did not agree to {subprotocol}"));
        }
        Ok(ws)
    }

    /// Replays the charger's state (`replay`: not on the first connection), then relays its
    /// calls until the connection or the session ends.
    async fn relay(
        &self,
        mut ws: Upstream,
        calls: &mut mpsc::Receiver<Relayed>,
        replay: bool,
    ) -> Ended {
        let mut replay: VecDeque<Relayed> = match replay {
            true => {
                let replay = self.replay.lock().unwrap_or_else(PoisonError::into_inner);
                replay.calls().into()
            }
            false => VecDeque::new(),
        };
        // The charger's answers to the leader's calls, as frames for the leader.
        let (replies, mut replies_out) = mpsc::unbounded_channel::<String>();
        let mut next_id: u64 = 0;
        let mut awaiting: Option<Awaiting> = None;
        let relayed = metrics::counter!("cms_proxy_frames_relayed_total");
        let latency = metrics::histogram!("cms_proxy_upstream_answer_seconds");
        let mut last_read = Instant::now();
        let mut ping = tokio::time::interval_at((Instant::now() + PING_EVERY).into(), PING_EVERY);
        loop {
            if awaiting.is_none()
                && let Some(call) = replay.pop_front()
            {
                match self.send(&mut ws, &mut next_id, call).await {
                    Ok(sent) => awaiting = Some(sent),
                    Err(e) => return Ended::Lost(e),
                }
                continue;
            }
            let deadline = awaiting.as_ref().map(|a| a.sent + ANSWER_TIMEOUT);
            let timeout = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = self.stop.cancelled() => {
                    let _ = tokio::time::timeout(SEND_TIMEOUT, ws.close(None)).await;
                    return Ended::Stopped;
                }
                _ = ping.tick() => {
                    if last_read.elapsed() >= SILENT {
                        return Ended::Lost(format!("nothing from the upstream for {SILENT:?}"));
                    }
                    if let Err(e) = write(&mut ws, Message::Ping(Default::default())).await {
                        return Ended::Lost(e);
                    }
                }
                call = calls.recv(), if awaiting.is_none() => {
                    let Some(call) = call else { return Ended::Stopped };
                    match self.send(&mut ws, &mut next_id, call).await {
                        Ok(sent) => awaiting = Some(sent),
                        Err(e) => return Ended::Lost(e),
                    }
                    relayed.increment(1);
                }
                _ = timeout => {
                    metrics::counter!("cms_proxy_upstream_timeouts_total").increment(1);
                    awaiting = None;
                }
                Some(reply) = replies_out.recv() => {
                    if let Err(e) = write(&mut ws, Message::text(reply)).await {
                        return Ended::Lost(e);
                    }
                }
                message = ws.next() => {
                    last_read = Instant::now();
                    let text = match message {
                        Some(Ok(Message::Text(text))) => text,
                        Some(Ok(Message::Close(_))) | None => return Ended::Lost("closed by the upstream".into()),
                        Some(Err(e)) => return Ended::Lost(e.to_string()),
                        Some(Ok(_)) => continue,
                    };
                    if let Some(reply) = self.on_frame(text.as_str(), &mut awaiting, &replies, &latency)
                        && let Err(e) = write(&mut ws, Message::text(reply)).await
                    {
                        return Ended::Lost(e);
                    }
                }
            }
        }
    }

    async fn send(
        &self,
        ws: &mut Upstream,
        next_id: &mut u64,
        call: Relayed,
    ) -> Result<Awaiting, String> {
        *next_id += 1;
        let id = format!("cms-{next_id}");
        send_call(ws, &id, &call).await?;
        // Written: its bytes are the socket's now, no longer the budgets'.
        drop(call.held);
        Ok(Awaiting {
            id,
            sent: Instant::now(),
            answer_to: call.answer_to,
        })
    }

    /// What a frame from the upstream asks of cms: an answer to the call awaited ends the wait
    /// (and, from the leader, goes to the charger); a call of the leader is queued for the
    /// charger, its answer to come back through `replies`; a follower's call is refused.
    /// `Some(frame)`: the reply to send now.
    fn on_frame(
        &self,
        text: &str,
        awaiting: &mut Option<Awaiting>,
        replies: &mpsc::UnboundedSender<String>,
        latency: &metrics::Histogram,
    ) -> Option<String> {
        let version = self.version;
        let (message_id, action, payload) = match parse_frame(text) {
            Ok(Frame::CallResult {
                message_id,
                payload,
            }) => {
                let answer = LeaderAnswer::Result(payload.get().to_string());
                if answered(awaiting, &message_id, answer, latency) {
                    self.lagging.store(false, Ordering::Release);
                }
                return None;
            }
            Ok(Frame::CallError {
                message_id,
                code,
                description,
                ..
            }) => {
                let answer = LeaderAnswer::Error {
                    code: code.into_owned(),
                    description: description.into_owned(),
                };
                if answered(awaiting, &message_id, answer, latency) {
                    self.lagging.store(false, Ordering::Release);
                }
                return None;
            }
            Ok(Frame::Call {
                message_id,
                action,
                payload,
            }) => (message_id, action, payload),
            Err(_) => return None,
        };
        let Some(leader) = &self.leader else {
            metrics::counter!("cms_proxy_upstream_calls_refused_total").increment(1);
            return Some(error_frame(
                version,
                &message_id,
                ErrorCode::SecurityError,
                "not the leader: cms relays this charger to this central system as a follower",
            ));
        };
        let request: serde_json::Value = serde_json::from_str(payload.get()).ok()?;
        // Checked on the request as it would be sent: a key given twice in the leader's text
        // is read once here, and sent once.
        if let Some((code, why)) = leader.calls.refusal(version, &action, &request) {
            leader.refused.increment(1);
            tracing::debug!(identity = %self.identity, %action, reason = %why,
                "a leader's call refused");
            return Some(error_frame(version, &message_id, code, &why));
        }
        let now = chrono::Utc::now();
        let expires = now + chrono::Duration::from_std(LEADER_CALL_TTL).unwrap_or_default();
        let command = ActionRequest {
            uuid: uuid::Uuid::new_v4().to_string(),
            identity: self.identity.clone(),
            session: leader.session.clone(),
            action: ActionName::new(&action, version),
            ocpp_version: version,
            request,
            requested_by: RequestedBy {
                kind: "proxy_leader".into(),
                email: None,
            },
            created_at: record_time(now),
            expires_at: record_time(expires),
            timeout_ms: LEADER_CALL_TIMEOUT.as_millis() as u64,
            sealed_request: None,
        };
        let (reply, charger_answer) = oneshot::channel();
        if leader.inbox.push_relayed(command, reply).is_err() {
            return Some(error_frame(
                version,
                &message_id,
                ErrorCode::GenericError,
                "the charger's queue of calls is full or closed",
            ));
        }
        metrics::counter!("cms_proxy_leader_calls_total").increment(1);
        let replies = replies.clone();
        let message_id = message_id.into_owned();
        tokio::spawn(async move {
            // The call ends in one report either way; only an answer is the charger's.
            let frame = match charger_answer.await {
                Ok(ChargerAnswer::Result { payload, .. }) => {
                    cms_ocpp::call_result(&message_id, &payload)
                }
                Ok(ChargerAnswer::Error {
                    code, description, ..
                }) => {
                    let code = ErrorCode::from_name(&code).unwrap_or(ErrorCode::GenericError);
                    error_frame(version, &message_id, code, &description)
                }
                Err(_) => error_frame(
                    version,
                    &message_id,
                    ErrorCode::GenericError,
                    "the charger did not answer: it timed out, was refused or went away",
                ),
            };
            let _ = replies.send(frame);
        });
        None
    }
}

/// A CALLERROR with the code spelled as `version` spells it.
fn error_frame(version: OcppVersion, message_id: &str, code: ErrorCode, why: &str) -> String {
    match version {
        OcppVersion::V16 => call_error(message_id, code, why),
        OcppVersion::V201 => call_error_v201(message_id, code, why),
    }
}

/// Ends the wait for `message_id`'s answer, handing it on when someone waits for it; whether it
/// was the answer awaited.
fn answered(
    awaiting: &mut Option<Awaiting>,
    message_id: &str,
    answer: LeaderAnswer,
    latency: &metrics::Histogram,
) -> bool {
    if awaiting.as_ref().is_none_or(|a| a.id != message_id) {
        return false;
    }
    let Some(done) = awaiting.take() else {
        return false;
    };
    latency.record(done.sent.elapsed().as_secs_f64());
    if let Some(answer_to) = done.answer_to {
        let _ = answer_to.send(answer);
    }
    true
}

async fn send_call(ws: &mut Upstream, id: &str, call: &Relayed) -> Result<(), String> {
    let payload = std::str::from_utf8(&call.payload).map_err(|e| e.to_string())?;
    let frame = cms_ocpp::call(id, call.action.as_str(), payload);
    write(ws, Message::text(frame)).await
}

/// Writes one message, giving up after [`SEND_TIMEOUT`]: an upstream that stopped reading must
/// not hold the link (or the end of the session) forever.
async fn write(ws: &mut Upstream, message: Message) -> Result<(), String> {
    match tokio::time::timeout(SEND_TIMEOUT, ws.send(message)).await {
        Ok(sent) => sent.map_err(|e| e.to_string()),
        Err(_) => Err(format!("the upstream took no data for {SEND_TIMEOUT:?}")),
    }
}

/// Between half and all of `retry`: chargers whose upstream went down together do not all
/// knock again at once.
fn jittered(retry: Duration) -> Duration {
    let random = uuid::Uuid::new_v4().as_u128() as u64;
    retry.mul_f64(0.5 + (random % 1000) as f64 / 2000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(leader: Option<LeaderSide>) -> Link {
        Link {
            websocket_url: "ws://127.0.0.1:9/ocpp".into(),
            position: 0,
            identity: "CP-1".into(),
            version: OcppVersion::V16,
            tls: cms_tls::client_config(None).unwrap(),
            ws_config: WebSocketConfig::default(),
            replay: Default::default(),
            replay_first: false,
            events: Events {
                bus: std::sync::Arc::new(cms_bus::InProcessBus::new(Default::default(), &[])),
                target: EventTarget {
                    topic: "t.ocpp.connections",
                    node: bytes::Bytes::from_static(b"gw"),
                },
                identity_key: bytes::Bytes::from_static(b"CP-1"),
                session: bytes::Bytes::from_static(b"s-1"),
            },
            leader,
            state: Default::default(),
            lagging: Default::default(),
            stop: CancellationToken::new(),
        }
    }

    #[tokio::test]
    async fn a_followers_call_is_refused_and_the_awaited_answer_goes_where_it_is_wanted() {
        let follower = link(None);
        let (replies, _) = mpsc::unbounded_channel();
        let latency = metrics::histogram!("test");
        let (answer_to, answer) = oneshot::channel();
        let mut awaiting = Some(Awaiting {
            id: "cms-1".into(),
            sent: Instant::now(),
            answer_to: Some(answer_to),
        });
        let refusal = follower.on_frame(
            r#"[2,"u1","Reset",{"type":"Hard"}]"#,
            &mut awaiting,
            &replies,
            &latency,
        );
        assert!(refusal.unwrap().starts_with(r#"[4,"u1","SecurityError""#));
        assert!(awaiting.is_some());
        assert_eq!(
            follower.on_frame(r#"[3,"other",{}]"#, &mut awaiting, &replies, &latency),
            None
        );
        assert!(
            awaiting.is_some(),
            "an answer to another call changes nothing"
        );
        let result = r#"[3,"cms-1",{"status":"Accepted","interval":77}]"#;
        assert_eq!(
            follower.on_frame(result, &mut awaiting, &replies, &latency),
            None
        );
        assert!(awaiting.is_none());
        assert_eq!(
            answer.await.unwrap(),
            LeaderAnswer::Result(r#"{"status":"Accepted","interval":77}"#.into())
        );
    }

    #[tokio::test]
    async fn a_leaders_call_is_queued_for_the_charger_and_its_answer_comes_back() {
        let inbox = Arc::new(ActionInbox::default());
        let side = LeaderSide {
            inbox: inbox.clone(),
            session: "s-1".into(),
            calls: super::super::LeaderCalls::default(),
            refused: metrics::Counter::noop(),
        };
        let leader = link(Some(side));
        let (replies, mut replies_out) = mpsc::unbounded_channel();
        let latency = metrics::histogram!("test");
        let call = r#"[2,"lead-7","RemoteStartTransaction",{"idTag":"ABC"}]"#;
        assert_eq!(leader.on_frame(call, &mut None, &replies, &latency), None);
        let queued = inbox.pop().unwrap();
        assert_eq!(queued.action.as_str(), "RemoteStartTransaction");
        assert_eq!(queued.request, serde_json::json!({"idTag": "ABC"}));
        assert_eq!(queued.session, "s-1");
        let answer = ChargerAnswer::Result {
            message_id: queued.uuid.clone(),
            payload: r#"{"status":"Accepted"}"#.into(),
        };
        inbox
            .take_reply(&queued.uuid)
            .unwrap()
            .send(answer)
            .unwrap();
        assert_eq!(
            replies_out.recv().await.unwrap(),
            r#"[3,"lead-7",{"status":"Accepted"}]"#
        );
    }

    #[test]
    fn retries_spread_between_half_and_all_of_the_delay() {
        for _ in 0..100 {
            let wait = jittered(Duration::from_secs(10));
            assert!(wait >= Duration::from_secs(5) && wait <= Duration::from_secs(10));
        }
    }
}
