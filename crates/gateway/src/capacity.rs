//! The cap on charger connections of one gateway process: a semaphore shared by every shard
//! (as mini-redis caps its connections), one permit held for a connection's whole life,
//! handshake included. Past it a newcomer's request head is read briefly and answered
//! `503 Service Unavailable` with `Retry-After` before any upgrade, so the chargers already
//! connected keep their files, memory and answers.

use crate::metrics::handshake_rejected;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::task::TaskTracker;

/// Open files the default cap leaves to the rest of the process: the store, the bus, the HTTP
/// listener (512 connections by default) and the runtime.
const FILES_RESERVED: u64 = 1_000;
/// The default cap when the process may open any number of files.
const UNLIMITED_DEFAULT: usize = 1_000_000;
/// How long a refused charger has for each step: sending its request head, taking the answer,
/// closing its side.
const STEP: Duration = Duration::from_secs(2);
/// Refusals under way at once. Past it a connection is closed unanswered: a flood of
/// reconnecting chargers then holds no more than this many files beside the cap.
const AT_ONCE: usize = 256;
/// Largest request head read; real upgrade requests are a few hundred bytes.
const MAX_HEAD: usize = 8 * 1024;
/// What a refused charger is told to wait, in seconds: long enough that a fleet reconnecting at
/// once after an outage does not come back in one wave.
const RETRY_AFTER_SECS: u32 = 30;
const LOG_EVERY: Duration = Duration::from_secs(60);

/// The default `--max-connections`: the soft open-file limit (`ulimit -n`) less
/// `FILES_RESERVED`, but never under half the limit; `UNLIMITED_DEFAULT` without a limit.
pub fn default_max_connections() -> usize {
    max_connections_for(open_files_limit())
}

fn max_connections_for(open_files: Option<u64>) -> usize {
    match open_files {
        None => UNLIMITED_DEFAULT,
        Some(files) => {
            let cap = files.saturating_sub(FILES_RESERVED).max(files / 2).max(1);
            usize::try_from(cap).unwrap_or(UNLIMITED_DEFAULT)
        }
    }
}

/// The soft `RLIMIT_NOFILE`; `None` when unlimited.
fn open_files_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

pub struct ConnectionCap {
    max: usize,
    permits: Arc<Semaphore>,
    refusing: Arc<Semaphore>,
    /// Refusals not yet reported at info, and when they last were (shards share it).
    unreported: Mutex<(u64, Option<Instant>)>,
}

impl ConnectionCap {
    pub fn new(max: usize) -> Self {
        metrics::gauge!("cms_gateway_max_connections").set(max as f64);
        ConnectionCap {
            max,
            permits: Arc::new(Semaphore::new(max)),
            refusing: Arc::new(Semaphore::new(AT_ONCE)),
            unreported: Mutex::new((0, None)),
        }
    }

    /// A permit for one more connection, if the cap allows it.
    pub fn admit(&self) -> Option<OwnedSemaphorePermit> {
        self.permits.clone().try_acquire_owned().ok()
    }

    /// Answers `stream` 503 in a task of `tasks` (or, in a flood, closes it at once); counted
    /// as a handshake rejected `at_capacity`.
    pub fn refuse(&self, stream: TcpStream, peer: SocketAddr, tasks: &TaskTracker) {
        handshake_rejected("at_capacity");
        self.log(peer);
        if let Ok(permit) = self.refusing.clone().try_acquire_owned() {
            tasks.spawn(async move {
                answer(stream).await;
                drop(permit);
            });
        }
    }

    fn log(&self, peer: SocketAddr) {
        tracing::debug!(%peer, "charger connection refused: at the connection cap");
        let Ok(mut unreported) = self.unreported.lock() else {
            return;
        };
        let (count, reported_at) = &mut *unreported;
        *count += 1;
        if reported_at.is_none_or(|at| at.elapsed() >= LOG_EVERY) {
            tracing::info!(
                refused = *count,
                max_connections = self.max,
                "gateway at its connection cap: refusing new chargers with 503"
            );
            *count = 0;
            *reported_at = Some(Instant::now());
        }
    }
}

async fn answer(mut stream: TcpStream) {
    let _ = tokio::time::timeout(STEP, read_head(&mut stream)).await;
    let body = "gateway at capacity, retry later\n";
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nRetry-After: {RETRY_AFTER_SECS}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let sent = async {
        stream.write_all(response.as_bytes()).await?;
        stream.shutdown().await
    };
    if let Ok(Ok(())) = tokio::time::timeout(STEP, sent).await {
        // Closing with unread bytes would reset the answer away: read until the client closes.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cap_leaves_a_reserve_of_files_for_the_rest_of_the_process() {
        // The machines of the load tests: 20,000 files, ~16,700 chargers per gateway.
        assert_eq!(max_connections_for(Some(20_000)), 19_000);
        assert_eq!(max_connections_for(Some(1_048_576)), 1_047_576);
    }

    #[test]
    fn a_small_file_limit_still_gives_half_of_it_to_chargers() {
        assert_eq!(max_connections_for(Some(1_024)), 512);
        assert_eq!(max_connections_for(Some(1)), 1);
    }

    #[test]
    fn without_a_file_limit_the_cap_is_a_million() {
        assert_eq!(max_connections_for(None), 1_000_000);
    }

    /// What `ulimit -n` shows is what the default is made from.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_default_follows_the_soft_open_file_limit_of_this_process() {
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
        let line = limits.lines().find(|l| l.starts_with("Max open files"));
        let soft = line.unwrap()["Max open files".len()..]
            .split_whitespace()
            .next()
            .unwrap();
        let soft = soft.parse().ok(); // "unlimited" reads as no limit
        assert_eq!(default_max_connections(), max_connections_for(soft));
    }
}
