//! One charger's connection: handshake, then frames in and answers out until it ends, with
//! keepalive, takeover by a newer connection, the calls cms sends the charger (one in flight
//! at a time, `action_calls.rs`) and graceful shutdown.

use crate::action_calls::ActionCalls;
use crate::actions::ActionInbox;
use crate::admission::{ClientSubject, Transport};
use crate::boot_configuration::read_configuration;
use crate::charger_action::ChargerAction;
use crate::charger_calls_v201::call_error_v201;
use crate::diagnostics::{FrameRing, RefusedBecause};
use crate::events::{ConnectionEvent, connection_record};
use crate::handshake;
use crate::metrics::{DisconnectReason, FrameKind, handshake_rejected};
use crate::relay::{Relay, Replay};
use crate::stream::ChargerStream;
use crate::{AckAfter, ChargerIdentity, Shared};
use bytes::Bytes;
use chrono::Utc;
use cms_ocpp::v16::Action;
use cms_ocpp::{ErrorCode, OcppVersion, call_error};
use dashmap::mapref::entry::Entry;
use futures_util::{FutureExt, SinkExt, StreamExt};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{OwnedSemaphorePermit, oneshot};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message, Utf8Bytes};

mod text_frame;

use text_frame::{Published, Taken};

type Ws = WebSocketStream<ChargerStream>;

/// How many already-received frames are answered before one flush.
const BATCH: usize = 16;

/// Why a live session is told to end by someone else than the charger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// A newer connection of the same charger took its place.
    Replaced,
    /// The gateway is draining (`Gateway::drain`): its turn to go has come.
    Drained,
}

/// The entry of a live session in the gateway's registry: what a newer connection of the same
/// charger or a draining gateway uses to end it, and where actions for the session are queued.
pub struct SessionEntry {
    pub session: Bytes,
    pub end: oneshot::Sender<Ending>,
    /// Whether this session's charger gave its password.
    pub authenticated: bool,
    pub inbox: Arc<ActionInbox>,
    /// The session's last frames both ways (`diagnostics.rs`).
    pub frames: Arc<FrameRing>,
}

impl SessionEntry {
    /// Whether a new connection of the same charger may take this session's place: a charger
    /// that reconnects replaces its half-open old connection, but a connection that gave no
    /// credentials never ends one that did (the registration may have changed between the
    /// two, and the live session is then the one known to be the charger).
    fn may_be_replaced_by(&self, authenticated: bool) -> bool {
        authenticated || !self.authenticated
    }
}

