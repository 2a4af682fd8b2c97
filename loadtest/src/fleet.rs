//! A fleet larger than one process may hold (each charger is an open file): the run is split
//! into slices, each played by a child `cms-loadtest --child` with its own charger numbers. The
//! children report a sample a second and, at the end, their summary and latency histogram as
//! JSON lines on stdout; the parent shows one progress line and sums them into one summary.

use crate::args::Args;
use crate::child_lines::ChildLine;
use crate::progress;
use crate::report::Summary;
use crate::stats::{Latency, histogram};
use crate::timeline::{self, Sample};
use std::io::{BufRead, BufReader, IsTerminal};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Files a process keeps for itself besides its chargers' sockets.
const SPARE_FILES: u64 = 200;

/// Processes the run needs: as asked, or enough that each stays under the open-file limit.
pub fn processes_for(args: &Args) -> usize {
    if args.child {
        return 1;
    }
    if args.processes > 0 {
        return (args.processes as usize).min(args.chargers.max(1));
    }
    let files = progress::open_files_limit().unwrap_or(1024);
    let per_process = files.saturating_sub(SPARE_FILES).max(1) as usize;
    args.chargers.div_ceil(per_process).max(1)
}

/// What the parent has heard from one child so far.
#[derive(Default)]
struct Heard {
    latest: Option<Sample>,
    done: Option<(Summary, Vec<(u64, u64)>)>,
}

/// Runs the fleet as `processes` children and merges what they report.
pub fn run(args: &Args, processes: usize) -> Result<Summary, String> {
    let heard: Vec<Arc<Mutex<Heard>>> = (0..processes).map(|_| Arc::default()).collect();
    let mut children = Vec::with_capacity(processes);
    let mut readers = Vec::with_capacity(processes);
    for (slice, (first, chargers)) in slices(args.chargers, processes).into_iter().enumerate() {
        let mut child = spawn_child(args, processes, slice, first, chargers)?;
        let stdout = child.stdout.take().ok_or("a child has no stdout")?;
        let heard = heard[slice].clone();
        readers.push(std::thread::spawn(move || listen(stdout, &heard)));
        children.push(child);
    }
    eprintln!(
        "cms-loadtest: {} chargers in {processes} processes",
        args.chargers
    );
    let tty = std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    while !all_exited(&mut children) {
        std::thread::sleep(Duration::from_secs(1));
        if !args.quiet {
            // Each child's latest second, whichever it is: the children tick out of step.
            let latest: Vec<Vec<Sample>> = heard
                .iter()
                .filter_map(|h| h.lock().ok().and_then(|h| h.latest))
                .map(|s| vec![Sample { t: 0.0, ..s }])
                .collect();
            let elapsed = started.elapsed().as_secs_f64();
            if let Some(now) = timeline::merge(&latest).first() {
                progress::print_line(&Sample { t: elapsed, ..*now }, args.chargers, tty);
            }
        }
    }
    if tty && !args.quiet {
        eprintln!();
    }
    for reader in readers {
        let _ = reader.join();
    }
    let mut reports = Vec::with_capacity(processes);
    for (slice, h) in heard.iter().enumerate() {
        let done = h.lock().ok().and_then(|mut h| h.done.take());
        reports.push(done.ok_or_else(|| format!("load tester process {slice} did not finish"))?);
    }
    Ok(merge(reports))
}

/// `(first charger number, chargers)` of each slice: as even as can be.
fn slices(chargers: usize, processes: usize) -> Vec<(u64, usize)> {
    let mut first = 1u64;
    (0..processes)
        .map(|i| {
            let n = chargers / processes + usize::from(i < chargers % processes);
            let slice = (first, n);
            first += n as u64;
            slice
        })
        .collect()
}

fn spawn_child(
    args: &Args,
    processes: usize,
    slice: usize,
    first: u64,
    chargers: usize,
) -> Result<Child, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find myself: {e}"))?;
    child_command(exe, args, processes, slice, first, chargers)
        .spawn()
        .map_err(|e| format!("cannot start load tester process {slice}: {e}"))
}

