//! The wss listener (OCPP security profiles 2 and 3). TLS handshakes run on a runtime of their
//! own, so that a reconnect storm's key exchanges take turns with the shards under the kernel's
//! scheduler instead of stalling a shard's event loop, where established chargers are served;
//! each finished handshake is handed to a shard (round robin), which runs the session.
//!
//! Strangers cannot crowd chargers out with sockets they open and leave idle: a connection
//! has `hello_timeout` to send its whole ClientHello, and until then it takes no handshake
//! turn (it holds a socket, under the connection cap, and a place under its source address's
//! limit); the turns, at most `MAX_HANDSHAKES`, are for the key exchanges.

mod sources;

use crate::Shared;
use crate::admission::ClientSubject;
use crate::metrics::handshake_rejected;
use crate::stream::HandedTcp;
use cms_tls::{ServerTls, TlsError};
use sources::{SourceTurn, Sources};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::time::{Instant, timeout_at};
use tokio_rustls::LazyConfigAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_util::task::TaskTracker;

/// Handshakes past their ClientHello under way at once; past it a newcomer is closed as its
/// ClientHello comes. Bounds the memory and the work a storm can hold in half-made sessions.
const MAX_HANDSHAKES: usize = 1_024;

/// The wss side of a gateway.
#[derive(Clone)]
pub struct GatewayTls {
    pub addr: SocketAddr,
    pub server: ServerTls,
    /// Threads of the handshake runtime.
    pub handshake_threads: usize,
    /// Handshakes under way at once from one IPv4 address or IPv6 /64; 0 for no limit.
    pub handshakes_per_address: usize,
    /// How long after the accept the client's ClientHello may take to arrive whole.
    pub hello_timeout: Duration,
}

/// Load balancers that terminate TLS in front of the gateway (opt-in): their connections count
/// as TLS, and the client certificate they forward in `header` is believed once it verifies
/// against the client CA. A header from any other peer is ignored.
#[derive(Debug, Clone)]
pub struct TrustedProxies {
    pub addresses: Vec<std::net::IpAddr>,
    /// The header's name, e.g. `x-forwarded-client-cert` (matched case-insensitively).
    pub header: String,
    pub certificates: cms_tls::ForwardedCertificates,
}

impl TrustedProxies {
    pub fn trusts(&self, peer: std::net::IpAddr) -> bool {
        self.addresses.contains(&peer)
    }
}

/// A connection whose TLS handshake is done, on its way to a shard.
pub struct Handover {
    pub stream: TlsStream<HandedTcp>,
    pub peer: SocketAddr,
    /// Its place under the connection cap, taken at accept.
    pub permit: OwnedSemaphorePermit,
    /// The subject of its verified client certificate; empty without one.
    pub client: ClientSubject,
}

/// Starts the handshake runtime on its own thread, accepting on `listener` until shutdown.
pub fn spawn(
    listener: std::net::TcpListener,
    tls: GatewayTls,
    shared: Arc<Shared>,
    shards: Vec<mpsc::Sender<Handover>>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(tls.handshake_threads.max(1))
        .thread_name("ocpp-tls")
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name("ocpp-tls-accept".into())
        .spawn(move || runtime.block_on(accept_loop(listener, tls, shared, shards)))
}

/// What every handshake of the listener shares.
struct Handshakes {
    tls: ServerTls,
    hello_timeout: Duration,
    /// Turns for the key exchanges, `MAX_HANDSHAKES` of them.
    turns: Arc<Semaphore>,
}

