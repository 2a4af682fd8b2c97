//! The probe's summary: freshness, connection and disconnection times per replica and over
//! all, the consumers' lag, the watched processes' CPU and memory, and the timeline; as a table
//! or as JSON.

use super::record::{Record, Sample, Times, histogram, ms};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Memory is judged over the last 4 minutes of the run, or its last 80% when that is shorter:
/// past start-up, whatever the run's length.
const LATE_WINDOW_S: f64 = 240.0;
const LATE_SHARE: f64 = 0.8;

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Figures {
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
    pub count: u64,
    pub missed: u64,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Lag {
    pub first: Option<f64>,
    pub max: Option<f64>,
    pub last: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Process {
    pub cpu_s: Option<f64>,
    pub rss_kb_start: Option<u64>,
    pub rss_kb_end: Option<u64>,
    pub rss_kb_min_late: Option<u64>,
    pub rss_kb_max_late: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub target: String,
    pub replicas: Vec<String>,
    pub probe_chargers: u64,
    pub duration_s: u64,
    pub freshness_ms: BTreeMap<String, Figures>,
    pub freshness_all_ms: Figures,
    pub connection_ms: BTreeMap<String, Figures>,
    pub connection_all_ms: Figures,
    pub disconnect_ms: BTreeMap<String, Figures>,
    pub disconnect_all_ms: Figures,
    pub lag: Lag,
    /// The samples `rss_kb_min_late`/`rss_kb_max_late` are taken over: from this second on.
    pub late_from_s: f64,
    pub processes: BTreeMap<String, Process>,
    /// Connections, boots or calls of the probes that failed.
    pub failures: u64,
    pub first_failure: Option<String>,
    pub timeline: Vec<Sample>,
}

pub struct Input<'a> {
    pub target: String,
    pub replicas: Vec<String>,
    pub probe_chargers: u64,
    pub duration_s: u64,
    pub record: &'a Record,
    pub timeline: Vec<Sample>,
}

impl Summary {
    pub fn new(i: Input) -> Self {
        let per_replica = |t: &Times| -> BTreeMap<String, Figures> {
            let each = t.seen.iter().zip(&t.missed);
            let each = each.map(|(h, &missed)| summarise(h, missed));
            i.replicas.iter().cloned().zip(each).collect()
        };
        let all = |t: &Times| {
            let mut h = histogram();
            t.seen.iter().for_each(|s| h.add(s).expect("same bounds"));
            summarise(&h, t.missed.iter().sum())
        };
        let r = i.record;
        let late_from_s = late_from(&i.timeline);
        Summary {
            freshness_ms: per_replica(&r.fresh),
            freshness_all_ms: all(&r.fresh),
            connection_ms: per_replica(&r.connection),
            connection_all_ms: all(&r.connection),
            disconnect_ms: per_replica(&r.disconnect),
            disconnect_all_ms: all(&r.disconnect),
            lag: lag(&i.timeline),
            late_from_s,
            processes: processes(&i.timeline, late_from_s),
            failures: r.failures,
            first_failure: r.first_failure.clone(),
            target: i.target,
            replicas: i.replicas,
            probe_chargers: i.probe_chargers,
            duration_s: i.duration_s,
            timeline: i.timeline,
        }
    }

    /// A run that missed a reading or a connection on a replica, or saw no reading at all.
    pub fn failed(&self) -> bool {
        self.freshness_all_ms.missed > 0
            || self.connection_all_ms.missed > 0
            || self.freshness_all_ms.count == 0
    }

    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "probe: {} chargers against {}, {} s, replicas {}",
            self.probe_chargers,
            self.target,
            self.duration_s,
            self.replicas.join(", ")
        );
        for (title, each, all) in [
            (
                "freshness (send to readable)",
                &self.freshness_ms,
                &self.freshness_all_ms,
            ),
            (
                "connection seen (boot answered to online)",
                &self.connection_ms,
                &self.connection_all_ms,
            ),
            (
                "disconnect seen (close to not online)",
                &self.disconnect_ms,
                &self.disconnect_all_ms,
            ),
        ] {
            let _ = writeln!(s, "{title}, ms:");
            for (replica, t) in each.iter().chain([(&"all".to_string(), all)]) {
                let _ = writeln!(s, "  {replica:<21} {}", line(t));
            }
        }
        let opt = |v: Option<f64>| v.map_or("null".to_string(), |v| format!("{v:.0}"));
        let l = &self.lag;
        let _ = writeln!(
            s,
            "consumer lag: first {} max {} last {}",
            opt(l.first),
            opt(l.max),
            opt(l.last)
        );
        let _ = writeln!(
            s,
            "processes (late: samples from {:.0} s on):",
            self.late_from_s
        );
        let mib =
            |kb: Option<u64>| kb.map_or("?".to_string(), |kb| format!("{:.1}", kb as f64 / 1024.0));
        for (name, p) in &self.processes {
            let _ = writeln!(
                s,
                "  {name:<12} CPU {} s  RSS MiB start {} end {} late min {} max {}",
                p.cpu_s.map_or("?".to_string(), |c| format!("{c:.1}")),
                mib(p.rss_kb_start),
                mib(p.rss_kb_end),
                mib(p.rss_kb_min_late),
                mib(p.rss_kb_max_late)
            );
        }
        if self.failures > 0 {
            let first = self.first_failure.as_deref().unwrap_or("");
            let _ = writeln!(s, "probe failures: {} (first: {first})", self.failures);
        }
        s
    }
}

