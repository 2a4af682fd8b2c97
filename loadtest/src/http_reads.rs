//! `--http-reads`: what cms's REST API answers per second, measured. `--api-connections`
//! kept-alive HTTP/1.1 connections (hyper's client connection, as the command generator's) GET
//! the `--path`s in turn, with the `--token` as bearer when given. Closed loop by default: each
//! connection sends its next request as soon as the last answer is read, so the rate is the
//! most the API answers on this machine (which it shares with the load tester). With `--rate`,
//! open loop: request k is due at k / rate whatever became of the others, taken by whichever
//! connection is free, and its latency runs from when it was due, so a slow answer that holds
//! up the requests behind it is counted in theirs too (no coordinated omission). Counted over a
//! window that starts after a second of warm-up: answers by status, those other than 2xx and
//! 304 apart, requests without an answer, latency in µs, the target's CPU per request (`--pid`).

use crate::api::{self, ApiError};
use crate::args::Args;
use crate::cpu;
use crate::report::Cpu;
use crate::stats::histogram;
use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{ACCEPT, AUTHORIZATION, HOST, HeaderValue};
use hyper::{Request, Uri};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::net::SocketAddrV4;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, sleep_until, timeout_at};

/// Before the window: every connection open, the target's pools and caches warm.
const WARM_UP: Duration = Duration::from_secs(1);
/// After a request that got no answer, a pause: a target that refuses would otherwise be
/// hammered by every connection at once.
const BACK_OFF: Duration = Duration::from_millis(50);
/// Open loop: a request sent this long after it was due is late (every connection was busy).
const LATE: Duration = Duration::from_millis(10);
/// Tallies the connections share, by connection number: recording rarely waits for a lock, and
/// 1,024 connections do not cost a histogram each (~170 KiB).
const SHARDS: usize = 16;

/// What to run.
pub struct Plan {
    /// The API's addresses: connection `i` goes to `bases[i % bases.len()]`.
    pub bases: Vec<SocketAddrV4>,
    /// Paths with their queries; request k GETs `paths[k % paths.len()]`.
    pub paths: Vec<String>,
    pub token: Option<String>,
    pub connections: usize,
    /// Open loop: requests per second in all; `None`: closed loop.
    pub rate: Option<f64>,
    pub warm_up: Duration,
    pub duration: Duration,
    /// For one request, connecting included.
    pub timeout: Duration,
    /// The target's processes, for their CPU.
    pub pids: Vec<u32>,
    pub quiet: bool,
}

/// Serialized by `--json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpReadsSummary {
    /// `http://IP:PORT` of each address the connections were spread over.
    pub bases: Vec<String>,
    /// How many paths were read in turn, and the first.
    pub paths: usize,
    pub first_path: String,
    pub connections: usize,
    /// Open loop: the requests per second asked for; `None`: closed loop.
    pub rate: Option<f64>,
    /// Seconds of the window.
    pub duration_s: f64,
    /// Requests sent in the window (due in it, open loop) and answered, whatever the status.
    pub requests: u64,
    pub requests_per_s: f64,
    /// The answers by status code.
    pub statuses: BTreeMap<String, u64>,
    /// Answers other than 2xx and 304, and the first one's status and body.
    pub unexpected: u64,
    pub first_unexpected: Option<String>,
    /// Requests without an answer: the connection failed or closed, or no answer in --timeout.
    pub failed: u64,
    pub first_error: Option<String>,
    /// Open loop: requests due in the window still unanswered when the run gave up on them.
    pub abandoned: u64,
    /// Open loop: requests sent 10 ms or more after they were due (every connection busy).
    pub late: u64,
    /// Connections opened again after one failed or the server closed it (the whole run).
    pub reconnects: u64,
    /// Mean body size of the answers.
    pub bytes_per_answer: f64,
    /// From when the request was sent (closed loop) or due (open loop) to its body read.
    pub latency_us: LatencyUs,
    pub cpu: Cpu,
    /// The target's CPU over the window per request answered, in µs; and this process's.
    pub target_us_per_request: Option<f64>,
    pub loadtest_us_per_request: Option<f64>,
}

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyUs {
    pub count: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
    pub mean: f64,
}

impl LatencyUs {
    fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        LatencyUs {
            count: h.len(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
            mean: h.mean(),
        }
    }
}

