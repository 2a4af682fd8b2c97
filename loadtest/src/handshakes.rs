//! `--handshakes`: connection set-up, measured. Each of `--chargers` clients, as its own
//! charger, connects (TCP from its source address, TLS for a wss target, the websocket upgrade),
//! closes the websocket and connects again, until the end. Counted over a window that starts a
//! second after the last client started (so that resumption has tickets to use): connections
//! set up per second, their latency (connect to the upgrade's answer), how many resumed a TLS
//! session, and the CPU one costs the target (`--pid`) and this process.

use crate::args::Args;
use crate::connect::{self, Target};
use crate::cpu;
use crate::report::Cpu;
use crate::stats::{Latency, histogram};
use crate::tls::{self, Tls};
use futures_util::StreamExt;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::fmt::Write;
use std::net::Ipv4Addr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::time::{Instant, sleep, sleep_until, timeout_at};
use tokio_tungstenite::WebSocketStream;

/// Before the window: every client has started and has had one set-up behind it.
const WARM_UP: Duration = Duration::from_secs(1);
/// After a failed attempt, a pause: a target that refuses would otherwise be hammered.
const BACK_OFF: Duration = Duration::from_millis(50);

/// What to run.
pub struct Plan {
    pub target: Target,
    pub tls: Option<Tls>,
    /// Each client's identity and source address.
    pub clients: Vec<(String, Ipv4Addr)>,
    /// Clients started per second.
    pub ramp: u64,
    pub duration: Duration,
    /// For one set-up, closing included.
    pub timeout: Duration,
    /// The target's processes, for their CPU.
    pub pids: Vec<u32>,
    pub quiet: bool,
}

/// Serialized by `--json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandshakeSummary {
    pub target: String,
    pub clients: usize,
    /// Over wss: whether the clients kept sessions to resume; `None` over ws.
    pub resumption: Option<bool>,
    /// Over wss: version, cipher suite and key exchange of the first connection.
    pub negotiated: Option<String>,
    /// Seconds of the window.
    pub duration_s: f64,
    /// Connections set up in the window (the upgrade answered).
    pub handshakes: u64,
    pub handshakes_per_s: f64,
    /// Of those, over wss: resumed TLS sessions, and full handshakes.
    pub resumed: u64,
    pub full: u64,
    /// Attempts that failed in the window (refused, timed out, broken).
    pub failed: u64,
    pub first_error: Option<String>,
    /// From connect to the upgrade's answer, over the window.
    pub latency_ms: Latency,
    pub cpu: Cpu,
    /// The target's CPU over the window per connection set up, in µs; and this process's.
    pub target_us_per_handshake: Option<f64>,
    pub loadtest_us_per_handshake: Option<f64>,
}

/// Runs the mode for `cms-loadtest --handshakes` and prints its summary.
pub fn main(args: &Args) -> ExitCode {
    let Some(runtime) = args.runtime() else {
        return ExitCode::FAILURE;
    };
    let tls = match args.tls() {
        Ok(tls) => tls,
        Err(e) => {
            eprintln!("cms-loadtest: {e}");
            return ExitCode::FAILURE;
        }
    };
    let clients = (0..args.chargers as u64)
        .map(|n| {
            let number = args.first + n;
            (
                crate::args::identity(&args.prefix, number),
                args.source_of(number),
            )
        })
        .collect();
    let plan = Plan {
        target: args.target,
        tls,
        clients,
        ramp: args.ramp,
        duration: Duration::from_secs(args.duration),
        timeout: Duration::from_secs(args.timeout),
        pids: args.pid.clone(),
        quiet: args.quiet,
    };
    let summary = runtime.block_on(run(plan));
    args.print_summary(&summary, || summary.table());
    if summary.handshakes == 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// What the clients did so far.
#[derive(Default)]
struct Tally {
    opened: AtomicU64,
    resumed: AtomicU64,
    failed: AtomicU64,
    latency: Mutex<Option<Histogram<u64>>>,
    first_error: OnceLock<String>,
    negotiated: OnceLock<String>,
}

impl Tally {
    fn opened(&self, took: Duration, resumed: bool) {
        self.opened.fetch_add(1, Ordering::Relaxed);
        if resumed {
            self.resumed.fetch_add(1, Ordering::Relaxed);
        }
        let micros = (took.as_micros() as u64).max(1);
        if let Ok(mut h) = self.latency.lock() {
            h.get_or_insert_with(histogram).saturating_record(micros);
        }
    }

    fn failed(&self, error: String) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        let _ = self.first_error.set(error);
    }

    /// (opened, resumed, failed)
    fn counts(&self) -> (u64, u64, u64) {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        (get(&self.opened), get(&self.resumed), get(&self.failed))
    }

    /// The latencies recorded since the last call.
    fn take_latency(&self) -> Histogram<u64> {
        let taken = self.latency.lock().ok().and_then(|mut h| h.take());
        taken.unwrap_or_else(histogram)
    }
}