async fn accept_loop(
    listener: std::net::TcpListener,
    tls: GatewayTls,
    shared: Arc<Shared>,
    shards: Vec<mpsc::Sender<Handover>>,
) {
    let listener = match TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(e) => return tracing::error!(error = %e, "cannot listen for wss"),
    };
    let shards = Arc::new(shards);
    let next = Arc::new(AtomicUsize::new(0));
    let sources = Sources::new(tls.handshakes_per_address);
    let handshakes = Arc::new(Handshakes {
        tls: tls.server,
        hello_timeout: tls.hello_timeout,
        turns: Arc::new(Semaphore::new(MAX_HANDSHAKES)),
    });
    let tasks = TaskTracker::new();
    loop {
        let (tcp, peer) = tokio::select! {
            _ = shared.stop_accepting.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "wss accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let _ = tcp.set_nodelay(true);
        // Before TLS there is no HTTP to answer 503 with: past a cap, the socket is closed.
        let Some(permit) = shared.capacity.admit() else {
            handshake_rejected("at_capacity");
            continue;
        };
        let Some(source_turn) = sources.take(peer.ip()) else {
            handshake_rejected("tls_per_address");
            continue;
        };
        let (handshakes, shared, shards, next) = (
            handshakes.clone(),
            shared.clone(),
            shards.clone(),
            next.clone(),
        );
        tasks.spawn(async move {
            let done = handshake(&handshakes, &shared, tcp, peer, source_turn).await;
            let Some((stream, client)) = done else {
                return;
            };
            let shard = &shards[next.fetch_add(1, Ordering::Relaxed) % shards.len()];
            let handover = Handover {
                stream,
                peer,
                permit,
                client,
            };
            // A shard that is gone is shutting down: the connection closes with it.
            let _ = shard.send(handover).await;
        });
    }
    drop(listener);
    tasks.close();
    tasks.wait().await;
}

/// The TLS handshake, bounded in time; the verified client certificate's names with it. The
/// source's turn is given back when it ends, either way.
async fn handshake(
    handshakes: &Handshakes,
    shared: &Shared,
    tcp: tokio::net::TcpStream,
    peer: SocketAddr,
    _source_turn: SourceTurn,
) -> Option<(TlsStream<HandedTcp>, ClientSubject)> {
    let deadline = Instant::now() + shared.config.handshake_timeout;
    let hello_deadline = deadline.min(Instant::now() + handshakes.hello_timeout);
    let hello = LazyConfigAcceptor::new(rustls::server::Acceptor::default(), HandedTcp::new(tcp));
    let start = match timeout_at(hello_deadline, hello).await {
        Ok(Ok(start)) => start,
        Ok(Err(e)) => {
            tracing::debug!(%peer, error = %e, "no TLS ClientHello");
            handshake_rejected("tls_handshake_failed");
            return None;
        }
        Err(_) => {
            handshake_rejected("tls_slow_start");
            return None;
        }
    };
    // Only now a turn: the key exchange is the work and memory the turns bound.
    let Ok(_turn) = handshakes.turns.clone().try_acquire_owned() else {
        handshake_rejected("tls_busy");
        return None;
    };
    let tls = &handshakes.tls;
    let stream = match timeout_at(deadline, start.into_stream(tls.config())).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            let reason = match e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) {
                Some(e @ rustls::Error::InvalidCertificate(_)) => certificate_refusal(e),
                _ => "tls_handshake_failed",
            };
            tracing::info!(%peer, reason, error = %e, "TLS handshake refused");
            handshake_rejected(reason);
            return None;
        }
        Err(_) => {
            handshake_rejected("timeout");
            return None;
        }
    };
    // A resumed session's certificate is verified again here, against the CA and CRLs of now.
    match tls.client_certificate_of(&stream) {
        Ok(certificate) => {
            let subject = certificate.as_ref().map(ClientSubject::from);
            Some((stream, subject.unwrap_or_default()))
        }
        Err(e) => {
            let reason = match &e {
                TlsError::ClientCertificateRefused(e) => certificate_refusal(e),
                _ => "client_certificate_invalid",
            };
            tracing::info!(%peer, reason, error = %e, "client certificate refused");
            handshake_rejected(reason);
            None
        }
    }
}

/// The rejection reason of a client certificate that did not verify: revoked by a CRL of
/// `--tls-client-crl`, or invalid otherwise (another CA, expired).
fn certificate_refusal(error: &rustls::Error) -> &'static str {
    match error {
        rustls::Error::InvalidCertificate(rustls::CertificateError::Revoked) => {
            "client_certificate_revoked"
        }
        _ => "client_certificate_invalid",
    }
}
