//! `--probe`: a small observer run beside a load tester. A few probe chargers send a reading a
//! second and time how long each takes to be readable on every API replica (freshness), and
//! how long a connection and a disconnection take to show there; each second it also samples
//! watched processes' RSS and CPU and the deployment's Prometheus metrics (consumer lag,
//! materialised records, frames in). Loopback only; stops by itself after `--duration`.

mod charger;
mod plot;
mod record;
mod report;
mod watch;

use crate::api;
use crate::args::{Args, identity};
use record::Record;
use std::net::SocketAddrV4;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::{Instant, sleep_until, timeout_at};
use watch::{Metrics, Processes};

/// How long a reading, a connection or a disconnection may take to show on a replica before it
/// counts as missed.
pub const VISIBLE_WITHIN: Duration = Duration::from_secs(10);

/// What a probe charger is given: where, who, until when, and where to record.
#[derive(Clone)]
pub struct Setup {
    pub target: crate::connect::Target,
    pub replicas: Vec<SocketAddrV4>,
    pub token: String,
    pub stop_at: Instant,
    pub record: Arc<Mutex<Record>>,
}

pub fn main(args: &Args) -> ExitCode {
    let Some(runtime) = args.runtime() else {
        return ExitCode::FAILURE;
    };
    match runtime.block_on(run(args)) {
        Ok(summary) => {
            args.print_summary(&summary, || summary.table());
            if let Some(path) = &args.plot {
                let title = format!("Probe beside the load, against {}", summary.target);
                if let Err(e) = plot::draw(path, &title, &summary.timeline) {
                    eprintln!(
                        "cms-loadtest: cannot write the plot {}: {e}",
                        path.display()
                    );
                    return ExitCode::FAILURE;
                }
            }
            if summary.failed() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("cms-loadtest: {e}");
            ExitCode::FAILURE
        }
    }
}

fn check(args: &Args) -> Result<String, String> {
    if args.handshakes || args.http_reads || args.commands_per_s > 0.0 {
        return Err(
            "--probe is a mode of its own: leave out --handshakes, --http-reads and \
                    --commands-per-s"
                .into(),
        );
    }
    if args.target.tls {
        return Err("--probe connects over ws:// only".into());
    }
    if args.http_base.is_empty() {
        return Err("--probe needs --http-base (the API replicas, http://127.0.0.1:PORT)".into());
    }
    args.token
        .clone()
        .ok_or_else(|| "--probe needs --token (chargers:read, meter-values:read)".into())
}

async fn run(args: &Args) -> Result<report::Summary, String> {
    let token = check(args)?;
    let p = args;
    let identities: Vec<String> = (1..=p.probe_chargers)
        .map(|n| identity(&p.probe_prefix, n))
        .collect();
    let mut client = api::ApiClient::new(args.http_base[0], &token);
    let lookup = api::charger_uuids_among(&mut client, &identities, Some(&p.probe_prefix));
    let uuids = tokio::time::timeout(Duration::from_secs(30), lookup)
        .await
        .map_err(|_| "the charger list took over 30 s".to_string())??;
    if let Some(missing) = identities.iter().find(|i| !uuids.contains_key(*i)) {
        return Err(format!(
            "probe charger {missing} is not registered (cms charger import)"
        ));
    }

    let replicas: Vec<String> = args.http_base.iter().map(|a| a.to_string()).collect();
    let started = Instant::now();
    let stop_at = started + Duration::from_secs(args.duration);
    let setup = Setup {
        target: args.target,
        replicas: args.http_base.clone(),
        token: token.clone(),
        stop_at,
        record: Arc::new(Mutex::new(Record::new(replicas.len()))),
    };
    let count = identities.len() as u32;
    let tasks: Vec<_> = identities
        .into_iter()
        .enumerate()
        .map(|(n, identity)| {
            let uuid = uuids[&identity].clone();
            // Spread over the second, so the probes do not all reconnect at once.
            let offset = Duration::from_millis(1000) * n as u32 / count;
            tokio::spawn(charger::run(setup.clone(), identity, uuid, offset))
        })
        .collect();

    let mut processes = Processes::new(&p.probe_watch);
    let mut metrics = Metrics::new(&p.probe_metrics, &token);
    let mut timeline = vec![record::Sample::at(
        0.0,
        processes.sample(),
        metrics.scrape().await,
    )];
    let mut tick = started;
    while tick + Duration::from_secs(1) <= stop_at {
        tick += Duration::from_secs(1);
        sleep_until(tick).await;
        let scraped = metrics.scrape().await;
        let t = started.elapsed().as_secs_f64();
        let mut sample = record::Sample::at(t, processes.sample(), scraped);
        lock(&setup.record).close_second(&replicas, &mut sample);
        if !args.quiet && timeline.len() % 10 == 0 {
            eprintln!("{}", sample.line());
        }
        timeline.push(sample);
    }

    // The probes stop by themselves at stop_at; a reading then in flight may still be looked
    // for a moment, then everything is cut.
    let grace = stop_at + Duration::from_secs(3);
    for mut task in tasks {
        if timeout_at(grace, &mut task).await.is_err() {
            task.abort();
        }
    }
    let record = lock(&setup.record);
    Ok(report::Summary::new(report::Input {
        target: args.target.to_string(),
        replicas,
        probe_chargers: p.probe_chargers,
        duration_s: args.duration,
        record: &record,
        timeline,
    }))
}

/// The record, even if a probe task panicked holding it (what it holds is still counts).
pub fn lock(record: &Mutex<Record>) -> std::sync::MutexGuard<'_, Record> {
    record.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn the_probe_flags_parse() {
        let a = Args::try_parse_from([
            "cms-loadtest",
            "--probe",
            "--http-base",
            "http://127.0.0.1:8081,http://127.0.0.1:8082",
            "--token",
            "1|x",
            "--probe-watch",
            "gateway=12,13",
            "--probe-watch",
            "api=14",
            "--probe-metrics",
            "http://127.0.0.1:8081/metrics,http://127.0.0.1:9100",
        ])
        .unwrap();
        assert!(a.probe);
        assert_eq!(a.probe_chargers, 4);
        assert_eq!(a.probe_prefix, "PROBE-");
        assert_eq!(a.probe_watch.len(), 2);
        assert_eq!(a.probe_watch[0].pids, [12, 13]);
        assert_eq!(a.probe_metrics[1].1, "/metrics");
        assert_eq!(check(&a).unwrap(), "1|x");
        assert!(
            Args::try_parse_from(["cms-loadtest", "--probe-metrics", "http://10.0.0.1:1/m"])
                .is_err()
        );
        let no_base = Args::try_parse_from(["cms-loadtest", "--probe", "--token", "t"]).unwrap();
        assert!(check(&no_base).unwrap_err().contains("--http-base"));
    }
}
