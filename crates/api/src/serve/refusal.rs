//! Past the connection cap: the newcomer's request head is read briefly (closing a socket with
//! unread bytes resets it, and the client would see the reset instead of the answer), answered
//! `503` with `Retry-After` and `Connection: close`, and the connection closed. Each refusal
//! counts in `cms_http_connections_refused_total` and logs at debug; at info once a minute at
//! most, with how many there were.

use metrics::Counter;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio_util::task::TaskTracker;

/// How long a refused client has for each step: sending its request head, taking the answer,
/// closing its side.
const STEP: Duration = Duration::from_secs(1);
/// Refusals under way at once. Past it a connection is closed unanswered: a flood then holds no
/// more than this many files beside the cap.
const AT_ONCE: usize = 64;
/// Enough for any request head a client of this API sends.
const MAX_HEAD: usize = 8 * 1024;
/// What a refused client is told to wait, in seconds.
const RETRY_AFTER_SECS: u32 = 5;
const LOG_EVERY: Duration = Duration::from_secs(60);

pub struct Refusals {
    max_connections: usize,
    under_way: Arc<Semaphore>,
    counted: Counter,
    /// Refusals not yet reported at info, and when they last were.
    unreported: u64,
    reported_at: Option<Instant>,
}

impl Refusals {
    pub fn new(max_connections: usize, counted: Counter) -> Self {
        Refusals {
            max_connections,
            under_way: Arc::new(Semaphore::new(AT_ONCE)),
            counted,
            unreported: 0,
            reported_at: None,
        }
    }

    /// Answers `stream` 503 in a task of `tasks`, or closes it at once in a flood.
    pub fn refuse(&mut self, stream: TcpStream, peer: SocketAddr, tasks: &TaskTracker) {
        self.counted.increment(1);
        self.log(peer);
        if let Ok(permit) = self.under_way.clone().try_acquire_owned() {
            tasks.spawn(async move {
                answer(stream).await;
                drop(permit);
            });
        }
    }

    fn log(&mut self, peer: SocketAddr) {
        tracing::debug!(%peer, "HTTP connection refused: at the connection cap");
        self.unreported += 1;
        if self.reported_at.is_none_or(|at| at.elapsed() >= LOG_EVERY) {
            tracing::info!(
                refused = self.unreported,
                max_connections = self.max_connections,
                "HTTP listener at its connection cap: refusing new connections with 503"
            );
            self.unreported = 0;
            self.reported_at = Some(Instant::now());
        }
    }
}

async fn answer(mut stream: TcpStream) {
    let _ = tokio::time::timeout(STEP, read_head(&mut stream)).await;
    let body = r#"{"message":"The server is at its connection limit; retry later."}"#;
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nRetry-After: {RETRY_AFTER_SECS}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let sent = async {
        stream.write_all(response.as_bytes()).await?;
        stream.shutdown().await
    };
    if let Ok(Ok(())) = tokio::time::timeout(STEP, sent).await {
        // Whatever else the client sent (a body) is read and dropped until it closes, so
        // that our close does not reset the answer away.
        let drain = async {
            let mut sink = [0u8; 1024];
            while let Ok(1..) = stream.read(&mut sink).await {}
        };
        let _ = tokio::time::timeout(STEP, drain).await;
    }
}

/// Reads until the end of a request head, or `MAX_HEAD` bytes, or the client's end.
async fn read_head(stream: &mut TcpStream) {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while head.len() < MAX_HEAD {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
        }
        if head.windows(4).any(|w| w == b"\r\n\r\n") {
            return;
        }
    }
}