/// Runs the clients until the window is over; returns what the window saw.
pub async fn run(plan: Plan) -> HandshakeSummary {
    let tally = Arc::new(Tally::default());
    let started = Instant::now();
    let ramp_time = Duration::from_secs_f64(plan.clients.len() as f64 / plan.ramp as f64);
    let window_start = started + ramp_time + WARM_UP;
    let stop_at = window_start + plan.duration;
    let mut tasks = Vec::with_capacity(plan.clients.len());
    for (n, (identity, source)) in plan.clients.iter().cloned().enumerate() {
        let client = Client {
            target: plan.target,
            tls: plan.tls.clone(),
            identity,
            source,
            timeout: plan.timeout,
            stop_at,
        };
        tasks.push(tokio::spawn(client.run(tally.clone())));
        sleep_until(started + Duration::from_secs_f64((n + 1) as f64 / plan.ramp as f64)).await;
    }

    sleep_until(window_start).await;
    let from = tally.counts();
    let _ = tally.take_latency();
    let cpu_from = cpu_now(&plan.pids);
    let mut last = from;
    let mut tick = window_start;
    while tick < stop_at {
        tick = (tick + Duration::from_secs(1)).min(stop_at);
        sleep_until(tick).await;
        let now = tally.counts();
        if !plan.quiet {
            eprintln!(
                "[{:>4.0}s] {} set up ({} resumed), {} failed",
                started.elapsed().as_secs_f64(),
                now.0 - last.0,
                now.1 - last.1,
                now.2 - last.2,
            );
        }
        last = now;
    }
    let window_s = window_start.elapsed().as_secs_f64();
    let to = tally.counts();
    let cpu_to = cpu_now(&plan.pids);
    let latency = tally.take_latency();

    // The clients stop starting set-ups at stop_at; those under way get their time-out.
    let grace = Instant::now() + plan.timeout + Duration::from_secs(1);
    for task in &mut tasks {
        if timeout_at(grace, &mut *task).await.is_err() {
            task.abort();
        }
    }

    let handshakes = to.0 - from.0;
    let resumed = to.1 - from.1;
    let per = |cpu_s: Option<f64>| {
        cpu_s
            .filter(|_| handshakes > 0)
            .map(|s| s * 1e6 / handshakes as f64)
    };
    let cpu = Cpu {
        target_s: cpu_to.0.zip(cpu_from.0).map(|(b, a)| b - a),
        target_threads: cpu::between(&cpu_from.2, &cpu_to.2),
        loadtest_s: cpu_to.1.zip(cpu_from.1).map(|(b, a)| b - a),
    };
    HandshakeSummary {
        target: plan.target.to_string(),
        clients: plan.clients.len(),
        resumption: plan.tls.as_ref().map(Tls::resumes),
        negotiated: tally.negotiated.get().cloned(),
        duration_s: window_s,
        handshakes,
        handshakes_per_s: handshakes as f64 / window_s.max(1e-9),
        resumed,
        full: if plan.target.tls {
            handshakes - resumed
        } else {
            0
        },
        failed: to.2 - from.2,
        first_error: tally.first_error.get().cloned(),
        latency_ms: Latency::of(&latency),
        target_us_per_handshake: per(cpu.target_s),
        loadtest_us_per_handshake: per(cpu.loadtest_s),
        cpu,
    }
}

