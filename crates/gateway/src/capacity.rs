//! The cap on charger connections of one gateway process (`cms_listener::ConnectionCap`,
//! shared by every shard and the TLS runtime): one permit held for a connection's whole life,
//! handshake included; past it a newcomer is answered `503` with `Retry-After` before any
//! upgrade, so the chargers already connected keep their files, memory and answers. The
//! default cap comes from the process's open-file limit.

pub use cms_listener::ConnectionCap;
use cms_listener::Refusal;
use std::time::Duration;

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
/// What a refused charger is told to wait, in seconds: long enough that a fleet reconnecting at
/// once after an outage does not come back in one wave.
const RETRY_AFTER_SECS: u32 = 30;

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

/// The gateway's cap: past it a charger is answered 503 before any upgrade, counted as a
/// handshake rejected `at_capacity`.
pub fn connection_cap(max: usize) -> ConnectionCap {
    metrics::gauge!("cms_gateway_max_connections").set(max as f64);
    let refusal = Refusal {
        listener: "OCPP gateway",
        content_type: "text/plain; charset=utf-8",
        body: "gateway at capacity, retry later\n",
        retry_after_secs: RETRY_AFTER_SECS,
        step: STEP,
        at_once: AT_ONCE,
    };
    let counted =
        metrics::counter!("cms_gateway_handshake_rejections_total", "reason" => "at_capacity");
    ConnectionCap::new(max, refusal, counted)
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
