//! The end-of-run summary: a table for people, JSON for scripts.

use crate::commands::CommandsSummary;
use crate::cpu::ThreadUse;
use crate::stats::{Latency, Snapshot};
use crate::timeline::Sample;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Gateway memory, in KiB as /proc reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Rss {
    pub start_kb: Option<u64>,
    pub end_kb: Option<u64>,
    pub peak_kb: Option<u64>,
}

impl Rss {
    /// Growth from start to end spread over the connections held, in KiB.
    pub fn per_connection(&self, open: u64) -> Option<f64> {
        match (self.start_kb, self.end_kb) {
            (Some(start), Some(end)) if open > 0 => {
                Some(end.saturating_sub(start) as f64 / open as f64)
            }
            _ => None,
        }
    }
}

/// CPU time used over the steady window, in seconds (user and system, all threads).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    /// The target's (`--pid`), summed over its processes.
    pub target_s: Option<f64>,
    /// The target's by thread group (thread name without its number), with context switches.
    #[serde(default)]
    pub target_threads: BTreeMap<String, ThreadUse>,
    /// The load tester's own (its processes', in a run of several).
    pub loadtest_s: Option<f64>,
}

/// What one watched process (`--watch NAME=PID`) used over the steady window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessUse {
    /// CPU seconds, user and system, all threads.
    pub cpu_s: Option<f64>,
    /// CPU µs a frame answered in the window.
    pub us_per_frame: Option<f64>,
    /// RSS at the end of the window, in KiB.
    pub rss_kb: Option<u64>,
}

impl ProcessUse {
    /// Prices the CPU over `frames` answered.
    pub fn priced(mut self, frames: f64) -> Self {
        self.us_per_frame = self
            .cpu_s
            .filter(|_| frames > 0.0)
            .map(|cpu| cpu * 1e6 / frames);
        self
    }
}

/// Serialized by `--json`; deserializable so that a parent process can read its children's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub target: String,
    pub chargers: usize,
    /// Seconds of the steady window (after the ramp) the rates are measured over.
    pub duration_s: f64,
    /// Seconds of the whole run, ramp included.
    pub elapsed_s: f64,
    /// Websockets established.
    pub connections: u64,
    /// Websockets still open when the run ended.
    pub open_at_end: u64,
    pub failed: u64,
    pub booted: u64,
    pub boot_rejected: u64,
    pub disconnects: u64,
    pub callerrors: u64,
    pub timeouts: u64,
    /// Calls from the central system, received; and answered with a CALLRESULT.
    pub server_calls: u64,
    #[serde(default)]
    pub server_answered: u64,
    pub transactions: u64,
    /// Authorize answered with another status than Accepted (--authorize-tags).
    #[serde(default)]
    pub authorize_refused: u64,
    /// failed + boot_rejected + callerrors + timeouts + disconnects.
    pub errors: u64,
    pub frames_sent: u64,
    pub frames_answered: u64,
    /// Calls answered per second in the steady window.
    pub frames_per_s: f64,
    /// Calls sent per second in the steady window.
    pub sent_per_s: f64,
    pub latency_ms: Latency,
    pub rss: Rss,
    /// Gateway RSS growth from start to end, per connection held.
    pub rss_kb_per_connection: Option<f64>,
    /// Seconds from the start of the run until the last charger was booted; `None` unless
    /// every charger was.
    #[serde(default)]
    pub all_booted_s: Option<f64>,
    /// The run second by second (JSON only: the table leaves it out).
    #[serde(default)]
    pub timeline: Vec<Sample>,
    #[serde(default)]
    pub cpu: Cpu,
    /// The watched processes' use (`--watch`), by name.
    #[serde(default)]
    pub processes: BTreeMap<String, ProcessUse>,
    /// What the command generator did, with `--commands-per-s`.
    #[serde(default)]
    pub commands: Option<CommandsSummary>,
    /// Why the first charger that could not connect could not.
    #[serde(default)]
    pub first_failure: Option<String>,
}

