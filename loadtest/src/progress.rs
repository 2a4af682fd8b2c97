//! Once a second: a timeline sample and the progress line on stderr; and what it reads from /proc.

use crate::stats::{Latency, Stats};
use crate::timeline::Sample;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior};

pub struct Progress {
    stop: oneshot::Sender<()>,
    task: JoinHandle<(Option<u64>, Vec<Sample>)>,
}

impl Progress {
    /// Stops the line; returns the highest gateway RSS seen (KiB) and the run second by second.
    pub async fn stop(self) -> (Option<u64>, Vec<Sample>) {
        let _ = self.stop.send(());
        self.task.await.unwrap_or_default()
    }
}

/// Where each second's sample goes besides the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The progress line on stderr.
    Line,
    /// Nowhere.
    Quiet,
    /// A JSON line on stdout, for the parent of a multi-process run.
    Child,
}

/// Every second until stopped: samples the counters, this second's latencies and the gateways'
/// RSS into the timeline, and reports it as `output` says.
pub fn spawn(stats: Arc<Stats>, chargers: usize, pids: Vec<u32>, output: Output) -> Progress {
    let quiet = output != Output::Line;
    let (stop, mut stopped) = oneshot::channel();
    let task = tokio::spawn(async move {
        let tty = std::io::stderr().is_terminal();
        let started = Instant::now();
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        // A late tick covers a longer second rather than bunching ticks up after a stall.
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        tick.tick().await;
        let mut last = stats.snapshot();
        let mut last_at = Instant::now();
        let mut peak: Option<u64> = None;
        let mut timeline = Vec::new();
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                _ = tick.tick() => {}
            }
            let rss = total_rss_kib(&pids);
            peak = peak.max(rss);
            let now = stats.snapshot();
            let (p50_ms, p99_ms) = Latency::p50_p99(&stats.take_interval());
            let secs = last_at.elapsed().as_secs_f64().max(1e-3);
            last_at = Instant::now();
            let rate = |a: u64, b: u64| a.saturating_sub(b) as f64 / secs;
            let sample = Sample {
                t: started.elapsed().as_secs_f64(),
                open: now.open,
                established: now.established,
                failed: now.failed,
                booted: now.booted,
                errors: now.errors(),
                sent_per_s: rate(now.sent, last.sent),
                answered_per_s: rate(now.answered, last.answered),
                p50_ms,
                p99_ms,
                rss_kb: rss,
            };
            timeline.push(sample);
            last = now;
            match output {
                Output::Line => print_line(&sample, chargers, tty),
                Output::Quiet => {}
                Output::Child => crate::child_lines::report_sample(&sample),
            }
        }
        if tty && !quiet {
            eprintln!();
        }
        (peak, timeline)
    });
    Progress { stop, task }
}

pub fn print_line(s: &Sample, chargers: usize, tty: bool) {
    let mut line = format!(
        "[{:>4}s] open {}/{chargers} booted {} failed {} | sent {:.0}/s answered {:.0}/s | errors {}",
        s.t as u64, s.open, s.booted, s.failed, s.sent_per_s, s.answered_per_s, s.errors,
    );
    if let Some(p99) = s.p99_ms {
        line.push_str(&format!(" | p99 {p99:.2} ms"));
    }
    if let Some(kb) = s.rss_kb {
        line.push_str(&format!(" | rss {kb} KiB"));
    }
    let mut err = std::io::stderr().lock();
    let _ = if tty {
        write!(err, "\r\x1b[2K{line}")
    } else {
        writeln!(err, "{line}")
    };
    let _ = err.flush();
}

/// The summed resident memory of these processes, in KiB; `None` for no pids, or when one of
/// them cannot be read (gone).
pub fn total_rss_kib(pids: &[u32]) -> Option<u64> {
    if pids.is_empty() {
        return None;
    }
    pids.iter().map(|&pid| rss_kib(pid)).sum()
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

    #[test]
    fn several_gateways_add_up() {
        let me = std::process::id();
        // The RSS moves between reads (the harness's threads allocate): bracket the sum with
        // a read before and one after.
        let before = rss_kib(me).unwrap();
        let twice = total_rss_kib(&[me, me]).unwrap();
        let after = rss_kib(me).unwrap();
        let (low, high) = (before.min(after), before.max(after));
        assert!(
            twice + 2048 >= 2 * low && twice <= 2 * high + 2048,
            "{before} {twice} {after}"
        );
        assert_eq!(total_rss_kib(&[]), None);
        assert_eq!(total_rss_kib(&[me, u32::MAX]), None);
    }
}
