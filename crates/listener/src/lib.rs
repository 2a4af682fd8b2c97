//! The connection cap every listener of cms has (the OCPP gateway's, each HTTP listener's), as
//! mini-redis caps its connections: a permit per connection for its whole life, and past the
//! cap a polite refusal. The newcomer's request head is read briefly (closing a socket with
//! unread bytes resets it, and the client would see the reset instead of the answer), answered
//! `503` with `Retry-After` and `Connection: close`, and the socket closed. Refusals are
//! counted, logged one by one at debug and at info once a minute at most, with how many there
//! were, so a flood does not flood the logs too; past a bound on refusals under way a
//! connection is closed unanswered, so a flood holds no more files than that beside the cap.
#![forbid(unsafe_code)]

use metrics::Counter;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::task::TaskTracker;

/// Largest request head read before answering; real upgrade and API requests are far smaller.
const MAX_HEAD: usize = 8 * 1024;
const LOG_EVERY: Duration = Duration::from_secs(60);

/// What a refused client is told, and how much a refusal may take.
#[derive(Debug, Clone, Copy)]
pub struct Refusal {
    /// What the listener serves, for the log lines: `"gateway"`, `"HTTP listener"`.
    pub listener: &'static str,
    pub content_type: &'static str,
    pub body: &'static str,
    /// What the client is told to wait, in seconds.
    pub retry_after_secs: u32,
    /// How long the client has for each step: sending its head, taking the answer, closing.
    pub step: Duration,
    /// Refusals under way at once; past it a connection is closed unanswered.
    pub at_once: usize,
}

pub struct ConnectionCap {
    max: usize,
    permits: Arc<Semaphore>,
    refusal: Refusal,
    refusing: Arc<Semaphore>,
    counted: Counter,
    /// Refusals not yet reported at info, and when they last were (shards share it).
    unreported: Mutex<(u64, Option<Instant>)>,
}

impl ConnectionCap {
    /// A cap of `max` connections; each refusal counts in `counted`.
    pub fn new(max: usize, refusal: Refusal, counted: Counter) -> Self {
        ConnectionCap {
            max,
            permits: Arc::new(Semaphore::new(max)),
            refusing: Arc::new(Semaphore::new(refusal.at_once)),
            refusal,
            counted,
            unreported: Mutex::new((0, None)),
        }
    }

    pub fn max(&self) -> usize {
        self.max
    }

    /// A permit for one more connection, if the cap allows it; hold it as long as the
    /// connection lives.
    pub fn admit(&self) -> Option<OwnedSemaphorePermit> {
        self.permits.clone().try_acquire_owned().ok()
    }

    /// Answers `stream` 503 in a task of `tasks` (or, in a flood, closes it at once).
    pub fn refuse(&self, stream: TcpStream, peer: SocketAddr, tasks: &TaskTracker) {
        self.refuse_telling(stream, peer, tasks, |_| {});
    }

    /// [`ConnectionCap::refuse`], handing `told` the request head the client sent (as much of
    /// it as came in time), in the refusal's task: what the gateway files the refusal under.
    pub fn refuse_telling(
        &self,
        stream: TcpStream,
        peer: SocketAddr,
        tasks: &TaskTracker,
        told: impl FnOnce(&[u8]) + Send + 'static,
    ) {
        self.counted.increment(1);
        self.log(peer);
        if let Ok(permit) = self.refusing.clone().try_acquire_owned() {
            let refusal = self.refusal;
            tasks.spawn(async move {
                answer(stream, &refusal, told).await;
                drop(permit);
            });
        }
    }

    fn log(&self, peer: SocketAddr) {
        let listener = self.refusal.listener;
        tracing::debug!(%peer, listener, "connection refused: at the connection cap");
        let Ok(mut unreported) = self.unreported.lock() else {
            return;
        };
        let (count, reported_at) = &mut *unreported;
        *count += 1;
        if reported_at.is_none_or(|at| at.elapsed() >= LOG_EVERY) {
            tracing::info!(
                refused = *count,
                max_connections = self.max,
                listener,
                "at the connection cap: refusing newcomers with 503"
            );
            *count = 0;
            *reported_at = Some(Instant::now());
        }
    }
}

async fn answer(mut stream: TcpStream, refusal: &Refusal, told: impl FnOnce(&[u8])) {
    let mut head = Vec::with_capacity(1024);
    let _ = tokio::time::timeout(refusal.step, read_head(&mut stream, &mut head)).await;
    told(&head);
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
         Retry-After: {}\r\nConnection: close\r\n\r\n{}",
        refusal.content_type,
        refusal.body.len(),
        refusal.retry_after_secs,
        refusal.body
    );
    let sent = async {
        stream.write_all(response.as_bytes()).await?;
        stream.shutdown().await
    };
    if let Ok(Ok(())) = tokio::time::timeout(refusal.step, sent).await {
        // Whatever else the client sent is read and dropped until it closes, so that our
        // close does not reset the answer away.
        let drain = async {
            let mut sink = [0u8; 1024];
            while let Ok(1..) = stream.read(&mut sink).await {}
        };
        let _ = tokio::time::timeout(refusal.step, drain).await;
    }
}

/// Reads until the end of a request head, or `MAX_HEAD` bytes, or the client's end.
async fn read_head(stream: &mut TcpStream, head: &mut Vec<u8>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    const REFUSAL: Refusal = Refusal {
        listener: "test",
        content_type: "text/plain",
        body: "full\n",
        retry_after_secs: 7,
        step: Duration::from_secs(2),
        at_once: 4,
    };

    #[tokio::test]
    async fn past_the_cap_a_newcomer_reads_a_503_with_retry_after_until_a_permit_returns() {
        let cap = ConnectionCap::new(1, REFUSAL, metrics::counter!("test_refused_total"));
        let held = cap.admit().expect("the first connection fits");
        assert!(cap.admit().is_none(), "the second does not");

        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::spawn(async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            stream
                .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                .await
                .unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).await.unwrap();
            answer
        });
        let (stream, peer) = listener.accept().await.unwrap();
        let tasks = TaskTracker::new();
        cap.refuse(stream, peer, &tasks);
        let answer = client.await.unwrap();
        assert!(
            answer.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
            "{answer}"
        );
        assert!(answer.contains("Retry-After: 7\r\n"), "{answer}");
        assert!(answer.ends_with("\r\n\r\nfull\n"), "{answer}");

        drop(held);
        assert!(cap.admit().is_some(), "a permit returned makes room");
    }
}