fn cpu_now(
    pids: &[u32],
) -> (
    Option<f64>,
    Option<f64>,
    std::collections::BTreeMap<String, cpu::ThreadUse>,
) {
    (
        cpu::total_cpu_s(pids),
        cpu::total_cpu_s(&[std::process::id()]),
        cpu::by_thread(pids),
    )
}

/// One client: its charger's connection set up and closed, again and again.
struct Client {
    target: Target,
    tls: Option<Tls>,
    identity: String,
    source: Ipv4Addr,
    timeout: Duration,
    stop_at: Instant,
}

impl Client {
    async fn run(self, tally: Arc<Tally>) {
        while Instant::now() < self.stop_at {
            let deadline = Instant::now() + self.timeout;
            let error = match timeout_at(deadline, self.once(&tally)).await {
                Ok(Ok(())) => continue,
                Ok(Err(e)) => e.to_string(),
                Err(_) => format!("no connection within {:?}", self.timeout),
            };
            tally.failed(error);
            sleep(BACK_OFF).await;
        }
    }

    /// One set-up and its close.
    async fn once(&self, tally: &Tally) -> Result<(), connect::Error> {
        let started = Instant::now();
        let tcp = connect::tcp(self.source, self.target.addr).await?;
        match &self.tls {
            None => {
                let ws = connect::upgrade(tcp, &self.target, &self.identity, "ocpp1.6").await?;
                tally.opened(started.elapsed(), false);
                close(ws).await;
            }
            Some(client) => {
                let stream = connect::tls(client, tcp).await?;
                let resumed = tls::resumed(&stream);
                if tally.negotiated.get().is_none() {
                    let _ = tally.negotiated.set(tls::negotiated(&stream));
                }
                let ws = connect::upgrade(stream, &self.target, &self.identity, "ocpp1.6").await?;
                tally.opened(started.elapsed(), resumed);
                close(ws).await;
            }
        }
        Ok(())
    }
}

/// Closes the websocket and waits for the server to end the connection, so that the next
/// connection of this charger does not find the last one still there (tungstenite is done once
/// the Close frames have crossed; the server's end of TCP comes after).
async fn close<S: AsyncRead + AsyncWrite + Unpin>(mut ws: WebSocketStream<S>) {
    if ws.close(None).await.is_err() {
        return;
    }
    while let Some(Ok(_)) = ws.next().await {}
    let mut rest = [0u8; 256];
    let stream = ws.get_mut();
    while let Ok(n) = stream.read(&mut rest).await
        && n > 0
    {}
}