/// What the run measured, to be summarised.
pub struct Measured {
    pub target: String,
    pub chargers: usize,
    pub elapsed_s: f64,
    /// Counters when the steady window began and ended.
    pub window: (Snapshot, Snapshot),
    pub window_s: f64,
    /// Counters at the very end (after closing).
    pub total: Snapshot,
    pub latency: Latency,
    pub rss: Rss,
    /// One sample per second of the run.
    pub timeline: Vec<Sample>,
    /// Seconds from the start to the latest accepted boot.
    pub last_boot_s: f64,
    pub cpu: Cpu,
    /// The watched processes' CPU over the window and RSS at its end.
    pub processes: BTreeMap<String, ProcessUse>,
    pub commands: Option<CommandsSummary>,
    pub first_failure: Option<String>,
}

impl Summary {
    pub fn new(m: Measured) -> Self {
        let (from, to) = m.window;
        let per_s = |n: u64| {
            if m.window_s > 0.0 {
                n as f64 / m.window_s
            } else {
                0.0
            }
        };
        let rss_kb_per_connection = m.rss.per_connection(to.open);
        let frames = to.answered.saturating_sub(from.answered) as f64;
        let processes = m
            .processes
            .into_iter()
            .map(|(name, used)| (name, used.priced(frames)))
            .collect();
        let t = m.total;
        Self {
            target: m.target,
            chargers: m.chargers,
            duration_s: m.window_s,
            elapsed_s: m.elapsed_s,
            connections: t.established,
            open_at_end: to.open,
            failed: t.failed,
            booted: t.booted,
            boot_rejected: t.boot_rejected,
            disconnects: t.disconnects,
            callerrors: t.callerrors,
            timeouts: t.timeouts,
            server_calls: t.server_calls,
            server_answered: t.server_answered,
            transactions: t.transactions,
            authorize_refused: t.authorize_refused,
            errors: t.errors(),
            frames_sent: t.sent,
            frames_answered: t.answered,
            frames_per_s: per_s(to.answered.saturating_sub(from.answered)),
            sent_per_s: per_s(to.sent.saturating_sub(from.sent)),
            latency_ms: m.latency,
            rss: m.rss,
            rss_kb_per_connection,
            all_booted_s: (m.chargers > 0 && t.booted == m.chargers as u64)
                .then_some(m.last_boot_s),
            timeline: m.timeline,
            cpu: m.cpu,
            processes,
            commands: m.commands,
            first_failure: m.first_failure,
        }
    }

