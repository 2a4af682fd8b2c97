//! `cms-loadtest`: simulates a fleet of OCPP 1.6J chargers, each a real client on its own
//! websocket, against a local gateway; measures connections, frame rates, answer latency,
//! errors and the gateway's memory; with `--commands-per-s`, also sends the chargers actions
//! through cms's REST API meanwhile; over ws or wss. With `--handshakes`, measures connection
//! set-up instead (TCP, TLS, the websocket upgrade, again and again); with `--http-reads`, what
//! the REST API answers per second instead (GETs over kept-alive connections); with `--probe`,
//! how soon the API replicas serve a reading or show a connection, beside a fleet. With
//! `--open-loop`, readings go on a fixed schedule and latency counts from when each was due.
//! Loopback only, bounded in count and time: it stops by itself after the ramp plus
//! `--duration`.

mod api;
mod args;
mod child_lines;
mod command_action;
mod commands;
mod connect;
mod cpu;
mod fleet;
mod handshakes;
mod http_reads;
mod ocpp;
mod ocpp201;
mod plot;
mod probe;
mod progress;
mod report;
mod session;
mod stats;
#[cfg(test)]
mod test_central;
mod timeline;
mod tls;

use args::Args;
use clap::Parser;
use commands::Commander;
use hdrhistogram::Histogram;
use report::{Cpu, Measured, ProcessUse, Rss, Summary};
use session::Plan;
use stats::{Latency, Stats};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::{Instant, sleep_until};

/// Latency histogram shards (chargers spread over them by index).
const SHARDS: usize = 64;
/// Ephemeral ports one source address offers, roughly.
const PORTS_PER_SOURCE: usize = 28_000;

