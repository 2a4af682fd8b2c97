//! Shards: one thread and one single-threaded runtime each, each accepting on its own socket
//! bound to the same address with SO_REUSEPORT, so the kernel spreads connections over them
//! (and over other gateway processes on the same port).

use crate::Shared;
use socket2::{Domain, Socket, Type};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
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

pub fn spawn(
    index: usize,
    listener: std::net::TcpListener,
    shared: Arc<Shared>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::Builder::new()
        .name(format!("ocpp-shard-{index}"))
        .spawn(move || runtime.block_on(accept_loop(index, listener, shared)))
}

/// Accepts until shutdown. Each connection holds a permit of the process-wide cap
/// (`capacity.rs`) from its accept to its end; past the cap it is refused with 503.
async fn accept_loop(index: usize, listener: std::net::TcpListener, shared: Arc<Shared>) {
    let listener = match TcpListener::from_std(listener) {
        Ok(listener) => listener,
        Err(e) => return tracing::error!(shard = index, error = %e, "shard cannot listen"),
    };
    let sessions = TaskTracker::new();
    loop {
        tokio::select! {
            _ = shared.shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    // Answers are small and latency-bound: never wait for Nagle.
                    let _ = stream.set_nodelay(true);
                    let Some(permit) = shared.capacity.admit() else {
                        shared.capacity.refuse(stream, peer, &sessions);
                        continue;
                    };
                    // The permit goes into the session's own future: an async block around it
                    // would hold the session's state twice (rustc lays out a future moved into
                    // an `.await` beside its captured copy), ~1.4 KiB more per connection.
                    sessions.spawn(crate::session::serve(shared.clone(), stream, peer, permit));
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
