//! What a child of a split fleet (`--child`, see `fleet`) tells its parent: a JSON line on
//! stdout for each second's sample, and one at the end with its summary and latencies.

use crate::report::Summary;
use crate::timeline::Sample;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::io::Write;

/// One line a child writes on stdout.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChildLine {
    Sample(Sample),
    Done {
        summary: Box<Summary>,
        /// The latency histogram as (microseconds, count) pairs, to merge exactly.
        histogram: Vec<(u64, u64)>,
    },
}

/// In a child: one second's sample, for the parent.
pub fn report_sample(sample: &Sample) {
    emit(&ChildLine::Sample(*sample));
}

/// In a child: the end of its run, for the parent.
pub fn report_done(summary: &Summary, latency: &Histogram<u64>) {
    let histogram = latency
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect();
    emit(&ChildLine::Done {
        summary: Box::new(summary.clone()),
        histogram,
    });
}

fn emit(line: &ChildLine) {
    if let Ok(json) = serde_json::to_string(line) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{json}");
        let _ = out.flush();
    }
}