/// Runs the mode for `cms-loadtest --http-reads` and prints its summary.
pub fn main(args: &Args) -> ExitCode {
    let paths = match args.read_paths() {
        Ok(paths) => paths,
        Err(e) => {
            eprintln!("cms-loadtest: {e}");
            return ExitCode::FAILURE;
        }
    };
    let Some(runtime) = args.runtime() else {
        return ExitCode::FAILURE;
    };
    let plan = Plan {
        bases: args.http_base.clone(),
        paths,
        token: args.token.clone(),
        connections: args.api_connections as usize,
        rate: args.rate,
        warm_up: WARM_UP,
        duration: Duration::from_secs(args.duration),
        timeout: Duration::from_secs(args.timeout),
        pids: args.pid.clone(),
        quiet: args.quiet,
    };
    let summary = match runtime.block_on(run(plan)) {
        Ok(summary) => summary,
        Err(e) => {
            eprintln!("cms-loadtest: {e}");
            return ExitCode::FAILURE;
        }
    };
    args.print_summary(&summary, || summary.table());
    if summary.requests == 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// One shard of what the window saw.
struct Shard {
    latency: Histogram<u64>,
    statuses: BTreeMap<u16, u64>,
    bytes: u64,
    failed: u64,
    late: u64,
}

/// What the connections did, shared by them.
struct Tally {
    shards: Vec<Mutex<Shard>>,
    /// Answers and failures over the whole run, warm-up included: the progress line's.
    answered: AtomicU64,
    failed: AtomicU64,
    reconnects: AtomicU64,
    first_unexpected: OnceLock<String>,
    first_error: OnceLock<String>,
}

impl Tally {
    fn new() -> Self {
        Tally {
            shards: (0..SHARDS)
                .map(|_| {
                    Mutex::new(Shard {
                        latency: histogram(),
                        statuses: BTreeMap::new(),
                        bytes: 0,
                        failed: 0,
                        late: 0,
                    })
                })
                .collect(),
            answered: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            reconnects: AtomicU64::new(0),
            first_unexpected: OnceLock::new(),
            first_error: OnceLock::new(),
        }
    }

    /// An answer read by `connection`; counted in the window's figures when `counted`.
    fn answered(&self, connection: usize, counted: bool, answer: Answer) {
        self.answered.fetch_add(1, Ordering::Relaxed);
        let expected = (200..300).contains(&answer.status) || answer.status == 304;
        if !expected && self.first_unexpected.get().is_none() {
            let body: String = String::from_utf8_lossy(&answer.body)
                .chars()
                .take(200)
                .collect();
            let _ = self
                .first_unexpected
                .set(format!("{} {body}", answer.status));
        }
        if !counted {
            return;
        }
        let micros = (answer.latency.as_micros() as u64).max(1);
        if let Ok(mut shard) = self.shards[connection % SHARDS].lock() {
            shard.latency.saturating_record(micros);
            *shard.statuses.entry(answer.status).or_default() += 1;
            shard.bytes += answer.body.len() as u64;
            shard.late += u64::from(answer.late);
        }
    }

    /// A request without an answer; counted in the window's figures when `counted`.
    fn failed(&self, connection: usize, counted: bool, error: String) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        let _ = self.first_error.set(error);
        if counted && let Ok(mut shard) = self.shards[connection % SHARDS].lock() {
            shard.failed += 1;
        }
    }

    /// Every shard merged: latency, statuses, bytes, failed, late.
    fn merged(&self) -> Shard {
        let mut all = Shard {
            latency: histogram(),
            statuses: BTreeMap::new(),
            bytes: 0,
            failed: 0,
            late: 0,
        };
        for shard in &self.shards {
            if let Ok(s) = shard.lock() {
                let _ = all.latency.add(&s.latency);
                for (status, n) in &s.statuses {
                    *all.statuses.entry(*status).or_default() += n;
                }
                all.bytes += s.bytes;
                all.failed += s.failed;
                all.late += s.late;
            }
        }
        all
    }
}

/// What every request is made of, prepared once (cloning a `Uri` or a `HeaderValue` copies no
/// bytes), and the schedule.
struct Shared {
    uris: Vec<Uri>,
    authorization: Option<HeaderValue>,
    rate: Option<f64>,
    /// The next request's number: its path, and in open loop when it is due.
    next: AtomicU64,
    /// The open-loop schedule's start (request 0 is due then): the start of the warm-up.
    start: Instant,
    window_start: Instant,
    end: Instant,
    timeout: Duration,
    tally: Tally,
}

