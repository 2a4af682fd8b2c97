//! What the probes measured: for each replica, how long readings, connections and
//! disconnections took to show there over the whole run, and the readings of the current
//! second; and the timeline's samples, one a second.

use super::watch::{ProcessSample, Scrape};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// Longest time a histogram holds, in microseconds (a minute: far past `VISIBLE_WITHIN`).
const MAX_MICROS: u64 = 60_000_000;

pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_MICROS, 3).expect("valid histogram bounds")
}

/// What a probe waited for a replica to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A reading, from its send.
    Fresh,
    /// `online`, from the BootNotification's answer.
    Connection,
    /// Not `online` any more, from the close.
    Disconnect,
}

/// Times per replica of one kind, and how many never showed within `VISIBLE_WITHIN`.
pub struct Times {
    pub seen: Vec<Histogram<u64>>,
    pub missed: Vec<u64>,
}

impl Times {
    fn new(replicas: usize) -> Self {
        Times {
            seen: (0..replicas).map(|_| histogram()).collect(),
            missed: vec![0; replicas],
        }
    }
}

pub struct Record {
    pub fresh: Times,
    pub connection: Times,
    pub disconnect: Times,
    /// This second's readings, per replica.
    second: Vec<Histogram<u64>>,
    /// Connections, boots or calls that failed (the probe then reconnects).
    pub failures: u64,
    pub first_failure: Option<String>,
}

impl Record {
    pub fn new(replicas: usize) -> Self {
        Record {
            fresh: Times::new(replicas),
            connection: Times::new(replicas),
            disconnect: Times::new(replicas),
            second: (0..replicas).map(|_| histogram()).collect(),
            failures: 0,
            first_failure: None,
        }
    }

    /// What replica `replica` showed: after `took`, or `None` when it did not in time.
    pub fn seen(&mut self, kind: Kind, replica: usize, took: Option<Duration>) {
        let times = match kind {
            Kind::Fresh => &mut self.fresh,
            Kind::Connection => &mut self.connection,
            Kind::Disconnect => &mut self.disconnect,
        };
        let Some(took) = took else {
            times.missed[replica] += 1;
            return;
        };
        let micros = (took.as_micros() as u64).clamp(1, MAX_MICROS);
        let _ = times.seen[replica].record(micros);
        if kind == Kind::Fresh {
            let _ = self.second[replica].record(micros);
        }
    }

    pub fn failure(&mut self, what: String) {
        self.failures += 1;
        self.first_failure.get_or_insert(what);
    }

    /// Closes the current second into `sample`: each replica's p50/p99 of the readings seen in
    /// it, and the worst of them.
    pub fn close_second(&mut self, replicas: &[String], sample: &mut Sample) {
        for (name, h) in replicas.iter().zip(&mut self.second) {
            if h.is_empty() {
                continue;
            }
            let second = Second {
                p50_ms: ms(h.value_at_quantile(0.5)),
                p99_ms: ms(h.value_at_quantile(0.99)),
                count: h.len(),
            };
            let worst = |a: Option<f64>, b: f64| Some(a.map_or(b, |a| a.max(b)));
            sample.freshness_p50_ms = worst(sample.freshness_p50_ms, second.p50_ms);
            sample.freshness_p99_ms = worst(sample.freshness_p99_ms, second.p99_ms);
            sample.freshness.insert(name.clone(), second);
            h.reset();
        }
    }
}

/// Microseconds as milliseconds.
pub fn ms(micros: u64) -> f64 {
    micros as f64 / 1000.0
}

/// One second of the run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Sample {
    /// Seconds since the probes started.
    pub t: f64,
    /// The worst replica's p50 and p99 of the readings that showed this second.
    pub freshness_p50_ms: Option<f64>,
    pub freshness_p99_ms: Option<f64>,
    /// Each replica's, for those where readings showed this second.
    pub freshness: BTreeMap<String, Second>,
    /// `cms_kafka_consumer_lag` summed; the rates of `cms_materialiser_records_total` and
    /// `cms_gateway_frames_in_total` since the last scrape. `None`: not exported.
    pub lag: Option<f64>,
    pub materialised_per_s: Option<f64>,
    pub frames_in_per_s: Option<f64>,
    pub processes: BTreeMap<String, ProcessSample>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Second {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub count: u64,
}

impl Sample {
    pub fn at(t: f64, processes: BTreeMap<String, ProcessSample>, scrape: Scrape) -> Self {
        Sample {
            t,
            lag: scrape.lag,
            materialised_per_s: scrape.materialised_per_s,
            frames_in_per_s: scrape.frames_in_per_s,
            processes,
            ..Sample::default()
        }
    }

    /// A progress line for stderr.
    pub fn line(&self) -> String {
        let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}"));
        let rss: Vec<String> = self
            .processes
            .iter()
            .map(|(name, p)| format!("{name} {} MiB", p.rss_kb.map_or(0, |kb| kb / 1024)))
            .collect();
        format!(
            "probe {:>4.0}s  freshness p50 {} p99 {} ms  lag {}  frames in/s {}  {}",
            self.t,
            opt(self.freshness_p50_ms),
            opt(self.freshness_p99_ms),
            opt(self.lag),
            opt(self.frames_in_per_s),
            rss.join("  ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holds_only_its_readings_and_the_worst_replica() {
        let replicas = ["a".to_string(), "b".to_string()];
        let mut r = Record::new(2);
        for ms in [1, 2, 3] {
            r.seen(Kind::Fresh, 0, Some(Duration::from_millis(ms)));
        }
        r.seen(Kind::Fresh, 1, Some(Duration::from_millis(40)));
        r.seen(Kind::Fresh, 1, None);
        r.seen(Kind::Connection, 1, Some(Duration::from_millis(500)));
        let mut s = Sample::default();
        r.close_second(&replicas, &mut s);
        assert_eq!(s.freshness["a"].count, 3);
        assert_eq!(s.freshness["b"].count, 1);
        assert!((s.freshness_p99_ms.unwrap() - 40.0).abs() < 0.1);
        assert!((s.freshness["a"].p50_ms - 2.0).abs() < 0.01);
        assert_eq!(r.fresh.missed, [0, 1]);
        assert_eq!(r.connection.seen[1].len(), 1);
        // The next second starts empty; the run's histograms keep everything.
        let mut next = Sample::default();
        r.close_second(&replicas, &mut next);
        assert!(next.freshness.is_empty());
        assert_eq!(next.freshness_p99_ms, None);
        assert_eq!(r.fresh.seen[0].len(), 3);
    }
}