fn main() -> ExitCode {
    let args = Args::parse();
    if args.probe {
        return probe::main(&args);
    }
    let processes = fleet::processes_for(&args);
    if let Err(e) = args.check(processes) {
        eprintln!("cms-loadtest: {e}");
        return ExitCode::FAILURE;
    }
    if args.handshakes {
        return handshakes::main(&args);
    }
    if args.http_reads {
        return http_reads::main(&args);
    }
    let summary = if processes > 1 {
        match fleet::run(&args, processes) {
            Ok(summary) => summary,
            Err(e) => {
                eprintln!("cms-loadtest: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        let Some(runtime) = args.runtime() else {
            return ExitCode::FAILURE;
        };
        let (summary, histogram) = match runtime.block_on(run(args.clone())) {
            Ok(run) => run,
            Err(e) => {
                eprintln!("cms-loadtest: {e}");
                return ExitCode::FAILURE;
            }
        };
        if args.child {
            child_lines::report_done(&summary, &histogram);
            return ExitCode::SUCCESS;
        }
        summary
    };
    args.print_summary(&summary, || summary.table());
    if let Some(path) = &args.plot {
        let title = format!("{} chargers against {}", summary.chargers, summary.target);
        if let Err(e) = plot::draw(path, &title, &summary.timeline) {
            eprintln!(
                "cms-loadtest: cannot write the plot {}: {e}",
                path.display()
            );
            return ExitCode::FAILURE;
        }
    }
    if summary.connections == 0 && args.chargers > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Runs the fleet (or this process's slice of it); returns the summary and the latency histogram.
async fn run(args: Args) -> Result<(Summary, Histogram<u64>), String> {
    if !args.child {
        warn_about_limits(&args);
    }
    let identities: Vec<String> = (0..args.chargers as u64)
        .map(|n| args::identity(&args.prefix, args.first + n))
        .collect();
    let tls = args.tls()?;
    let commander = Commander::prepare(&args, &identities).await?;
    let stats = Arc::new(Stats::new(SHARDS));
    let started = Instant::now();
    let ramp_time = Duration::from_secs_f64(args.chargers as f64 / args.ramp as f64);
    let stop_at = started + ramp_time + Duration::from_secs(args.duration);
    let rss_start = progress::total_rss_kib(&args.pid);
    let output = match (args.child, args.quiet) {
        (true, _) => progress::Output::Child,
        (false, true) => progress::Output::Quiet,
        (false, false) => progress::Output::Line,
    };
    let progress = progress::spawn(stats.clone(), args.chargers, args.pid.clone(), output);

    // An infinite rate (`max`) is a period of zero: closed loop, one call outstanding.
    let meter_period =
        (args.meter_rate > 0.0).then(|| Duration::from_secs_f64(1.0 / args.meter_rate));
    let (go_tx, go_rx) = watch::channel(None);
    let mut tasks = Vec::with_capacity(args.chargers);
    for (n, identity) in identities.into_iter().enumerate() {
        let number = args.first + n as u64;
        let plan = Plan {
            target: args.target,
            tls: tls.clone(),
            source: args.source_of(number),
            identity,
            index: n,
            heartbeat: Duration::from_secs(args.heartbeat),
            meter_period,
            open_loop: args.open_loop,
            authorize_tags: args.authorize_tags,
            ocpp_version: args.ocpp_version,
            transaction: args
                .transactions
                .then(|| Duration::from_secs(args.tx_seconds)),
            timeout: Duration::from_secs(args.timeout),
            go: go_rx.clone(),
            stop_at,
        };
        tasks.push(tokio::spawn(session::run(plan, stats.clone())));
        let due = started + Duration::from_secs_f64((n + 1) as f64 / args.ramp as f64);
        if due >= stop_at {
            break;
        }
        sleep_until(due).await;
    }

    // The steady window starts once every charger has connected and booted, or failed.
    let settle_by = (Instant::now() + Duration::from_secs(args.timeout)).min(stop_at);
    while Instant::now() < settle_by {
        let s = stats.snapshot();
        if s.established + s.failed >= tasks.len() as u64
            && s.booted + s.boot_rejected + s.disconnects + s.timeouts >= s.established
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let window_start = Instant::now();
    // The fleet is up: load from now on, and measure from here.
    let _ = go_tx.send(Some(window_start));
    if args.open_loop {
        // Open loop, latency is the steady window's alone: not the boots before it.
        stats.reset_latency();
    }
    let from = stats.snapshot();
    let cpu_from = cpu_now(&args.pid);
    let watched_from = watched_cpu(&args);
    // Read the end of the window just before the chargers start closing.
    let end = stop_at
        .checked_sub(Duration::from_millis(100))
        .unwrap_or(stop_at)
        .max(window_start);
    let commanding = async {
        if let Some(commander) = &commander {
            commander.run(window_start, end, stop_at).await;
        }
    };
    let (_, (to, cpu_to, window_s)) = tokio::join!(commanding, async {
        sleep_until(end).await;
        let window_s = window_start.elapsed().as_secs_f64();
        (stats.snapshot(), cpu_now(&args.pid), window_s)
    });
    let processes = args
        .watch
        .iter()
        .zip(watched_from)
        .map(|(watched, from)| {
            let to = cpu::total_cpu_s(&watched.pids);
            let used = ProcessUse {
                cpu_s: to.zip(from).map(|(b, a)| b - a),
                us_per_frame: None,
                rss_kb: progress::total_rss_kib(&watched.pids),
            };
            (watched.name.clone(), used)
        })
        .collect();
    let rss_end = progress::total_rss_kib(&args.pid);

    // Every session ends by itself at stop_at; give them a moment to close, then cut.
    let grace = stop_at + Duration::from_secs(5);
    for task in &mut tasks {
        if tokio::time::timeout_at(grace, &mut *task).await.is_err() {
            task.abort();
        }
    }
    let (rss_peak, timeline) = progress.stop().await;
    let histogram = stats.latency();
    let summary = Summary::new(Measured {
        target: args.target.to_string(),
        chargers: args.chargers,
        elapsed_s: started.elapsed().as_secs_f64(),
        window: (from, to),
        window_s,
        total: stats.snapshot(),
        latency: Latency::of(&histogram),
        rss: Rss {
            start_kb: rss_start,
            end_kb: rss_end,
            peak_kb: rss_peak.max(rss_end).max(rss_start),
        },
        timeline,
        last_boot_s: stats.last_boot_s(),
        cpu: Cpu {
            target_s: cpu_to.0.zip(cpu_from.0).map(|(b, a)| b - a),
            target_threads: cpu::between(&cpu_from.2, &cpu_to.2),
            loadtest_s: cpu_to.1.zip(cpu_from.1).map(|(b, a)| b - a),
        },
        processes,
        commands: commander.map(|c| c.summary(window_s)),
        first_failure: stats.first_failure(),
    });
    Ok((summary, histogram))
}

/// CPU seconds used so far by the target (`--pid`) and by this process, and by the target's
/// thread groups.
fn cpu_now(pids: &[u32]) -> (Option<f64>, Option<f64>, BTreeMap<String, cpu::ThreadUse>) {
    (
        cpu::total_cpu_s(pids),
        cpu::total_cpu_s(&[std::process::id()]),
        cpu::by_thread(pids),
    )
}

/// CPU seconds used so far by each watched process (`--watch`).
fn watched_cpu(args: &Args) -> Vec<Option<f64>> {
    args.watch
        .iter()
        .map(|w| cpu::total_cpu_s(&w.pids))
        .collect()
}

/// Says so on stderr when the run is likely to hit a limit of this machine.
fn warn_about_limits(args: &Args) {
    if let Some(files) = progress::open_files_limit()
        && args.chargers as u64 + 64 > files
    {
        eprintln!(
            "cms-loadtest: warning: {} chargers but only {files} open files allowed (ulimit -n)",
            args.chargers
        );
    }
    let ports = PORTS_PER_SOURCE * args.source_addrs() as usize;
    if args.chargers > ports {
        eprintln!(
            "cms-loadtest: warning: {} chargers over {} source address(es) (~{ports} ports); \
             raise --source-addrs",
            args.chargers,
            args.source_addrs()
        );
    }
}