/// Serves one accepted connection to its end, holding its place under the connection cap
/// (`_permit`) until then. `client` is `Some` for a wss connection: the subject of
/// its verified client certificate (empty without one).
pub async fn serve(
    shared: Arc<Shared>,
    stream: ChargerStream,
    peer: SocketAddr,
    _permit: OwnedSemaphorePermit,
    client: Option<ClientSubject>,
) {
    // Boxed, and gone once the socket is a websocket: the opening's state (the upgrade's
    // header array, tungstenite's set-up, the TLS names) would otherwise be part of every
    // connection's task for its whole life.
    // Attempts are ordered by when they came, not by when their handshake ended: a refused
    // one is filed after its 401 went, when the charger may already be trying again.
    let arrived = chrono::Utc::now();
    let Some((mut ws, identity, authenticated, version)) =
        Box::pin(open(&shared, stream, peer, client, arrived)).await
    else {
        return;
    };
    let session = Bytes::from(uuid::Uuid::new_v4().to_string());
    // No span for the session's life: one costs about 500 bytes a connection, a tenth of its
    // idle memory. Each event names the charger instead (docs/operations.md, "Logs").
    let (end, ended) = oneshot::channel();
    let inbox = Arc::new(ActionInbox::default());
    let frames = shared.diagnostics.ring();
    let entry = SessionEntry {
        session: session.clone(),
        end,
        authenticated,
        inbox: inbox.clone(),
        frames: frames.clone(),
    };
    match shared.sessions.entry(identity.clone()) {
        Entry::Occupied(live) if !live.get().may_be_replaced_by(authenticated) => {
            drop(live);
            tracing::warn!(%identity, %peer, "refused: an unauthenticated connection may not replace an authenticated session");
            handshake_rejected("unauthenticated_takeover");
            shared
                .attempted(&identity, peer, Some(RefusedBecause::Takeover), arrived)
                .await;
            let reason = "an authenticated session of this charger is live";
            close(&mut ws, CloseCode::Policy, reason).await;
            return;
        }
        Entry::Occupied(mut live) => {
            tracing::info!(%identity, session = %String::from_utf8_lossy(&live.get().session),
                "replacing the previous connection of this charger");
            // Remembered before it is replaced: an action for it is always found in one or
            // the other. Under the map's lock, so not swept here.
            let replaced = live.get().session.clone();
            shared.ended.remember(replaced, Instant::now());
            let previous = live.insert(entry);
            let _ = previous.end.send(Ending::Replaced);
        }
        Entry::Vacant(vacant) => {
            vacant.insert(entry);
        }
    }
    shared.attempted(&identity, peer, None, arrived).await;
    shared.metrics.connects.increment(1);
    shared.metrics.open.increment(1.0);
    tracing::info!(%identity, %peer, session = %String::from_utf8_lossy(&session),
        subprotocol = version.subprotocol(), "charger connected");
    let mut live = LiveSession {
        shared: &shared,
        identity_key: Bytes::copy_from_slice(identity.as_str().as_bytes()),
        identity: identity.as_str(),
        session: &session,
        version,
        last_seen: Instant::now(),
        ping_sent: None,
        closed_by_charger: false,
        action_calls: ActionCalls::new(inbox, version),
        try_send: false,
        read_configuration_at: None,
        relay: None,
        replay: None,
        frames,
    };
    live.follow_proxy_setup(false);
    live.publish_event(ConnectionEvent::Connected {
        remote_addr: peer.to_string(),
        version,
    })
    .await;
    let reason = live.run(&mut ws, ended).await;
    // Remembered before it is gone from the live sessions: an action for it is always
    // found in one or the other.
    shared.ended.insert(session.clone());
    shared
        .sessions
        .remove_if(&identity, |_, entry| entry.session == session);
    live.relay = None;
    shared
        .diagnostics
        .ended(identity.as_str(), live.frames.clone());
    // Boxed: once per session, and inline its room would be held all the session long.
    Box::pin(live.action_calls.end(&shared)).await;
    live.publish_event(ConnectionEvent::Disconnected { reason })
        .await;
    shared.metrics.open.decrement(1.0);
    shared.metrics.disconnected(reason);
    tracing::info!(%identity, session = %String::from_utf8_lossy(&session),
        reason = reason.as_str(), "charger disconnected");
}

/// The upgrade to a websocket of an accepted connection: the charger's identity, whether it
/// authenticated and the OCPP version agreed, or `None` when the connection was refused (and
/// closed).
async fn open(
    shared: &Shared,
    mut stream: ChargerStream,
    peer: SocketAddr,
    client: Option<ClientSubject>,
    arrived: chrono::DateTime<chrono::Utc>,
) -> Option<(Ws, ChargerIdentity, bool, OcppVersion)> {
    let transport = match &client {
        Some(client) => Transport::Tls { client },
        None => Transport::Plain,
    };
    let terms = handshake::Terms {
        preferred: shared.config.ocpp_preferred_version,
        organization: shared.client_organization.as_deref(),
    };
    // Boxed apart: the handshake's state (~2.4 KB, its header array above all) is larger
    // than the rest of the opening.
    let mut diagnosis = None;
    let handshake = tokio::time::timeout(
        shared.config.handshake_timeout,
        Box::pin(handshake::accept(
            &mut stream,
            &*shared.directory,
            transport,
            peer.ip(),
            shared.proxies.as_ref(),
            terms,
            &mut diagnosis,
        )),
    )
    .await;
    let accepted = match handshake {
        Ok(Ok(accepted)) => accepted,
        Ok(Err(rejection)) => {
            handshake_rejected(rejection.label());
            if let Some((identity, because)) = diagnosis {
                Box::pin(shared.attempted(&identity, peer, Some(because), arrived)).await;
            }
            return None;
        }
        Err(_) => {
            handshake_rejected("timeout");
            return None;
        }
    };
    let mut ws = crate::stream::websocket(stream, accepted.leftover, shared.ws_config).await;
    let Some(version) = accepted.version else {
        handshake_rejected("no_subprotocol");
        let because = Some(RefusedBecause::NoSubprotocol);
        Box::pin(shared.attempted(&accepted.identity, peer, because, arrived)).await;
        tracing::info!(identity = %accepted.identity, %peer, "closing: no supported subprotocol offered");
        close(
            &mut ws,
            CloseCode::Protocol,
            "no supported subprotocol; this server speaks ocpp2.0.1 and ocpp1.6",
        )
        .await;
        return None;
    };
    Some((ws, accepted.identity, accepted.authenticated, version))
}