    pub fn table(&self) -> String {
        let mut out = String::new();
        let mut row = |label: &str, value: String| {
            let _ = writeln!(out, "{label:<24}{value}");
        };
        row("target", self.target.clone());
        row(
            "chargers",
            format!(
                "{} ({} booted, {} boot refused)",
                self.chargers, self.booted, self.boot_rejected
            ),
        );
        row(
            "connections",
            format!(
                "{} established, {} failed, {} open at end",
                self.connections, self.failed, self.open_at_end
            ),
        );
        row(
            "time",
            format!(
                "{:.1} s measured (after ramp), {:.1} s in all",
                self.duration_s, self.elapsed_s
            ),
        );
        row(
            "frames",
            format!(
                "{} sent, {} answered",
                self.frames_sent, self.frames_answered
            ),
        );
        row(
            "frames per second",
            format!(
                "{:.0} answered, {:.0} sent",
                self.frames_per_s, self.sent_per_s
            ),
        );
        let l = &self.latency_ms;
        row(
            "latency ms",
            format!(
                "p50 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}  mean {:.3}",
                l.p50, l.p99, l.p999, l.max, l.mean
            ),
        );
        row(
            "boot",
            match self.all_booted_s {
                Some(s) => format!("all {} booted {s:.2} s after the start", self.booted),
                None => format!("{} of {} booted", self.booted, self.chargers),
            },
        );
        row("transactions", self.transactions.to_string());
        if self.authorize_refused > 0 {
            row("authorize refused", self.authorize_refused.to_string());
        }
        row(
            "errors",
            format!(
                "{} ({} callerrors, {} timeouts, {} disconnects)",
                self.errors, self.callerrors, self.timeouts, self.disconnects
            ),
        );
        if let Some(why) = &self.first_failure {
            row("first failure", why.chars().take(200).collect());
        }
        if self.server_calls > 0 {
            row(
                "calls from gateway",
                format!(
                    "{} received, {} answered",
                    self.server_calls, self.server_answered
                ),
            );
        }
        if let Some(c) = &self.commands {
            let refused: Vec<String> = c.refused.iter().map(|(s, n)| format!("{n}×{s}")).collect();
            row(
                "commands (API)",
                format!(
                    "{} {}/s per charger to {}: {} sent ({:.0}/s), {} accepted, {} refused{}, \
                     {} failed, {} late",
                    c.action,
                    c.per_charger_per_s,
                    c.chargers,
                    c.sent,
                    c.sent_per_s,
                    c.accepted,
                    c.refused.values().sum::<u64>(),
                    if refused.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", refused.join(", "))
                    },
                    c.failed,
                    c.late
                ),
            );
            let l = &c.latency_ms;
            row(
                "command latency ms",
                format!(
                    "p50 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
                    l.p50, l.p99, l.p999, l.max
                ),
            );
            if let Some(first) = &c.first_refusal {
                row("first refusal", first.chars().take(200).collect());
            }
        }
        if let Some(target) = self.cpu.target_s {
            let mut threads: Vec<(&String, &ThreadUse)> = self.cpu.target_threads.iter().collect();
            threads.sort_by(|a, b| b.1.cpu_s.total_cmp(&a.1.cpu_s));
            let groups: Vec<String> = threads
                .iter()
                .filter(|(_, used)| used.cpu_s > 0.0)
                .map(|(name, used)| format!("{name} {:.2}", used.cpu_s))
                .collect();
            row(
                "target CPU",
                format!("{target:.2} s over the window ({})", groups.join(", ")),
            );
        }
        for (name, used) in &self.processes {
            let num =
                |v: Option<f64>, digits: usize| v.map_or("-".into(), |v| format!("{v:.digits$}"));
            row(
                &format!("CPU of {name}"),
                format!(
                    "{} s over the window, {} µs a frame, RSS {} KiB at the end",
                    num(used.cpu_s, 2),
                    num(used.us_per_frame, 1),
                    used.rss_kb.map_or("-".into(), |v| v.to_string())
                ),
            );
        }
        let kb = |v: Option<u64>| v.map_or("-".into(), |v| format!("{v} KiB"));
        if self.rss.start_kb.is_some() {
            row(
                "gateway RSS",
                format!(
                    "{} at start, {} at end, {} peak",
                    kb(self.rss.start_kb),
                    kb(self.rss.end_kb),
                    kb(self.rss.peak_kb)
                ),
            );
        }
        if let Some(per) = self.rss_kb_per_connection {
            row(
                "RSS per connection",
                format!("{per:.2} KiB ({:.0} bytes)", per * 1024.0),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured() -> Measured {
        let from = Snapshot {
            sent: 100,
            answered: 90,
            open: 10,
            ..Snapshot::default()
        };
        let to = Snapshot {
            sent: 1100,
            answered: 1090,
            open: 10,
            ..Snapshot::default()
        };
        Measured {
            target: "127.0.0.1:9000".into(),
            chargers: 10,
            elapsed_s: 12.0,
            window: (from, to),
            window_s: 10.0,
            total: Snapshot {
                established: 10,
                failed: 1,
                callerrors: 2,
                sent: 1200,
                answered: 1200,
                ..Snapshot::default()
            },
            latency: Latency {
                count: 1200,
                p50: 0.5,
                p99: 2.0,
                p999: 4.0,
                max: 5.0,
                mean: 0.6,
            },
            rss: Rss {
                start_kb: Some(1000),
                end_kb: Some(1500),
                peak_kb: Some(1600),
            },
            timeline: vec![Sample {
                t: 1.0,
                open: 10,
                answered_per_s: 100.0,
                p99_ms: Some(2.0),
                ..Sample::default()
            }],
            last_boot_s: 0.75,
            cpu: Cpu::default(),
            processes: BTreeMap::from([(
                "gateway".to_string(),
                ProcessUse {
                    cpu_s: Some(0.5),
                    us_per_frame: None,
                    rss_kb: Some(2048),
                },
            )]),
            commands: None,
            first_failure: None,
        }
    }

    #[test]
    fn boot_time_only_when_every_charger_booted() {
        let mut m = measured();
        m.total.booted = 10;
        let s = Summary::new(m);
        assert_eq!(s.all_booted_s, Some(0.75));
        assert!(s.table().contains("all 10 booted 0.75 s after the start"));
        let mut m = measured();
        m.total.booted = 9;
        let s = Summary::new(m);
        assert_eq!(s.all_booted_s, None);
        assert!(s.table().contains("9 of 10 booted"));
    }

    #[test]
    fn rates_over_the_window() {
        let s = Summary::new(measured());
        assert_eq!(s.frames_per_s, 100.0);
        assert_eq!(s.sent_per_s, 100.0);
        assert_eq!(s.errors, 3);
        assert_eq!(s.rss_kb_per_connection, Some(50.0));
    }

    #[test]
    fn a_watched_process_priced_over_the_windows_frames() {
        // 0.5 s of CPU over the window's 1,000 answers (1,090 - 90).
        let s = Summary::new(measured());
        assert_eq!(s.processes["gateway"].us_per_frame, Some(500.0));
        assert!(
            s.table().contains("CPU of gateway") && s.table().contains("500.0 µs a frame"),
            "{}",
            s.table()
        );
    }

    #[test]
    fn json_has_the_agreed_fields() {
        let v: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&Summary::new(measured())).unwrap())
                .unwrap();
        assert_eq!(v["connections"], 10);
        assert_eq!(v["frames_per_s"], 100.0);
        assert_eq!(v["latency_ms"]["p50"], 0.5);
        assert_eq!(v["latency_ms"]["p99"], 2.0);
        assert_eq!(v["latency_ms"]["p999"], 4.0);
        assert_eq!(v["errors"], 3);
        assert_eq!(v["duration_s"], 10.0);
        assert_eq!(v["rss_kb_per_connection"], 50.0);
        assert_eq!(v["timeline"][0]["answered_per_s"], 100.0);
        assert_eq!(v["timeline"][0]["p99_ms"], 2.0);
        assert!(v["timeline"][0]["p50_ms"].is_null());
    }

    #[test]
    fn json_reads_back() {
        let s = Summary::new(measured());
        let back: Summary = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back, s);
        // A summary without a timeline still reads.
        let mut v = serde_json::to_value(&s).unwrap();
        v.as_object_mut().unwrap().remove("timeline");
        let back: Summary = serde_json::from_value(v).unwrap();
        assert!(back.timeline.is_empty());
    }

    #[test]
    fn the_first_failure_is_told() {
        let mut m = measured();
        assert!(!Summary::new(measured()).table().contains("first failure"));
        m.first_failure = Some("Connection refused (os error 111)".into());
        let t = Summary::new(m).table();
        assert!(
            t.contains("first failure           Connection refused"),
            "{t}"
        );
    }

    #[test]
    fn table_without_pid() {
        let mut m = measured();
        m.rss = Rss::default();
        m.processes.clear();
        m.window_s = 0.0;
        let s = Summary::new(m);
        assert_eq!(s.frames_per_s, 0.0);
        let t = s.table();
        assert!(t.contains("p99.9 4.000"), "{t}");
        assert!(!t.contains("RSS"), "{t}");
        assert!(!t.contains("timeline"), "{t}");
    }
}
