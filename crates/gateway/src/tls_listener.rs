//! The wss listener (OCPP security profiles 2 and 3). TLS handshakes run on a runtime of their
//! own, so that a reconnect storm's key exchanges take turns with the shards under the kernel's
//! scheduler instead of stalling a shard's event loop, where established chargers are served;
//! each finished handshake is handed to a shard (round robin), which runs the session.

use crate::Shared;
use crate::metrics::handshake_rejected;
use crate::stream::HandedTcp;
use cms_tls::{ClientCertificate, ServerTls};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_rustls::server::TlsStream;
use tokio_util::task::TaskTracker;

/// Handshakes under way at once; past it a newcomer is closed at once. Bounds the memory a
/// storm can hold in half-made TLS sessions.
const MAX_HANDSHAKES: usize = 1_024;

/// The wss side of a gateway.
#[derive(Clone)]
pub struct GatewayTls {
    pub addr: SocketAddr,
    pub server: ServerTls,
    /// Threads of the handshake runtime.
    pub handshake_threads: usize,
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
    /// The subject CNs of its verified client certificate; empty without one.
    pub client_names: Vec<String>,
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
        .spawn(move || runtime.block_on(accept_loop(listener, tls.server, shared, shards)))
}

async fn accept_loop(
    listener: std::net::TcpListener,
    tls: ServerTls,
    shared: Arc<Shared>,
    shards: Vec<mpsc::Sender<Handover>>,
) {
    let listener = match TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(e) => return tracing::error!(error = %e, "cannot listen for wss"),
    };
    let shards = Arc::new(shards);
    let next = Arc::new(AtomicUsize::new(0));
    let handshaking = Arc::new(Semaphore::new(MAX_HANDSHAKES));
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
        let Ok(turn) = handshaking.clone().try_acquire_owned() else {
            handshake_rejected("tls_busy");
            continue;
        };
        let (tls, shared, shards, next) =
            (tls.clone(), shared.clone(), shards.clone(), next.clone());
        tasks.spawn(async move {
            let done = handshake(&tls, &shared, tcp, peer).await;
            drop(turn);
            let Some((stream, client_names)) = done else {
                return;
            };
            let shard = &shards[next.fetch_add(1, Ordering::Relaxed) % shards.len()];
            let handover = Handover {
                stream,
                peer,
                permit,
                client_names,
            };
            // A shard that is gone is shutting down: the connection closes with it.
            let _ = shard.send(handover).await;
        });
    }
    drop(listener);
    tasks.close();
    tasks.wait().await;
}

/// The TLS handshake, bounded in time; the verified client certificate's names with it.
async fn handshake(
    tls: &ServerTls,
    shared: &Shared,
    tcp: tokio::net::TcpStream,
    peer: SocketAddr,
) -> Option<(TlsStream<HandedTcp>, Vec<String>)> {
    let accepting = tls.acceptor().accept(HandedTcp::new(tcp));
    let stream = match tokio::time::timeout(shared.config.handshake_timeout, accepting).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            let reason = match e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) {
                Some(rustls::Error::InvalidCertificate(_)) => "client_certificate_invalid",
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
    match ClientCertificate::of_stream(&stream) {
        Ok(certificate) => {
            let names = certificate.map(|c| c.common_names().to_vec());
            Some((stream, names.unwrap_or_default()))
        }
        Err(e) => {
            tracing::info!(%peer, error = %e, "client certificate unreadable");
            handshake_rejected("client_certificate_invalid");
            None
        }
    }
}
