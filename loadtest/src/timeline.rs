//! The run second by second: one [`Sample`] per progress tick, kept for `--json` and `--plot`,
//! and merged across processes when several load testers share one run.

use std::collections::BTreeMap;

/// What one load tester saw during one second of the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    /// Seconds since the run started (the end of the second this sample covers).
    pub t: f64,
    /// Websockets open at that moment.
    pub open: u64,
    /// Websockets established so far.
    pub established: u64,
    /// Connects or handshakes failed so far.
    pub failed: u64,
    /// Chargers whose BootNotification was accepted so far.
    pub booted: u64,
    /// Errors so far: failed + boot refused + CALLERRORs + timeouts + disconnects.
    pub errors: u64,
    /// Calls sent per second over this second.
    pub sent_per_s: f64,
    /// Calls answered per second over this second.
    pub answered_per_s: f64,
    /// Median latency (ms) of the calls answered during this second; None when none was.
    pub p50_ms: Option<f64>,
    /// 99th percentile latency (ms) of the calls answered during this second; None when none was.
    pub p99_ms: Option<f64>,
    /// The target's resident memory (VmRSS, KiB) at that moment, when its pid was given.
    pub rss_kb: Option<u64>,
}

/// Merges the timelines of several load tester processes into one.
///
/// Samples are aligned by their rounded second. Counts and rates are summed over the processes
/// that have a sample for that second; p50 and p99 are those of the worst process (the highest),
/// since per-process percentiles cannot be combined exactly; `rss_kb` is the target's, which all
/// processes watch, so the highest reading is kept. Should one process have two samples rounding
/// to the same second (a late tick), its later one stands for that second.
pub fn merge(timelines: &[Vec<Sample>]) -> Vec<Sample> {
    let mut seconds: BTreeMap<i64, Sample> = BTreeMap::new();
    for timeline in timelines {
        let mut own: BTreeMap<i64, &Sample> = BTreeMap::new();
        for sample in timeline {
            own.insert(sample.t.round() as i64, sample);
        }
        for (second, s) in own {
            let m = seconds.entry(second).or_insert_with(|| Sample {
                t: second as f64,
                ..Sample::default()
            });
            m.open += s.open;
            m.established += s.established;
            m.failed += s.failed;
            m.booted += s.booted;
            m.errors += s.errors;
            m.sent_per_s += s.sent_per_s;
            m.answered_per_s += s.answered_per_s;
            m.p50_ms = worst(m.p50_ms, s.p50_ms);
            m.p99_ms = worst(m.p99_ms, s.p99_ms);
            m.rss_kb = m.rss_kb.max(s.rss_kb);
        }
    }
    seconds.into_values().collect()
}

fn worst(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: f64, open: u64, answered: f64, p99: Option<f64>, rss: Option<u64>) -> Sample {
        Sample {
            t,
            open,
            established: open,
            failed: 1,
            booted: open,
            errors: 2,
            sent_per_s: answered + 1.0,
            answered_per_s: answered,
            p50_ms: p99.map(|p| p / 2.0),
            p99_ms: p99,
            rss_kb: rss,
        }
    }

    #[test]
    fn aligns_by_second_and_sums() {
        let a = vec![
            sample(1.02, 10, 100.0, Some(4.0), Some(5000)),
            sample(2.01, 20, 200.0, None, Some(6000)),
        ];
        // A process started a little later: its ticks land near the same seconds.
        let b = vec![
            sample(0.97, 5, 50.0, Some(8.0), Some(5100)),
            sample(1.98, 7, 70.0, Some(2.0), None),
            sample(3.01, 7, 70.0, Some(1.0), Some(6100)),
        ];
        let m = merge(&[a, b]);
        assert_eq!(m.len(), 3);
        assert_eq!(
            m[0],
            Sample {
                t: 1.0,
                open: 15,
                established: 15,
                failed: 2,
                booted: 15,
                errors: 4,
                sent_per_s: 152.0,
                answered_per_s: 150.0,
                p50_ms: Some(4.0),
                p99_ms: Some(8.0),
                rss_kb: Some(5100),
            }
        );
        // One process answered nothing that second: the other's percentiles stand.
        assert_eq!(m[1].t, 2.0);
        assert_eq!(m[1].open, 27);
        assert_eq!(m[1].p99_ms, Some(2.0));
        assert_eq!(m[1].p50_ms, Some(1.0));
        assert_eq!(m[1].rss_kb, Some(6000));
        // Only the second process lasted that long.
        assert_eq!(m[2].t, 3.0);
        assert_eq!(m[2].open, 7);
        assert_eq!(m[2].answered_per_s, 70.0);
        assert_eq!(m[2].rss_kb, Some(6100));
    }

    #[test]
    fn a_late_tick_does_not_count_twice() {
        let a = vec![
            sample(1.4, 10, 100.0, Some(1.0), None),
            sample(1.45, 12, 120.0, Some(3.0), None),
        ];
        let m = merge(&[a]);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].open, 12);
        assert_eq!(m[0].p99_ms, Some(3.0));
    }

    #[test]
    fn nothing_to_merge() {
        assert!(merge(&[]).is_empty());
        assert!(merge(&[vec![], vec![]]).is_empty());
        let none = vec![sample(1.0, 1, 0.0, None, None)];
        let m = merge(&[none.clone(), none]);
        assert_eq!(m[0].p50_ms, None);
        assert_eq!(m[0].rss_kb, None);
    }

    #[test]
    fn json_round_trip_keeps_the_field_names() {
        let s = sample(1.0, 3, 30.0, Some(2.5), Some(4096));
        let v = serde_json::to_value(s).unwrap();
        for field in [
            "t",
            "open",
            "established",
            "failed",
            "booted",
            "errors",
            "sent_per_s",
            "answered_per_s",
            "p50_ms",
            "p99_ms",
            "rss_kb",
        ] {
            assert!(v.get(field).is_some(), "{field} missing in {v}");
        }
        assert_eq!(serde_json::from_value::<Sample>(v).unwrap(), s);
    }
}
