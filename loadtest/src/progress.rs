//! The progress line on stderr, once a second, and what it reads from /proc.

use crate::stats::Stats;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

pub struct Progress {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Option<u64>>,
}

impl Progress {
    /// Stops the line; returns the highest gateway RSS seen, in KiB.
    pub async fn stop(self) -> Option<u64> {
        let _ = self.stop.send(());
        self.task.await.ok().flatten()
    }
}

/// Prints a line every second until stopped (unless `quiet`), sampling the gateway's RSS.
pub fn spawn(stats: Arc<Stats>, chargers: usize, pid: Option<u32>, quiet: bool) -> Progress {
    let (stop, mut stopped) = oneshot::channel();
    let task = tokio::spawn(async move {
        let tty = std::io::stderr().is_terminal();
        let started = Instant::now();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.tick().await;
        let mut last = stats.snapshot();
        let mut last_at = Instant::now();
        let mut peak: Option<u64> = None;
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                _ = tick.tick() => {}
            }
            let rss = pid.and_then(rss_kib);
            peak = peak.max(rss);
            if quiet {
                continue;
            }
            let now = stats.snapshot();
            let secs = last_at.elapsed().as_secs_f64().max(1e-3);
            let rate = |a: u64, b: u64| a.saturating_sub(b) as f64 / secs;
            let mut line = format!(
                "[{:>4}s] open {}/{chargers} booted {} failed {} | sent {:.0}/s answered {:.0}/s | errors {}",
                started.elapsed().as_secs(),
                now.open,
                now.booted,
                now.failed,
                rate(now.sent, last.sent),
                rate(now.answered, last.answered),
                now.errors(),
            );
            if let Some(kb) = rss {
                line.push_str(&format!(" | rss {kb} KiB"));
            }
            let mut err = std::io::stderr().lock();
            let _ = if tty {
                write!(err, "\r\x1b[2K{line}")
            } else {
                writeln!(err, "{line}")
            };
            let _ = err.flush();
            last = now;
            last_at = Instant::now();
        }
        if tty && !quiet {
            eprintln!();
        }
        peak
    });
    Progress { stop, task }
}

/// Resident memory of a process (VmRSS), in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    vm_rss(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

fn vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The soft limit on open files of this process.
pub fn open_files_limit() -> Option<u64> {
    max_open_files(&std::fs::read_to_string("/proc/self/limits").ok()?)
}

fn max_open_files(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_proc() {
        let status = "Name:\tcms\nVmPeak:\t  9000 kB\nVmRSS:\t   12345 kB\nThreads:\t4\n";
        assert_eq!(vm_rss(status), Some(12345));
        assert_eq!(vm_rss("Name:\tx\n"), None);
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max open files            20000                524288               files     \n";
        assert_eq!(max_open_files(limits), Some(20000));
        assert_eq!(
            max_open_files("Max open files  unlimited unlimited files"),
            None
        );
    }

    #[test]
    fn this_process_has_limits() {
        assert!(open_files_limit().is_some());
        assert!(rss_kib(std::process::id()).is_some());
    }
}