fn line(t: &Figures) -> String {
    let v = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
    format!(
        "p50 {:>7}  p99 {:>7}  max {:>7}  count {:>5}  missed {}",
        v(t.p50),
        v(t.p99),
        v(t.max),
        t.count,
        t.missed
    )
}

fn summarise(h: &hdrhistogram::Histogram<u64>, missed: u64) -> Figures {
    let seen = !h.is_empty();
    Figures {
        p50: seen.then(|| ms(h.value_at_quantile(0.5))),
        p99: seen.then(|| ms(h.value_at_quantile(0.99))),
        max: seen.then(|| ms(h.max())),
        count: h.len(),
        missed,
    }
}

fn lag(timeline: &[Sample]) -> Lag {
    let lags: Vec<f64> = timeline.iter().filter_map(|s| s.lag).collect();
    Lag {
        first: lags.first().copied(),
        max: lags.iter().copied().reduce(f64::max),
        last: lags.last().copied(),
    }
}

/// The first second of the late window: the last 4 minutes, or the last 80% of a shorter run.
fn late_from(timeline: &[Sample]) -> f64 {
    let end = timeline.last().map_or(0.0, |s| s.t);
    end - (end * LATE_SHARE).min(LATE_WINDOW_S)
}

fn processes(timeline: &[Sample], late_from_s: f64) -> BTreeMap<String, Process> {
    let mut out: BTreeMap<String, Process> = BTreeMap::new();
    for s in timeline {
        for (name, p) in &s.processes {
            let e = out.entry(name.clone()).or_default();
            if e.rss_kb_start.is_none() {
                e.rss_kb_start = p.rss_kb;
            }
            e.rss_kb_end = p.rss_kb.or(e.rss_kb_end);
            e.cpu_s = p.cpu_s.or(e.cpu_s);
            if s.t >= late_from_s
                && let Some(kb) = p.rss_kb
            {
                e.rss_kb_min_late = Some(e.rss_kb_min_late.map_or(kb, |m| m.min(kb)));
                e.rss_kb_max_late = Some(e.rss_kb_max_late.map_or(kb, |m| m.max(kb)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::watch::ProcessSample;

    fn run(seconds: u64, rss: impl Fn(u64) -> u64) -> Vec<Sample> {
        (0..=seconds)
            .map(|t| {
                let p = ProcessSample {
                    rss_kb: Some(rss(t)),
                    cpu_cores: None,
                    cpu_s: Some(t as f64 / 2.0),
                };
                Sample {
                    t: t as f64,
                    lag: (t > 0).then_some((t % 7) as f64),
                    processes: [("gateway".to_string(), p)].into(),
                    ..Sample::default()
                }
            })
            .collect()
    }

    #[test]
    fn memory_late_in_a_long_run_is_its_last_four_minutes() {
        // Start-up peaks at 60 s; the last 240 s of a 300 s run start at 60 s.
        let t = run(300, |t| if t == 59 { 900_000 } else { 100_000 + t });
        assert_eq!(late_from(&t), 60.0);
        let p = &processes(&t, 60.0)["gateway"];
        assert_eq!(p.rss_kb_start, Some(100_000));
        assert_eq!(p.rss_kb_end, Some(100_300));
        assert_eq!(
            (p.rss_kb_min_late, p.rss_kb_max_late),
            (Some(100_060), Some(100_300))
        );
        assert_eq!(p.cpu_s, Some(150.0));
        let t = run(600, |t| 1000 + t);
        assert_eq!(late_from(&t), 360.0);
    }

    #[test]
    fn memory_late_in_a_short_run_is_its_last_80_percent() {
        let t = run(20, |t| 50_000 - t * 10);
        assert_eq!(late_from(&t), 4.0);
        let p = &processes(&t, late_from(&t))["gateway"];
        assert_eq!(
            (p.rss_kb_min_late, p.rss_kb_max_late),
            (Some(49_800), Some(49_960))
        );
    }

    #[test]
    fn lag_first_max_last_skip_seconds_without_it() {
        let l = lag(&run(10, |_| 1));
        assert_eq!((l.first, l.max, l.last), (Some(1.0), Some(6.0), Some(3.0)));
        assert_eq!(lag(&[]).max, None);
    }
}
