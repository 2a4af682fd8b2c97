//! Shards: one thread and one single-threaded runtime each, each accepting on its own socket
//! bound to the same address with SO_REUSEPORT, so the kernel spreads connections over them
//! (and over other gateway processes on the same port). A shard also takes the wss connections
//! the TLS runtime hands it once their handshake is done (`tls_listener.rs`).

use crate::Shared;
use crate::diagnostics::RefusedBecause;
use crate::identity::ChargerIdentity;
use crate::session::serve;
use crate::stream::ChargerStream;
use crate::tls_listener::Handover;
use socket2::{Domain, Socket, Type};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

/// Binds `count` listening sockets to `addr` (all to the same port when `addr` has port 0).
pub fn bind(addr: SocketAddr, count: usize) -> std::io::Result<Vec<std::net::TcpListener>> {
    let mut listeners = Vec::with_capacity(count);
    let mut addr = addr;
    for _ in 0..count {
        let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
        socket.set_reuse_address(true)?;
        socket.set_reuse_port(true)?;
        socket.set_nonblocking(true)?;
        socket.bind(&addr.into())?;
        socket.listen(4096)?;
        let listener: std::net::TcpListener = socket.into();
        addr = listener.local_addr()?;
        listeners.push(listener);
    }
    Ok(listeners)
}

/// The wss connections handed to one shard, waiting for it to start their sessions.
pub const HANDOVER_QUEUE: usize = 1_024;

pub fn spawn(
    index: usize,
    listener: Option<std::net::TcpListener>,
    handovers: mpsc::Receiver<Handover>,
    shared: Arc<Shared>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    // Its blocking threads (a proxy server's name looked up) are named after it: they serve
    // the shard's sessions, and `cms up` keeps the sessions' threads at the higher priority.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .thread_name(format!("ocpp-shard-{index}-io"))
        .build()?;
    let on_start = shared.config.on_shard_start;
    std::thread::Builder::new()
        .name(format!("ocpp-shard-{index}"))
        .spawn(move || {
            on_start();
            runtime.block_on(accept_loop(index, listener, handovers, shared))
        })
}

/// Accepts until the gateway stops accepting (`Gateway::drain`), then waits for its sessions.
/// Each connection holds a permit of the process-wide cap (`capacity.rs`) from its accept to
/// its end; past the cap it is refused with 503. A shard without a plain listener
/// (`--ocpp-addr off`) serves only what the TLS runtime hands it.
async fn accept_loop(
    index: usize,
    listener: Option<std::net::TcpListener>,
    mut handovers: mpsc::Receiver<Handover>,
    shared: Arc<Shared>,
) {
    let listener = match listener.map(TcpListener::from_std).transpose() {
        Ok(listener) => listener,
        Err(e) => return tracing::error!(shard = index, error = %e, "shard cannot listen"),
    };
    let sessions = TaskTracker::new();
    loop {
        tokio::select! {
            _ = shared.stop_accepting.cancelled() => break,
            Some(handover) = handovers.recv() => {
                let Handover { mut stream, peer, permit, client } = handover;
                if let Err(e) = stream.get_mut().0.rebind() {
                    tracing::warn!(shard = index, error = %e, "a wss connection could not move to its shard");
                    continue;
                }
                let stream = ChargerStream::Tls(Box::new(stream));
                sessions.spawn(serve(shared.clone(), stream, peer, permit, Some(client)));
            }
            accepted = accept(listener.as_ref()) => match accepted {
                Ok((stream, peer)) => {
                    // Answers are small and latency-bound: never wait for Nagle.
                    let _ = stream.set_nodelay(true);
                    let Some(permit) = shared.capacity.admit() else {
                        let diagnosed = shared.clone();
                        let told = move |head: &[u8]| refused_at_capacity(diagnosed, head, peer);
                        shared.capacity.refuse_telling(stream, peer, &sessions, told);
                        continue;
                    };
                    // The permit goes into the session's own future: an async block around it
                    // would hold the session's state twice (rustc lays out a future moved into
                    // an `.await` beside its captured copy), ~1.4 KiB more per connection.
                    let stream = ChargerStream::Plain(stream);
                    sessions.spawn(serve(shared.clone(), stream, peer, permit, None));
                }
                Err(e) => {
                    // Out of file descriptors, say: back off instead of spinning.
                    tracing::warn!(shard = index, error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }
    drop(listener);
    sessions.close();
    sessions.wait().await;
}

/// The next plain connection, or never for a shard without a plain listener.
async fn accept(
    listener: Option<&TcpListener>,
) -> std::io::Result<(tokio::net::TcpStream, SocketAddr)> {
    match listener {
        Some(listener) => listener.accept().await,
        None => std::future::pending().await,
    }
}

/// Files a connection refused at the cap under the charger its request head names, if any
/// (`GET /ocpp/<identity>`), among its connection attempts.
fn refused_at_capacity(shared: Arc<Shared>, head: &[u8], peer: SocketAddr) {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut request = httparse::Request::new(&mut headers);
    let _ = request.parse(head);
    let Some(segment) = request.path.and_then(|p| p.strip_prefix("/ocpp/")) else {
        return;
    };
    let segment = segment.split('?').next().unwrap_or(segment);
    let Ok(identity) = ChargerIdentity::from_path_segment(segment) else {
        return;
    };
    let because = Some(RefusedBecause::Capacity);
    let at = chrono::Utc::now();
    tokio::spawn(async move { shared.attempted(&identity, peer, because, at).await });
}