/// Runs the connections until the window is over and what was sent in it is answered; returns
/// what the window saw.
pub async fn run(plan: Plan) -> Result<HttpReadsSummary, String> {
    let uris = plan
        .paths
        .iter()
        .map(|p| p.parse::<Uri>().map_err(|e| format!("{p:?}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let authorization = match &plan.token {
        Some(token) => {
            let mut value = HeaderValue::try_from(format!("Bearer {token}"))
                .map_err(|_| "the token is not a valid header value".to_string())?;
            value.set_sensitive(true);
            Some(value)
        }
        None => None,
    };
    if plan.bases.is_empty() || uris.is_empty() {
        return Err("nothing to read: no address or no path".into());
    }
    let started = Instant::now();
    let window_start = started + plan.warm_up;
    let end = window_start + plan.duration;
    let shared = Arc::new(Shared {
        uris,
        authorization,
        rate: plan.rate,
        next: AtomicU64::new(0),
        start: started,
        window_start,
        end,
        timeout: plan.timeout,
        tally: Tally::new(),
    });
    let mut tasks: Vec<JoinHandle<()>> = (0..plan.connections.max(1))
        .map(|index| {
            let addr = plan.bases[index % plan.bases.len()];
            let connection = Connection {
                index,
                addr,
                host: HeaderValue::try_from(addr.to_string()).expect("an address is a header"),
                sender: None,
                opened: 0,
            };
            tokio::spawn(connection.run(shared.clone()))
        })
        .collect();

    sleep_until(window_start).await;
    let cpu_from = cpu_now(&plan.pids);
    let tally = &shared.tally;
    let counts = || {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        (get(&tally.answered), get(&tally.failed))
    };
    let mut last = counts();
    let mut tick = window_start;
    while tick < end {
        tick = (tick + Duration::from_secs(1)).min(end);
        sleep_until(tick).await;
        let now = counts();
        if !plan.quiet {
            eprintln!(
                "[{:>4.0}s] {} answered, {} failed",
                started.elapsed().as_secs_f64(),
                now.0 - last.0,
                now.1 - last.1,
            );
        }
        last = now;
    }
    let cpu_to = cpu_now(&plan.pids);

    // Nothing is sent past the end; what was sent before it gets its time-out to be answered.
    let grace = Instant::now() + plan.timeout + Duration::from_secs(1);
    for task in &mut tasks {
        if timeout_at(grace, &mut *task).await.is_err() {
            task.abort();
        }
    }

    let window = tally.merged();
    let requests = window.latency.len();
    let window_s = plan.duration.as_secs_f64();
    let unexpected = window
        .statuses
        .iter()
        .filter(|(status, _)| !((200..300).contains(*status) || **status == 304))
        .map(|(_, n)| n)
        .sum();
    // Open loop: the requests of the schedule due in [window_start, end).
    let abandoned = plan.rate.map_or(0, |rate| {
        let scheduled =
            first_due_from(rate, end - started) - first_due_from(rate, window_start - started);
        scheduled.saturating_sub(requests + window.failed)
    });
    let per = |cpu_s: Option<f64>| {
        cpu_s
            .filter(|_| requests > 0)
            .map(|s| s * 1e6 / requests as f64)
    };
    let cpu = Cpu {
        target_s: cpu_to.0.zip(cpu_from.0).map(|(b, a)| b - a),
        target_threads: cpu::between(&cpu_from.2, &cpu_to.2),
        loadtest_s: cpu_to.1.zip(cpu_from.1).map(|(b, a)| b - a),
    };
    Ok(HttpReadsSummary {
        bases: plan.bases.iter().map(|a| format!("http://{a}")).collect(),
        paths: plan.paths.len(),
        first_path: plan.paths[0].clone(),
        connections: tasks.len(),
        rate: plan.rate,
        duration_s: window_s,
        requests,
        requests_per_s: requests as f64 / window_s.max(1e-9),
        statuses: window
            .statuses
            .iter()
            .map(|(status, n)| (status.to_string(), *n))
            .collect(),
        unexpected,
        first_unexpected: tally.first_unexpected.get().cloned(),
        failed: window.failed,
        first_error: tally.first_error.get().cloned(),
        abandoned,
        late: window.late,
        reconnects: tally.reconnects.load(Ordering::Relaxed),
        bytes_per_answer: window.bytes as f64 / requests.max(1) as f64,
        latency_us: LatencyUs::of(&window.latency),
        target_us_per_request: per(cpu.target_s),
        loadtest_us_per_request: per(cpu.loadtest_s),
        cpu,
    })
}

/// When request `k` of an open-loop schedule at `rate` is due, from the schedule's start.
fn due_after(rate: f64, k: u64) -> Duration {
    Duration::from_secs_f64(k as f64 / rate)
}

/// The number of the first request due at or after `at` (the schedule's own rounding, so that
/// counts agree with what the connections did).
fn first_due_from(rate: f64, at: Duration) -> u64 {
    let mut k = (at.as_secs_f64() * rate).floor().max(2.0) as u64 - 2;
    while due_after(rate, k) < at {
        k += 1;
    }
    k
}

fn cpu_now(pids: &[u32]) -> (Option<f64>, Option<f64>, BTreeMap<String, cpu::ThreadUse>) {
    (
        cpu::total_cpu_s(pids),
        cpu::total_cpu_s(&[std::process::id()]),
        cpu::by_thread(pids),
    )
}

/// An answer read: its status, its body, and how long it took.
struct Answer {
    status: u16,
    body: Bytes,
    latency: Duration,
    late: bool,
}

/// One kept-alive connection to the API, sending request after request.
struct Connection {
    index: usize,
    addr: SocketAddrV4,
    host: HeaderValue,
    sender: Option<SendRequest<Empty<Bytes>>>,
    /// Connections opened so far (after the first, each is a reconnect).
    opened: u64,
}

impl Connection {
    async fn run(mut self, shared: Arc<Shared>) {
        loop {
            let k = shared.next.fetch_add(1, Ordering::Relaxed);
            let now = Instant::now();
            // Closed loop: due now. Open loop: at its place in the schedule, which may have
            // passed while every connection was busy.
            let due = match shared.rate {
                Some(rate) => shared.start + due_after(rate, k),
                None => now,
            };
            if due >= shared.end {
                return;
            }
            // Latency runs from when the request was due; but when this connection was idle
            // then, from when the timer woke it (its 1 ms granularity is the tester's delay,
            // not the target's).
            let from = if due > now {
                sleep_until(due).await;
                Instant::now()
            } else {
                due
            };
            let late = now.saturating_duration_since(due) >= LATE;
            let counted = due >= shared.window_start;
            let uri = &shared.uris[(k % shared.uris.len() as u64) as usize];
            let deadline = Instant::now() + shared.timeout;
            let request = self.get(uri, shared.authorization.as_ref(), &shared.tally);
            match timeout_at(deadline, request).await {
                Ok(Ok((status, body))) => {
                    let latency = from.elapsed();
                    let answer = Answer {
                        status,
                        body,
                        latency,
                        late,
                    };
                    shared.tally.answered(self.index, counted, answer);
                }
                // Dropped halfway, the request took its connection with it: the next opens one.
                Ok(Err(e)) => {
                    shared.tally.failed(self.index, counted, e.to_string());
                    sleep(BACK_OFF).await;
                }
                Err(_) => {
                    let error = format!("no answer within {:?}", shared.timeout);
                    shared.tally.failed(self.index, counted, error);
                }
            }
        }
    }

    /// Sends one GET and reads the whole answer: its status and body.
    async fn get(
        &mut self,
        uri: &Uri,
        authorization: Option<&HeaderValue>,
        tally: &Tally,
    ) -> Result<(u16, Bytes), ApiError> {
        let mut request = Request::get(uri.clone())
            .header(HOST, self.host.clone())
            .header(ACCEPT, HeaderValue::from_static("application/json"));
        if let Some(authorization) = authorization {
            request = request.header(AUTHORIZATION, authorization.clone());
        }
        let request = request.body(Empty::new())?;
        // Taken for the request and put back after a whole answer, as the command generator
        // does: a connection that failed halfway is dropped, and the next request opens one.
        let kept = match self.sender.take() {
            Some(mut sender) => sender.ready().await.is_ok().then_some(sender),
            None => None,
        };
        let mut sender = match kept {
            Some(sender) => sender,
            None => {
                if self.opened > 0 {
                    tally.reconnects.fetch_add(1, Ordering::Relaxed);
                }
                self.opened += 1;
                api::connect(self.addr).await?
            }
        };
        let response = sender.send_request(request).await?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await?.to_bytes();
        self.sender = Some(sender);
        Ok((status, body))
    }
}

impl HttpReadsSummary {
    pub fn table(&self) -> String {
        let mut out = String::new();
        let mut row = |label: &str, value: String| {
            let _ = writeln!(out, "{label:<24}{value}");
        };
        let mode = match self.rate {
            Some(rate) => format!("open loop at {rate:.0} requests/s"),
            None => "closed loop".into(),
        };
        row(
            "target",
            format!(
                "{} ({} connections, {mode})",
                self.bases.join(", "),
                self.connections
            ),
        );
        row(
            "paths",
            format!("{} in turn, the first {}", self.paths, self.first_path),
        );
        row("time", format!("{:.1} s measured", self.duration_s));
        row(
            "requests",
            format!(
                "{} ({:.0}/s), {} failed, {} reconnects, {:.0} bytes an answer",
                self.requests,
                self.requests_per_s,
                self.failed,
                self.reconnects,
                self.bytes_per_answer
            ),
        );
        if self.rate.is_some() {
            row(
                "schedule",
                format!("{} late, {} abandoned", self.late, self.abandoned),
            );
        }
        let statuses: Vec<String> = self
            .statuses
            .iter()
            .map(|(status, n)| format!("{status} ×{n}"))
            .collect();
        row("statuses", statuses.join(", "));
        if let Some(first) = &self.first_unexpected {
            row("first unexpected", first.clone());
        }
        let l = &self.latency_us;
        row(
            "latency µs",
            format!(
                "p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  mean {:.0}",
                l.p50, l.p90, l.p99, l.p999, l.max, l.mean
            ),
        );
        let us = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1} µs"));
        if let Some(target) = self.cpu.target_s {
            row(
                "target CPU",
                format!(
                    "{target:.2} s, {} a request",
                    us(self.target_us_per_request)
                ),
            );
        }
        if let Some(own) = self.cpu.loadtest_s {
            row(
                "load tester CPU",
                format!("{own:.2} s, {} a request", us(self.loadtest_us_per_request)),
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
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    /// A minimal HTTP/1.1 server on a loopback port, keeping connections alive: `/ok` 200,
    /// `/slow` 200 after 50 ms, `/auth` 200 with `Authorization: Bearer t` and 401 without,
    /// anything else 404. Counts the connections it accepted.
    struct Server {
        addr: SocketAddrV4,
        accepted: Arc<AtomicU64>,
    }

    impl Server {
        async fn start() -> Server {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let std::net::SocketAddr::V4(addr) = listener.local_addr().unwrap() else {
                unreachable!("bound to an IPv4 address")
            };
            let accepted = Arc::new(AtomicU64::new(0));
            let counter = accepted.clone();
            tokio::spawn(async move {
                while let Ok((tcp, _)) = listener.accept().await {
                    counter.fetch_add(1, Ordering::Relaxed);
                    tokio::spawn(serve(tcp));
                }
            });
            Server { addr, accepted }
        }
    }

    /// Answers each request of one connection in turn (the client sends one at a time).
    async fn serve(mut tcp: TcpStream) {
        let mut buffer = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") else {
                match tcp.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                }
                continue;
            };
            let head = String::from_utf8_lossy(&buffer[..end]).to_string();
            buffer.drain(..end + 4);
            let path = head.split(' ').nth(1).unwrap_or("").to_string();
            let bearer = head
                .lines()
                .any(|l| l.eq_ignore_ascii_case("authorization: bearer t"));
            let (status, body) = match path.as_str() {
                "/ok" => ("200 OK", "{\"ok\":true}"),
                "/slow" => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    ("200 OK", "{}")
                }
                "/auth" if bearer => ("200 OK", "{}"),
                "/auth" => ("401 Unauthorized", "{\"message\":\"Unauthenticated.\"}"),
                _ => ("404 Not Found", "{\"message\":\"Not Found.\"}"),
            };
            let answer = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            if tcp.write_all(answer.as_bytes()).await.is_err() {
                return;
            }
        }
    }

    fn plan(addr: SocketAddrV4, paths: &[&str], connections: usize) -> Plan {
        Plan {
            bases: vec![addr],
            paths: paths.iter().map(|p| p.to_string()).collect(),
            token: None,
            connections,
            rate: None,
            warm_up: Duration::from_millis(200),
            duration: Duration::from_secs(1),
            timeout: Duration::from_secs(5),
            pids: vec![std::process::id()],
            quiet: true,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn closed_loop_keeps_its_connections_and_counts_every_status() {
        let server = Server::start().await;
        let s = run(plan(server.addr, &["/ok", "/missing"], 4))
            .await
            .unwrap();
        assert!(s.requests > 100, "{s:?}");
        assert_eq!((s.failed, s.reconnects, s.abandoned), (0, 0, 0), "{s:?}");
        // The paths in turn: as many of each, give or take the requests at the window's edges.
        let (ok, missing) = (s.statuses["200"], s.statuses["404"]);
        assert_eq!(ok + missing, s.requests, "{s:?}");
        assert!(ok.abs_diff(missing) <= 8, "{s:?}");
        // 404 is not what was asked for, and says so.
        assert_eq!(s.unexpected, missing);
        assert!(s.first_unexpected.as_deref().unwrap().starts_with("404 "));
        assert_eq!(s.latency_us.count, s.requests);
        assert!(s.latency_us.p50 <= s.latency_us.p99 && s.latency_us.p99 <= s.latency_us.max);
        // Kept alive: one TCP connection each for the whole run.
        assert_eq!(server.accepted.load(Ordering::Relaxed), 4);
        assert!(s.loadtest_us_per_request.is_some());
        assert!(s.table().contains("404 ×"), "{}", s.table());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_token_goes_as_a_bearer() {
        let server = Server::start().await;
        let mut with = plan(server.addr, &["/auth"], 2);
        with.token = Some("t".into());
        let s = run(with).await.unwrap();
        assert!(s.requests > 0 && s.unexpected == 0, "{s:?}");
        assert_eq!(s.statuses.keys().collect::<Vec<_>>(), ["200"]);
        let s = run(plan(server.addr, &["/auth"], 2)).await.unwrap();
        assert_eq!(s.statuses.keys().collect::<Vec<_>>(), ["401"]);
        assert_eq!(s.unexpected, s.requests);
        assert!(s.first_unexpected.unwrap().contains("Unauthenticated"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn open_loop_sends_each_request_when_due() {
        let server = Server::start().await;
        let mut at_rate = plan(server.addr, &["/ok"], 4);
        at_rate.rate = Some(100.0);
        let s = run(at_rate).await.unwrap();
        // Exactly the schedule's: 100 due in the second measured.
        assert_eq!(s.requests, 100, "{s:?}");
        assert_eq!((s.failed, s.abandoned, s.late), (0, 0, 0), "{s:?}");
        assert!(s.latency_us.p50 < 50_000, "{s:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn open_loop_counts_the_wait_behind_slow_answers() {
        let server = Server::start().await;
        // 4 connections at 50 ms answer 80 a second; 200 a second are due, so they queue, and
        // each request's latency includes its wait for a free connection.
        let mut overloaded = plan(server.addr, &["/slow"], 4);
        overloaded.rate = Some(200.0);
        let s = run(overloaded).await.unwrap();
        assert_eq!(s.requests, 200, "{s:?}");
        assert!(s.late > 100, "{s:?}");
        assert!(s.latency_us.p50 > 200_000, "{s:?}");
        // A closed loop against the same answers sees only their 50 ms.
        let s = run(plan(server.addr, &["/slow"], 4)).await.unwrap();
        assert!(s.latency_us.p99 < 200_000, "{s:?}");
        assert!(s.requests_per_s < 100.0, "{s:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_refusing_target_counts_failures_and_says_why() {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let std::net::SocketAddr::V4(addr) = free.local_addr().unwrap() else {
            unreachable!()
        };
        drop(free);
        let s = run(plan(addr, &["/ok"], 2)).await.unwrap();
        assert_eq!(s.requests, 0);
        assert!(s.failed >= 10, "{s:?}");
        assert!(s.first_error.unwrap().contains("refused"));
        assert_eq!(s.target_us_per_request, None);
    }
}