struct LiveSession<'a> {
    shared: &'a Shared,
    identity: &'a str,
    identity_key: Bytes,
    session: &'a Bytes,
    /// The OCPP version agreed in the handshake.
    version: OcppVersion,
    /// Any frame or pong counts as a sign of life.
    last_seen: Instant,
    /// When the ping not yet answered by a pong was sent, for `cms_gateway_ws_ping_rtt_seconds`.
    ping_sent: Option<Instant>,
    closed_by_charger: bool,
    action_calls: ActionCalls,
    /// A call ended: send the next one waiting, if any, before reading on.
    try_send: bool,
    /// When the configuration read after a boot is due, while it waits for its turn
    /// (`Shared::boot_configuration`).
    read_configuration_at: Option<Instant>,
    /// The charger's upstreams, when it is relayed to proxy servers (boxed: most chargers are
    /// not, and every connection holds this field all its life).
    relay: Option<Box<Relay>>,
    /// What an upstream is told first, kept across changes of the set-up once relayed.
    replay: Option<Arc<std::sync::Mutex<Replay>>>,
    /// The last frames both ways, kept for `GET .../messages` (`diagnostics.rs`).
    frames: Arc<FrameRing>,
}

impl LiveSession<'_> {
    /// Relays the charger as its registration now says: starts, changes or stops its upstreams
    /// without touching the charger's connection.
    /// `mid_session`: frames have come already, the charger's boot among them, so a new
    /// upstream starts with the replay.
    fn follow_proxy_setup(&mut self, mid_session: bool) {
        let setup = self.shared.directory.proxy(self.identity);
        if self.relay.as_ref().map(|r| r.setup()) == setup.as_ref() {
            return;
        }
        if setup.is_some() || self.relay.is_some() {
            tracing::info!(
                identity = self.identity,
                upstreams = setup.as_ref().map_or(0, |s| s.upstreams.len()),
                "proxy set-up changed"
            );
        }
        let session = String::from_utf8_lossy(self.session);
        let inbox = &self.action_calls.inbox;
        let replay = self.replay.get_or_insert_with(Default::default).clone();
        self.relay = setup.map(|setup| {
            let context = &self.shared.relay;
            Box::new(Relay::start(
                context,
                self.identity,
                self.version,
                &session,
                setup,
                inbox,
                replay,
                mid_session,
            ))
        });
    }

    async fn run(&mut self, ws: &mut Ws, mut ended: oneshot::Receiver<Ending>) -> DisconnectReason {
        let config = &self.shared.config;
        let mut next_ping = Instant::now() + config.ping_interval;
        // Wakes for the next ping, the idle deadline or the time-out of the call in flight,
        // whichever comes first; frames that arrive meanwhile move the idle deadline, which is
        // checked again when the timer fires.
        let timer = tokio::time::sleep_until(self.wake_at(next_ping).into());
        tokio::pin!(timer);
        // The shutdown's and the inbox's waits are kept from frame to frame, not made anew for
        // each: a wait, once polled, is put in its Notify's list under a lock and taken out when
        // dropped, and the shutdown's list is every session's, on both shards.
        let shutdown = self.shared.shutdown.cancelled();
        tokio::pin!(shutdown);
        let inbox = self.action_calls.inbox.clone();
        let ready = inbox.ready.notified();
        tokio::pin!(ready);
        loop {
            // The rare paths (a command to send, a call timed out) are boxed: a future holds
            // room for its largest state all its life, and inline, theirs would be every idle
            // connection's.
            if std::mem::take(&mut self.try_send) {
                // The timer is set again: a call sent waits for its answer, and a
                // configuration read may have been given a later turn.
                match Box::pin(self.send_next_call(ws)).await {
                    Ok(_) => timer.as_mut().reset(self.wake_at(next_ping).into()),
                    Err(reason) => return reason,
                }
            }
            let next = tokio::select! {
                biased;
                _ = &mut shutdown => {
                    close(ws, CloseCode::Away, "server shutting down").await;
                    return DisconnectReason::Shutdown;
                }
                ending = &mut ended => {
                    // 1001 as at shutdown: this gateway goes away, the charger should connect
                    // again at once (to another one). 1012 would ask it to wait 5-30 s more.
                    if matches!(ending, Ok(Ending::Drained)) {
                        close(ws, CloseCode::Away, "server shutting down").await;
                        return DisconnectReason::Shutdown;
                    }
                    close(ws, CloseCode::Normal, "replaced by a newer connection").await;
                    return DisconnectReason::Replaced;
                }
                _ = &mut ready, if !self.action_calls.busy() => {
                    ready.set(inbox.ready.notified());
                    if self.action_calls.inbox.take_registration_change() {
                        self.follow_proxy_setup(true);
                    }
                    self.try_send = true;
                    continue;
                }
                _ = &mut timer => {
                    // A registration change told while a call was in flight (its wake-up
                    // waits for the call's end or this timer, whichever comes first).
                    if self.action_calls.inbox.take_registration_change() {
                        self.follow_proxy_setup(true);
                    }
                    let now = Instant::now();
                    if self.read_configuration_at.is_some_and(|at| now >= at) {
                        self.read_configuration_at = None;
                        self.queue_configuration_read();
                        self.try_send = true;
                    }
                    if self.action_calls.answer_by().is_some_and(|at| now >= at) {
                        Box::pin(self.action_calls.on_timer(self.shared, now)).await;
                        self.try_send = true;
                    }
                    if now >= self.idle_deadline() {
                        close(ws, CloseCode::Normal, "idle timeout").await;
                        return DisconnectReason::IdleTimeout;
                    }
                    if now >= next_ping {
                        if ws.send(Message::Ping(Bytes::new())).await.is_err() {
                            return DisconnectReason::ConnectionLost;
                        }
                        // A ping left unanswered is forgotten: the next pong answers this one.
                        self.ping_sent = Some(now);
                        next_ping = now + config.ping_interval;
                    }
                    timer.as_mut().reset(self.wake_at(next_ping).into());
                    continue;
                }
                next = ws.next() => next,
            };
            // Inline, not boxed: a box would be an allocation per frame, and inline the
            // frame's state (~700 bytes) adds 0.3-0.5 KiB to an idle connection, most of it
            // room the other waits above take already (docs/decisions.md, "A frame is handled
            // without an allocation").
            if let Some(reason) = self.receive(ws, next).await {
                return reason;
            }
        }
    }

    fn idle_deadline(&self) -> Instant {
        self.last_seen + self.shared.config.idle_timeout
    }

    fn wake_at(&self, next_ping: Instant) -> Instant {
        let wake = next_ping.min(self.idle_deadline());
        let wake = self.read_configuration_at.map_or(wake, |at| wake.min(at));
        self.action_calls
            .answer_by()
            .map_or(wake, |at| wake.min(at))
    }

    /// Whether a boot of this charger is followed by the configuration read: unless turned
    /// off, or its configuration proved larger than the frame limit (a skip is counted).
    fn reads_configuration_at_boot(&self) -> bool {
        let shared = self.shared;
        shared
            .boot_configuration
            .wanted(self.identity, &shared.metrics.configuration_reads_skipped)
    }

    /// A frame over the limit is about to close the session. When it answered the
    /// configuration read after a boot, the read ends `failed` and the charger is remembered
    /// before the close, so its next boot is not asked again: otherwise each boot would end in
    /// the same 1009, a disconnect loop for as long as both run.
    async fn on_frame_too_large(&mut self) {
        let shared = self.shared;
        if !Box::pin(self.action_calls.end_oversized_configuration_read(shared)).await {
            return;
        }
        if shared.boot_configuration.oversized(self.identity) {
            tracing::warn!(
                identity = self.identity,
                max_frame_size = shared.config.max_frame_size,
                "the charger's configuration is larger than the frame limit: it is not read \
                 after its boots again until the gateway restarts; start the gateway with a \
                 larger --max-frame-size to read it"
            );
        }
    }

    /// Queues the GetConfiguration a gateway makes after a boot; its deadline runs from now.
    fn queue_configuration_read(&mut self) {
        let config = &self.shared.config;
        let command = read_configuration(config, self.identity, self.session, self.version);
        if self.action_calls.inbox.push(command).is_err() {
            tracing::warn!(
                identity = self.identity,
                "the configuration read after boot could not be queued"
            );
        }
    }

    /// Writes the next waiting call, if there is one and none is in flight; `Ok(true)` when one
    /// was sent.
    async fn send_next_call(&mut self, ws: &mut Ws) -> Result<bool, DisconnectReason> {
        let Some(frame) = self.action_calls.next_call(self.shared).await else {
            return Ok(false);
        };
        self.frames.push(frame.as_bytes(), false, Instant::now());
        ws.send(Message::text(frame))
            .await
            .map_err(|_| DisconnectReason::ConnectionLost)?;
        self.action_calls.report_sent(self.shared).await;
        Ok(true)
    }

    /// Handles a received item and whatever else is already buffered, then flushes the answers
    /// in one write. `Some(reason)` when the session is over.
    async fn receive(
        &mut self,
        ws: &mut Ws,
        mut next: Option<Result<Message, WsError>>,
    ) -> Option<DisconnectReason> {
        for _ in 0..BATCH {
            match next {
                None if self.closed_by_charger => return Some(DisconnectReason::ClosedByCharger),
                None => return Some(DisconnectReason::ConnectionLost),
                Some(Err(e)) => return Some(self.failed(ws, e).await),
                Some(Ok(message)) => {
                    self.last_seen = Instant::now();
                    if let Err(reason) = self.on_message(ws, message).await {
                        return Some(reason);
                    }
                }
            }
            match ws.next().now_or_never() {
                Some(more) => next = more,
                None => break,
            }
        }
        match ws.flush().await {
            Ok(()) => None,
            Err(_) if self.closed_by_charger => Some(DisconnectReason::ClosedByCharger),
            Err(_) => Some(DisconnectReason::ConnectionLost),
        }
    }

    async fn on_message(&mut self, ws: &mut Ws, message: Message) -> Result<(), DisconnectReason> {
        let reply = match message {
            Message::Text(text) => {
                // `last_seen` is when it was read: no clock read of its own.
                self.frames.push(text.as_bytes(), true, self.last_seen);
                // The record's copy of the frame, cut from the shard's chunk: the read buffer
                // is then free again before the next read, which tungstenite makes into it in
                // place. Held by the record, it would have the next frame read into a new
                // buffer, two allocations a frame freed on the bus consumer's thread.
                let frame =
                    crate::chunks::bytes(text.len(), |out| out.extend_from_slice(text.as_bytes()));
                self.on_text(ws, text.as_str(), &frame).await?
            }
            Message::Binary(_) => {
                self.shared.metrics.frame_in(FrameKind::Invalid);
                self.shared.metrics.error_out(ErrorCode::FormationViolation);
                let why = "OCPP-J frames are text frames, not binary";
                Some(
                    self.call_error("-1", ErrorCode::FormationViolation, why)
                        .into(),
                )
            }
            Message::Close(_) => {
                // tungstenite answers the close; the stream ends after it.
                self.closed_by_charger = true;
                None
            }
            Message::Pong(_) => {
                // `last_seen` is when it was read: no clock read of its own.
                if let Some(sent) = self.ping_sent.take() {
                    let rtt = self.last_seen.saturating_duration_since(sent);
                    self.shared.metrics.ping_rtt.record(rtt);
                }
                None
            }
            Message::Ping(_) | Message::Frame(_) => None,
        };
        if let Some(reply) = reply {
            self.frames.push(reply.as_bytes(), false, self.last_seen);
            ws.feed(Message::text(reply))
                .await
                .map_err(|_| DisconnectReason::ConnectionLost)?;
        }
        Ok(())
    }

    /// Handles one text frame and returns the answer still to send. A record that carries data
    /// is answered only once the bus acknowledged it (unless `--ack-after receive`); others are
    /// answered while the bus takes them, and both are done before the next frame is read, so
    /// per-charger order and backpressure hold either way.
    async fn on_text(
        &mut self,
        ws: &mut Ws,
        text: &str,
        frame: &Bytes,
    ) -> Result<Option<Utf8Bytes>, DisconnectReason> {
        let shared = self.shared;
        let Published {
            action,
            delivery,
            answer,
            started,
        } = match self.take_text(text, frame) {
            Taken::Reply(reply) => return Ok(reply),
            Taken::Answer(answer) => {
                // Boxed: rare beside the frames, and its state would grow every frame's.
                Box::pin(self.action_calls.on_answer(shared, self.identity, answer)).await;
                self.try_send = true;
                return Ok(None);
            }
            Taken::Published(published) => published,
            // Boxed: the wait's state stays out of every frame's future (most chargers have no
            // leader).
            Taken::Relayed(relayed) => Box::pin(self.relayed(text, *relayed)).await,
            // Boxed likewise: few tokens are asked about in real time.
            Taken::Asking(asking) => Box::pin(self.asked(*asking)).await,
        };
        let durable = action.carries_data() && shared.config.ack_after == AckAfter::Broker;
        // The answer still to send once the bus took the record: none when it went already.
        let (published, answer, connection_lost) = if durable {
            (delivery.await, Some(answer), false)
        } else {
            shared.metrics.result_out(action);
            // The answer is written while the publish is driven: one that waits for room in
            // the bus is never left unpolled behind a slow socket, nor given up half done
            // when the socket fails.
            self.frames.push(answer.as_bytes(), false, self.last_seen);
            let (sent, published) = tokio::join!(ws.send(Message::text(answer)), delivery);
            if sent.is_ok() {
                // `last_seen` is when this frame was read: no clock read of its own.
                shared.metrics.answered(action, self.last_seen);
            }
            (published, None, sent.is_err())
        };
        let boot = matches!(
            action,
            ChargerAction::V16(Action::BootNotification)
                | ChargerAction::V201(cms_ocpp::v201::Action::BootNotification)
        );
        if boot && published.is_ok() && !connection_lost && self.reads_configuration_at_boot() {
            // Queued behind the boot's answer: a (re)booted charger's configuration is read
            // once it knows it was accepted, or, while a fleet boots faster than reads are
            // made, at its turn (the session's timer wakes for it). A boot while the read
            // waits adds none: the waiting one reads what the charger has after both.
            if self.read_configuration_at.is_none() {
                let now = Instant::now();
                let at = shared.boot_configuration.turn(now);
                if at <= now {
                    self.queue_configuration_read();
                } else {
                    self.read_configuration_at = Some(at);
                    self.try_send = true;
                }
            }
        }
        match (&published, durable) {
            (Ok(_), _) => shared.metrics.publish_latency.record(started.elapsed()),
            (Err(e), false) => {
                // Already answered: the record is lost, and that is the trade-off chosen.
                tracing::error!(identity = self.identity, error = %e, action = action.as_str(), "publish failed after answering");
                shared.metrics.publish_failures.increment(1);
            }
            (Err(_), true) => {}
        }
        if connection_lost {
            return Err(DisconnectReason::ConnectionLost);
        }
        let Some(answer) = answer else {
            return Ok(None);
        };
        Ok(Some(match published {
            Ok(_) => {
                shared.metrics.result_out(action);
                shared.metrics.answered(action, self.last_seen);
                answer
            }
            Err(e) => {
                // Not taken, so not acknowledged: the charger keeps the message and retries.
                tracing::warn!(identity = self.identity, error = %e, action = action.as_str(), "publish failed");
                shared.metrics.publish_failures.increment(1);
                shared.metrics.error_out(ErrorCode::InternalError);
                let id = message_id_of(text);
                let why = "message not stored, retry later";
                self.call_error(&id, ErrorCode::InternalError, why).into()
            }
        }))
    }

    async fn failed(&mut self, ws: &mut Ws, error: WsError) -> DisconnectReason {
        match error {
            WsError::Capacity(e) => {
                tracing::info!(identity = self.identity, error = %e, "closing: frame over the size limit");
                self.on_frame_too_large().await;
                let limit = self.shared.config.max_frame_size;
                close(
                    ws,
                    CloseCode::Size,
                    &format!("frame larger than {limit} bytes"),
                )
                .await;
                DisconnectReason::FrameTooLarge
            }
            WsError::Protocol(e) => {
                tracing::info!(identity = self.identity, error = %e, "closing: websocket protocol error");
                close(ws, CloseCode::Protocol, "websocket protocol error").await;
                DisconnectReason::ProtocolError
            }
            WsError::ConnectionClosed | WsError::AlreadyClosed if self.closed_by_charger => {
                DisconnectReason::ClosedByCharger
            }
            _ => DisconnectReason::ConnectionLost,
        }
    }

    /// A CALLERROR frame with the code spelled as the session's version spells it.
    fn call_error(&self, message_id: &str, code: ErrorCode, description: &str) -> String {
        match self.version {
            OcppVersion::V16 => call_error(message_id, code, description),
            OcppVersion::V201 => call_error_v201(message_id, code, description),
        }
    }

    async fn publish_event(&self, event: ConnectionEvent) {
        let record = connection_record(
            &self.shared.relay.events,
            &self.identity_key,
            self.session,
            event,
            Utc::now(),
        );
        if let Err(e) = self.shared.bus.publish(record).await {
            tracing::warn!(identity = self.identity, error = %e, "connection event not published");
            self.shared.metrics.publish_failures.increment(1);
        }
    }
}