/// The command line of the child that plays one slice.
fn child_command(
    exe: std::path::PathBuf,
    args: &Args,
    processes: usize,
    slice: usize,
    first: u64,
    chargers: usize,
) -> Command {
    let mut command = Command::new(exe);
    command
        .arg("--child")
        .args(["--target", &args.target.to_string()])
        .args(["--chargers", &chargers.to_string()])
        .args(["--first", &first.to_string()])
        .args(["--prefix", &args.prefix])
        // Each slice ramps at its share, so the fleet ramps at --ramp and all end together.
        .args(["--ramp", &args.ramp.div_ceil(processes as u64).to_string()])
        .args(["--heartbeat", &args.heartbeat.to_string()])
        .args(["--duration", &args.duration.to_string()])
        .args(["--meter-rate", &rate_arg(args.meter_rate)])
        .args(["--tx-seconds", &args.tx_seconds.to_string()])
        .args(["--ocpp-version", args.ocpp_version.as_arg()])
        .args(["--source-addrs", &args.source_addrs().to_string()])
        .args(["--timeout", &args.timeout.to_string()])
        .args(["--threads", &args.threads.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if args.transactions {
        command.arg("--transactions");
    }
    if args.open_loop {
        command.arg("--open-loop");
    }
    // Each process has its own TLS session store: resumption works within a slice.
    if let Some(ca) = &args.tls_ca {
        command.arg("--tls-ca").arg(ca);
    }
    if let Some(name) = &args.tls_server_name {
        command.args(["--tls-server-name", name]);
    }
    if args.no_resumption {
        command.arg("--no-resumption");
    }
    // One child watches the gateways' memory for all, at the moments a single run would.
    if slice == 0 && !args.pid.is_empty() {
        let pids: Vec<String> = args.pid.iter().map(u32::to_string).collect();
        command.args(["--pid", &pids.join(",")]);
    }
    if slice == 0 {
        for watched in &args.watch {
            let pids: Vec<String> = watched.pids.iter().map(u32::to_string).collect();
            command.args(["--watch", &format!("{}={}", watched.name, pids.join(","))]);
        }
    }
    command
}

fn rate_arg(rate: f64) -> String {
    if rate.is_infinite() {
        "max".into()
    } else {
        rate.to_string()
    }
}

fn listen(stdout: std::process::ChildStdout, heard: &Mutex<Heard>) {
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let Ok(parsed) = serde_json::from_str::<ChildLine>(&line) else {
            continue;
        };
        let Ok(mut h) = heard.lock() else { break };
        match parsed {
            ChildLine::Sample(s) => h.latest = Some(s),
            ChildLine::Done { summary, histogram } => h.done = Some((*summary, histogram)),
        }
    }
}

fn all_exited(children: &mut [Child]) -> bool {
    children
        .iter_mut()
        .all(|c| matches!(c.try_wait(), Ok(Some(_)) | Err(_)))
}

/// One summary for the fleet: counts and rates add up, latency comes from the merged
/// histograms, memory from the slice that watched it (against all connections held).
fn merge(reports: Vec<(Summary, Vec<(u64, u64)>)>) -> Summary {
    let mut latency = histogram();
    for (_, recorded) in &reports {
        for &(micros, count) in recorded {
            let _ = latency.record_n(micros, count);
        }
    }
    let timelines: Vec<Vec<Sample>> = reports.iter().map(|(s, _)| s.timeline.clone()).collect();
    let summaries: Vec<Summary> = reports.into_iter().map(|(s, _)| s).collect();
    let mut all = summaries[0].clone();
    let sum = |f: fn(&Summary) -> u64| summaries.iter().map(f).sum::<u64>();
    let sum_f = |f: fn(&Summary) -> f64| summaries.iter().map(f).sum::<f64>();
    all.chargers = summaries.iter().map(|s| s.chargers).sum();
    all.duration_s = summaries
        .iter()
        .map(|s| s.duration_s)
        .fold(f64::INFINITY, f64::min);
    all.elapsed_s = summaries.iter().map(|s| s.elapsed_s).fold(0.0, f64::max);
    all.connections = sum(|s| s.connections);
    all.open_at_end = sum(|s| s.open_at_end);
    all.failed = sum(|s| s.failed);
    all.booted = sum(|s| s.booted);
    all.boot_rejected = sum(|s| s.boot_rejected);
    all.disconnects = sum(|s| s.disconnects);
    all.callerrors = sum(|s| s.callerrors);
    all.timeouts = sum(|s| s.timeouts);
    all.server_calls = sum(|s| s.server_calls);
    all.server_answered = sum(|s| s.server_answered);
    // The target's CPU from the slice that watched it; each slice's own, added up.
    all.cpu.target_s = summaries.iter().find_map(|s| s.cpu.target_s);
    all.cpu.target_threads = summaries
        .iter()
        .map(|s| &s.cpu.target_threads)
        .find(|t| !t.is_empty())
        .cloned()
        .unwrap_or_default();
    all.cpu.loadtest_s = summaries.iter().map(|s| s.cpu.loadtest_s).sum();
    // The watched processes from the slice that watched them, priced over every slice's frames.
    let frames = summaries
        .iter()
        .map(|s| s.frames_per_s * s.duration_s)
        .sum::<f64>();
    all.processes = summaries
        .iter()
        .map(|s| &s.processes)
        .find(|p| !p.is_empty())
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|(name, used)| (name, used.priced(frames)))
        .collect();
    all.transactions = sum(|s| s.transactions);
    all.authorize_refused = sum(|s| s.authorize_refused);
    all.first_failure = summaries.iter().find_map(|s| s.first_failure.clone());
    all.errors = sum(|s| s.errors);
    all.frames_sent = sum(|s| s.frames_sent);
    all.frames_answered = sum(|s| s.frames_answered);
    all.frames_per_s = sum_f(|s| s.frames_per_s);
    all.sent_per_s = sum_f(|s| s.sent_per_s);
    all.latency_ms = Latency::of(&latency);
    // The watching slice's memory growth, spread over every connection held.
    all.rss_kb_per_connection = all.rss.per_connection(all.open_at_end);
    all.all_booted_s = summaries
        .iter()
        .map(|s| s.all_booted_s)
        .try_fold(0.0, |latest: f64, s| s.map(|s| latest.max(s)));
    all.timeline = timeline::merge(&timelines);
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn slices_cover_the_fleet_once() {
        assert_eq!(slices(10, 3), [(1, 4), (5, 3), (8, 3)]);
        assert_eq!(
            slices(100_000, 6).iter().map(|s| s.1).sum::<usize>(),
            100_000
        );
        let last = slices(100_000, 6)[5];
        assert_eq!(last.0 + last.1 as u64 - 1, 100_000);
    }

    #[test]
    fn processes_follow_the_file_limit() {
        let args = |extra: &[&str]| {
            let mut argv = vec!["cms-loadtest"];
            argv.extend_from_slice(extra);
            Args::try_parse_from(argv).unwrap()
        };
        let files = progress::open_files_limit().unwrap();
        let per = (files - SPARE_FILES) as usize;
        assert_eq!(processes_for(&args(&["--chargers", &per.to_string()])), 1);
        let more = (per + 1).to_string();
        assert_eq!(processes_for(&args(&["--chargers", &more])), 2);
        assert_eq!(
            processes_for(&args(&["--chargers", "10", "--processes", "3"])),
            3
        );
        assert_eq!(
            processes_for(&args(&["--chargers", "2", "--processes", "3"])),
            2
        );
        assert_eq!(processes_for(&args(&["--chargers", &more, "--child"])), 1);
    }

    fn report(
        chargers: usize,
        latencies_ms: &[u64],
        booted_s: Option<f64>,
    ) -> (Summary, Vec<(u64, u64)>) {
        let mut h = histogram();
        for ms in latencies_ms {
            h.record(ms * 1000).unwrap();
        }
        let json = serde_json::json!({
            "target": "127.0.0.1:9000", "chargers": chargers, "duration_s": 10.0,
            "elapsed_s": 12.0, "connections": chargers, "open_at_end": chargers, "failed": 0,
            "booted": chargers, "boot_rejected": 0, "disconnects": 0, "callerrors": 1,
            "timeouts": 0, "server_calls": 0, "transactions": 0, "errors": 1,
            "frames_sent": 1000, "frames_answered": 1000, "frames_per_s": 100.0,
            "sent_per_s": 100.0, "latency_ms": Latency::of(&h),
            "rss": {"start_kb": 1000, "end_kb": 3000, "peak_kb": 3000},
            "rss_kb_per_connection": 2000.0 / chargers as f64, "all_booted_s": booted_s,
            "timeline": [{"t": 1.0, "open": chargers, "established": chargers, "failed": 0,
                          "booted": chargers, "errors": 0, "sent_per_s": 100.0,
                          "answered_per_s": 100.0, "p50_ms": 1.0, "p99_ms": 2.0,
                          "rss_kb": 3000}]
        });
        let summary: Summary = serde_json::from_value(json).unwrap();
        let recorded = h
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect();
        (summary, recorded)
    }

    #[test]
    fn children_add_up_to_one_summary() {
        let fast: Vec<u64> = (1..=98).collect();
        let all = merge(vec![
            report(10, &fast, Some(1.5)),
            report(30, &[500, 600], Some(2.5)),
        ]);
        assert_eq!(all.chargers, 40);
        assert_eq!(all.connections, 40);
        assert_eq!(all.errors, 2);
        assert_eq!(all.frames_per_s, 200.0);
        // The slow process's two calls are the top 2% of all 100: exact, not averaged.
        assert_eq!(all.latency_ms.count, 100);
        assert!(
            (all.latency_ms.p50 - 50.0).abs() < 0.1,
            "{:?}",
            all.latency_ms
        );
        assert!(all.latency_ms.p99 >= 499.0, "{:?}", all.latency_ms);
        assert_eq!(all.rss_kb_per_connection, Some(50.0));
        assert_eq!(all.all_booted_s, Some(2.5));
        assert_eq!(all.timeline.len(), 1);
        assert_eq!(all.timeline[0].open, 40);
        let not_all = merge(vec![report(1, &[1], Some(1.0)), report(1, &[1], None)]);
        assert_eq!(not_all.all_booted_s, None);
    }

    #[test]
    fn children_reach_a_wss_target_as_the_parent_would() {
        let args = Args::try_parse_from([
            "cms-loadtest",
            "--target",
            "wss://127.0.0.1:9443",
            "--tls-ca",
            "/tmp/ca.pem",
            "--tls-server-name",
            "localhost",
            "--no-resumption",
            "--chargers",
            "30000",
        ])
        .unwrap();
        let command = child_command("cms-loadtest".into(), &args, 2, 1, 15001, 15000);
        let argv: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let after = |flag: &str| {
            let at = argv.iter().position(|a| a == flag).unwrap();
            argv[at + 1].clone()
        };
        assert_eq!(after("--target"), "wss://127.0.0.1:9443");
        assert_eq!(after("--tls-ca"), "/tmp/ca.pem");
        assert_eq!(after("--tls-server-name"), "localhost");
        assert!(argv.iter().any(|a| a == "--no-resumption"));
        assert_eq!(after("--first"), "15001");
        let child =
            Args::try_parse_from(std::iter::once("cms-loadtest".to_string()).chain(argv)).unwrap();
        assert_eq!(child.target, args.target);
        assert!(child.child && child.no_resumption);
        assert!(child.check(1).is_ok());

        let plain = Args::try_parse_from(["cms-loadtest", "--chargers", "10"]).unwrap();
        let command = child_command("x".into(), &plain, 1, 0, 1, 10);
        let argv: Vec<_> = command.get_args().collect();
        assert!(
            argv.iter()
                .all(|a| !a.to_string_lossy().starts_with("--tls"))
        );
        assert!(argv.iter().any(|a| *a == "127.0.0.1:9000"));
    }

    #[test]
    fn child_lines_read_back() {
        let (summary, histogram) = report(2, &[1, 2], Some(0.1));
        let line = serde_json::to_string(&ChildLine::Done {
            summary: Box::new(summary.clone()),
            histogram: histogram.clone(),
        })
        .unwrap();
        match serde_json::from_str::<ChildLine>(&line).unwrap() {
            ChildLine::Done {
                summary: s,
                histogram: h,
            } => {
                assert_eq!(*s, summary);
                assert_eq!(h, histogram);
            }
            other => panic!("{other:?}"),
        }
    }
}