impl HandshakeSummary {
    pub fn table(&self) -> String {
        let mut out = String::new();
        let mut row = |label: &str, value: String| {
            let _ = writeln!(out, "{label:<24}{value}");
        };
        row(
            "target",
            match &self.negotiated {
                Some(n) => format!("{} ({n})", self.target),
                None => self.target.clone(),
            },
        );
        row(
            "clients",
            match self.resumption {
                Some(true) => format!("{}, TLS sessions resumed when they can", self.clients),
                Some(false) => format!("{}, no resumption (full handshakes)", self.clients),
                None => self.clients.to_string(),
            },
        );
        row("time", format!("{:.1} s measured", self.duration_s));
        let kinds = if self.resumption.is_some() {
            format!(": {} resumed, {} full", self.resumed, self.full)
        } else {
            String::new()
        };
        row(
            "set up",
            format!(
                "{} ({:.0}/s){kinds}; {} failed",
                self.handshakes, self.handshakes_per_s, self.failed
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
        let us = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0} µs"));
        if let Some(target) = self.cpu.target_s {
            let mut threads: Vec<_> = self.cpu.target_threads.iter().collect();
            threads.sort_by(|a, b| b.1.cpu_s.total_cmp(&a.1.cpu_s));
            let groups: Vec<String> = threads
                .iter()
                .filter(|(_, used)| used.cpu_s > 0.0)
                .map(|(name, used)| format!("{name} {:.2}", used.cpu_s))
                .collect();
            row(
                "target CPU",
                format!(
                    "{target:.2} s, {} per set-up ({})",
                    us(self.target_us_per_handshake),
                    groups.join(", ")
                ),
            );
        }
        if let Some(own) = self.cpu.loadtest_s {
            row(
                "load tester CPU",
                format!(
                    "{own:.2} s, {} per set-up",
                    us(self.loadtest_us_per_handshake)
                ),
            );
        }
        if let Some(e) = &self.first_error {
            row("first error", e.chars().take(200).collect());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_central::Central;

    fn plan(central: &Central, clients: usize) -> Plan {
        Plan {
            target: central.target,
            tls: central.tls.clone(),
            clients: (1..=clients)
                .map(|n| (format!("HS-{n}"), Ipv4Addr::LOCALHOST))
                .collect(),
            ramp: 1000,
            duration: Duration::from_secs(1),
            timeout: Duration::from_secs(5),
            pids: vec![std::process::id()],
            quiet: true,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn resumed_handshakes_are_counted_apart_from_full_ones() {
        let central = Central::start(true, true).await;
        // More clients at once than rustls's own store keeps tickets for (8 a server).
        let s = run(plan(&central, 32)).await;
        assert!(s.handshakes > 32, "{s:?}");
        assert_eq!(s.failed, 0, "{s:?}");
        // Past the warm-up the clients hold tickets: nearly every set-up resumes.
        assert!(s.resumed * 20 >= s.handshakes * 19, "{s:?}");
        assert_eq!(s.resumed + s.full, s.handshakes);
        assert_eq!(s.resumption, Some(true));
        assert!(
            s.negotiated.as_deref().unwrap().contains("TLSv1_3"),
            "{s:?}"
        );
        assert!(s.latency_ms.count >= s.handshakes, "{s:?}");
        assert!(s.target_us_per_handshake.is_some());
        assert!(s.table().contains("resumed"), "{}", s.table());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_fleet_keeps_two_tickets_a_charger() {
        let central = Central::start(true, true).await;
        let tls = central.tls.clone().unwrap();
        // One client, one set-up after another: each leaves one ticket more (two given, one
        // used), up to 2 × 64.
        let s = run(plan(&central, 1)).await;
        assert!(s.handshakes > 10, "{s:?}");
        let held = tls.tickets();
        assert!(held > 8 && held <= 128, "{held} tickets after {s:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn without_resumption_every_handshake_is_full() {
        let central = Central::start(true, false).await;
        let s = run(plan(&central, 2)).await;
        assert!(s.handshakes > 5, "{s:?}");
        assert_eq!((s.resumed, s.full), (0, s.handshakes), "{s:?}");
        assert_eq!(s.resumption, Some(false));
        assert!(s.table().contains("no resumption"), "{}", s.table());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn plain_websockets_have_no_tls_to_resume() {
        let central = Central::start(false, false).await;
        let s = run(plan(&central, 3)).await;
        assert!(s.handshakes > 5, "{s:?}");
        assert_eq!((s.resumed, s.full, s.failed), (0, 0, 0), "{s:?}");
        assert_eq!((s.resumption, s.negotiated.as_ref()), (None, None));
        // Each set-up is one upgrade the central accepted.
        assert!(central.upgrades.load(Ordering::Relaxed) >= s.handshakes);
    }

    #[tokio::test]
    async fn a_refusing_target_counts_failures_and_says_why() {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let std::net::SocketAddr::V4(addr) = free.local_addr().unwrap() else {
            unreachable!()
        };
        drop(free);
        let s = run(Plan {
            target: Target { addr, tls: false },
            tls: None,
            clients: vec![("HS-1".into(), Ipv4Addr::LOCALHOST)],
            ramp: 1000,
            duration: Duration::from_secs(1),
            timeout: Duration::from_secs(1),
            pids: vec![],
            quiet: true,
        })
        .await;
        assert_eq!(s.handshakes, 0);
        assert!(s.failed >= 5, "{s:?}");
        assert!(s.first_error.unwrap().contains("refused"));
        assert_eq!(s.target_us_per_handshake, None);
    }
}