/// The message id of a frame that parsed before, for the CALLERROR of a failed publish.
fn message_id_of(text: &str) -> String {
    match cms_ocpp::parse_frame(text) {
        Ok(cms_ocpp::Frame::Call { message_id, .. }) => message_id.into_owned(),
        _ => "-1".to_string(),
    }
}

/// Sends a close frame and waits briefly for the charger's answer, so the close handshake
/// completes and the charger learns why.
async fn close(ws: &mut Ws, code: CloseCode, reason: &str) {
    let frame = CloseFrame {
        code,
        reason: reason.into(),
    };
    if ws.close(Some(frame)).await.is_err() {
        return;
    }
    let drain = async { while let Some(Ok(_)) = ws.next().await {} };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), drain).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(authenticated: bool) -> SessionEntry {
        SessionEntry {
            session: Bytes::from_static(b"s"),
            end: oneshot::channel().0,
            authenticated,
            inbox: Default::default(),
            frames: Arc::new(FrameRing::new(0, 0)),
        }
    }

    #[test]
    fn an_unauthenticated_connection_never_replaces_an_authenticated_session() {
        assert!(!entry(true).may_be_replaced_by(false));
        assert!(entry(true).may_be_replaced_by(true));
        assert!(entry(false).may_be_replaced_by(false));
        assert!(entry(false).may_be_replaced_by(true));
    }
}
