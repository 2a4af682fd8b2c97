//! Logs (tracing, to stderr) and metrics (Prometheus), set up once per process.

mod heap;
mod process;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::Duration;

/// How often histogram samples are drained into their buckets when nobody scrapes, and the
/// process's CPU, memory and file figures read again.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Installs the Prometheus recorder (once) and returns the handle that renders `/metrics`.
/// Must run before any metric handle is made, or that handle records nowhere.
pub fn metrics() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            // Latencies from 50 µs to 10 s: loopback publishes sit at the low end, a struggling
            // broker at the high end.
            let buckets = [
                0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
            ];
            let handle = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &buckets)
                .expect("buckets are not empty")
                .install_recorder()
                .expect("no other metrics recorder is installed");
            // Histogram samples pile up until drained into their buckets: a render drains them,
            // but nobody may be scraping, so drain them on a clock too, or memory grows with
            // every frame (a few hundred MB an hour at fleet rates).
            let upkeep = handle.clone();
            let process = process::ProcessMetrics::new();
            let mut heap = heap::HeapTrim::new(process.sample().unwrap_or(0));
            let _ = std::thread::Builder::new()
                .name("metrics-upkeep".into())
                .spawn(move || {
                    loop {
                        std::thread::sleep(UPKEEP_EVERY);
                        if let Some(resident) = process.sample() {
                            let after = heap.after_growth(resident, process::resident);
                            process.set_resident(after);
                        }
                        upkeep.run_upkeep();
                    }
                });
            handle
        })
        .clone()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// Logs to stderr, filtered by `RUST_LOG` (default `info`).
pub fn init_logs(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
