//! Command line: what fleet to simulate, against which loopback gateway, for how long.

use crate::command_action::CommandAction;
use crate::connect::Target;
use clap::Parser;
use std::net::{SocketAddr, SocketAddrV4};
use std::path::PathBuf;

#[derive(Parser, Debug, Clone)]
#[command(
    about = "Simulate a fleet of OCPP 1.6J or 2.0.1 chargers against a local cms and measure it",
    long_about = "Each charger is a real OCPP-J client on its own websocket \
                  (ws://TARGET/ocpp/{identity}, or wss://, subprotocol ocpp1.6 or ocpp2.0.1), with one call \
                  outstanding at a time. Loopback only; stops by itself after the ramp plus \
                  --duration."
)]
pub struct Args {
    /// The gateway, on loopback (an IPv4 address in 127.0.0.0/8): 127.0.0.1:9000 or
    /// ws://127.0.0.1:9000 for plain websockets, wss://127.0.0.1:9443 over TLS (needs --tls-ca).
    #[arg(long, default_value = "127.0.0.1:9000", value_parser = parse_target)]
    pub target: Target,
    /// With a wss:// target: trust the CA certificates of this PEM file (the server's
    /// certificate must name the target's address, subjectAltName IP:127.0.0.1, or
    /// --tls-server-name).
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// With a wss:// target: the name to expect in the server's certificate (default: the
    /// target's IP address).
    #[arg(long, value_name = "NAME")]
    pub tls_server_name: Option<String>,
    /// With a wss:// target: keep no TLS sessions, so every handshake is a full one (by
    /// default the chargers of a process share one session store and reconnects resume).
    #[arg(long)]
    pub no_resumption: bool,
    /// Measure connection set-up instead of a fleet: each of --chargers clients connects
    /// (TCP, TLS over wss, the websocket upgrade), closes and connects again, for --duration
    /// seconds after a second of warm-up; reports handshakes per second, their latency and,
    /// over wss, how many resumed. One process.
    #[arg(long)]
    pub handshakes: bool,
    /// Chargers to connect; identities are PREFIX00001, PREFIX00002, ...
    #[arg(long, default_value_t = 1000)]
    pub chargers: usize,
    /// Identity prefix, followed by the charger's number zero-padded to 5 digits.
    #[arg(long, default_value = "LOAD-")]
    pub prefix: String,
    /// New connections per second.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    pub ramp: u64,
    /// Seconds between heartbeats of each charger.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub heartbeat: u64,
    /// Seconds to hold the fleet once all connections were opened, then stop.
    #[arg(long, default_value_t = 10)]
    pub duration: u64,
    /// The gateway's pid, to report its RSS (VmRSS) at start and end; several gateways:
    /// `--pid 11,12,13` (their RSS is summed).
    #[arg(long, value_delimiter = ',')]
    pub pid: Vec<u32>,
    /// MeterValues per charger per second (may be fractional), from the end of the ramp on
    /// (transactions too); 0: idle except heartbeats;
    /// `max`: closed loop, the next one as soon as the last is answered.
    #[arg(long, default_value = "0", value_parser = parse_rate)]
    pub meter_rate: f64,
    /// Readings on a fixed schedule, as a fleet's chargers read their meters whatever the
    /// central system's pace: one answered late delays the next (one call outstanding, as
    /// OCPP-J asks) but not the schedule, and latency counts from when each reading was due,
    /// measured over the steady window only. Needs a finite `--meter-rate`.
    #[arg(long)]
    pub open_loop: bool,
    /// A process to price by name, `NAME=PID[,PID...]` (repeatable; pids under one name are
    /// summed): its CPU seconds over the steady window, CPU µs a frame answered, and RSS at the
    /// end, in the summary's `processes`.
    #[arg(long = "watch", value_name = "NAME=PID[,PID]", value_parser = parse_watch)]
    pub watch: Vec<Watched>,
    /// Send Authorize instead of each MeterValues, with tags `LT-TAG-1` ..= `LT-TAG-N` in a
    /// scattered order (what an RFID reader at a busy site does to the tag lookup); 0: off.
    /// Import the tags with `cms id-tag import` to measure lookups among N known tags.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub authorize_tags: u64,
    /// The OCPP version the chargers speak: 1.6 (subprotocol ocpp1.6) or 2.0.1 (ocpp2.0.1:
    /// MeterValues outside transactions, TransactionEvent Started/Updated/Ended in them).
    #[arg(long, value_enum, default_value_t = OcppVersion::V16)]
    pub ocpp_version: OcppVersion,
    /// Run StartTransaction, meter values, StopTransaction cycles.
    #[arg(long)]
    pub transactions: bool,
    /// Seconds each transaction lasts, with --transactions.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub tx_seconds: u64,
    /// Source addresses to spread sockets over: 127.0.0.1 ..= 127.0.0.N (~28k ports each);
    /// 0: as many as the fleet needs, one per 10,000 chargers.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=254))]
    pub source_addrs: u8,
    /// Load tester processes to run the fleet in (a process may open only so many files);
    /// 0: as many as this machine's open-file limit needs.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=256))]
    pub processes: u16,
    /// The number of the first charger (a process of a multi-process run plays a slice).
    #[arg(long, default_value_t = 1, hide = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub first: u64,
    /// Report to a parent process: JSON lines on stdout (samples, then the summary).
    #[arg(long, hide = true)]
    pub child: bool,
    /// Seconds to wait for the answer to a call (or for connect and handshake) before giving up.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
    /// Runtime worker threads (the gateway usually shares the machine).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// Print the summary as JSON on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// No progress line on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// Draw throughput and latency over time into this PNG file.
    #[arg(long, value_name = "FILE.png")]
    pub plot: Option<std::path::PathBuf>,
    /// Actions per charger per second (may be fractional) sent through cms's REST API from the
    /// go signal on (needs --api and --token; one process); 0: none.
    #[arg(long, default_value_t = 0.0, value_parser = parse_commands_rate)]
    pub commands_per_s: f64,
    /// cms's REST API on loopback, for --commands-per-s: http://127.0.0.1:8080.
    #[arg(long, value_name = "URL", value_parser = parse_api)]
    pub api: Option<SocketAddrV4>,
    /// A personal access token with chargers:read and chargers:write, for --api
    /// (`cms token create` prints one); with --http-reads, sent as the bearer of every request
    /// when given (with the scopes the paths need).
    #[arg(long, env = "CMS_LOADTEST_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// The action --commands-per-s sends; read-charger sends none but reads the charger
    /// (`GET /api/v3/chargers/{uuid}`): what the REST request alone costs.
    #[arg(long, value_enum, default_value_t = CommandAction::DataTransfer)]
    pub command: CommandAction,
    /// Connections to the API the commands share: at most this many requests at once. With
    /// --http-reads, the kept-alive connections kept busy (`--connections` too).
    #[arg(long, alias = "connections", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub api_connections: u64,
    /// Measure REST reads instead of a fleet: --api-connections kept-alive HTTP/1.1
    /// connections GET the --path's in turn from --http-base, each the next as soon as its
    /// answer is read (or at --rate), for --duration seconds after a second of warm-up; reports
    /// requests per second, statuses and latency. No chargers; one process.
    #[arg(long)]
    pub http_reads: bool,
    /// With --http-reads: the API on loopback, http://127.0.0.1:8080; several, comma-separated
    /// (replicas of one deployment): the connections are spread over them in turn.
    #[arg(long, value_name = "URL", value_delimiter = ',', value_parser = parse_api)]
    pub http_base: Vec<SocketAddrV4>,
    /// With --http-reads: a path to GET, its query included (/api/v3/chargers?page=2);
    /// repeatable, the requests take the paths in turn.
    #[arg(long = "path", value_name = "PATH", value_parser = parse_path)]
    pub paths: Vec<String>,
    /// With --http-reads: a file of paths to GET, one a line (after any --path).
    #[arg(long, value_name = "FILE")]
    pub paths_file: Option<PathBuf>,
    /// With --http-reads: requests per second in all, open loop (each due at its time, whatever
    /// became of the others; latency from when it was due); default: closed loop.
    #[arg(long, value_parser = parse_request_rate)]
    pub rate: Option<f64>,
    /// Observe instead of loading: probe chargers time their readings, connections and
    /// disconnections until every --http-base replica shows them; with --probe-watch and
    /// --probe-metrics, a time series of the processes and the consumers. Needs --http-base
    /// and --token (chargers:read, meter-values:read); one process, plain ws:// only.
    #[arg(id = "probe", long = "probe")]
    pub probe: bool,
    /// Probe chargers, PREFIX00001 ..= PREFIXN, registered beforehand (security profile 0).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub probe_chargers: u64,
    /// The probe chargers' identity prefix.
    #[arg(long, default_value = "PROBE-")]
    pub probe_prefix: String,
    /// A process to sample each second, NAME=PID[,PID...] (several pids are summed under NAME);
    /// repeatable.
    #[arg(long, value_name = "NAME=PID[,PID]", value_parser = parse_watch)]
    pub probe_watch: Vec<Watched>,
    /// Prometheus endpoints to scrape each second, http://127.0.0.1:PORT/metrics, comma-separated.
    #[arg(long, value_name = "URL", value_delimiter = ',', value_parser = parse_metrics_url)]
    pub probe_metrics: Vec<(SocketAddrV4, String)>,
}

/// The OCPP version a simulated charger speaks.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OcppVersion {
    #[value(name = "1.6")]
    V16,
    #[value(name = "2.0.1")]
    V201,
}

impl OcppVersion {
    /// The websocket subprotocol it offers.
    pub fn subprotocol(self) -> &'static str {
        match self {
            OcppVersion::V16 => "ocpp1.6",
            OcppVersion::V201 => "ocpp2.0.1",
        }
    }

    /// As `--ocpp-version` takes it.
    pub fn as_arg(self) -> &'static str {
        match self {
            OcppVersion::V16 => "1.6",
            OcppVersion::V201 => "2.0.1",
        }
    }
}

/// A `--target`: an IPv4 socket address whose host is in 127.0.0.0/8.
pub fn parse_loopback(s: &str) -> Result<SocketAddrV4, String> {
    let addr: SocketAddr = s
        .parse()
        .map_err(|_| format!("{s:?} is not IP:PORT (load tests target 127.0.0.0/8 only)"))?;
    match addr {
        SocketAddr::V4(v4) if v4.ip().octets()[0] == 127 => Ok(v4),
        _ => Err(format!(
            "host {} is not in 127.0.0.0/8: load tests target loopback only",
            addr.ip()
        )),
    }
}

/// A `--probe-metrics` URL: `http://` a loopback address, then a path (`/metrics` if none).
fn parse_metrics_url(s: &str) -> Result<(SocketAddrV4, String), String> {
    let rest = s
        .strip_prefix("http://")
        .ok_or_else(|| format!("{s:?} is not http://IP:PORT/PATH"))?;
    let (addr, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/metrics"),
    };
    Ok((parse_loopback(addr)?, path.to_string()))
}

/// A process to price by name (`--watch`, `--probe-watch`).
#[derive(Debug, Clone, PartialEq)]
pub struct Watched {
    pub name: String,
    pub pids: Vec<u32>,
}

/// `NAME=PID[,PID...]`.
pub fn parse_watch(s: &str) -> Result<Watched, String> {
    let (name, pids) = s
        .split_once('=')
        .filter(|(name, _)| !name.trim().is_empty())
        .ok_or_else(|| format!("expected NAME=PID[,PID...], got {s:?}"))?;
    let pids = pids
        .split(',')
        .map(|pid| {
            pid.trim()
                .parse::<u32>()
                .map_err(|_| format!("not a pid: {pid:?}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Watched {
        name: name.trim().to_string(),
        pids,
    })
}

/// A `--target`: `[ws://|wss://]IP:PORT` on loopback, a `/` after it allowed.
pub fn parse_target(s: &str) -> Result<Target, String> {
    let (tls, rest) = if let Some(rest) = s.strip_prefix("wss://") {
        (true, rest)
    } else if let Some(rest) = s.strip_prefix("ws://") {
        (false, rest)
    } else if s.contains("://") {
        return Err(format!("{s:?}: the scheme is ws:// or wss://"));
    } else {
        (false, s)
    };
    let addr = parse_loopback(rest.strip_suffix('/').unwrap_or(rest))?;
    Ok(Target { addr, tls })
}

/// An `--api`: `http://` and a loopback IPv4 address with its port, nothing after but `/`.
pub fn parse_api(s: &str) -> Result<SocketAddrV4, String> {
    let rest = s
        .strip_prefix("http://")
        .ok_or_else(|| format!("{s:?} is not http://IP:PORT"))?;
    parse_loopback(rest.strip_suffix('/').unwrap_or(rest))
}

/// A `--path`: an origin-form request target, `/` and what follows, its query included.
pub fn parse_path(s: &str) -> Result<String, String> {
    if !s.starts_with('/') {
        return Err(format!("{s:?} is not a path (it starts with /)"));
    }
    s.parse::<hyper::http::uri::PathAndQuery>()
        .map_err(|e| format!("{s:?} is not a path: {e}"))?;
    Ok(s.to_string())
}

/// A `--rate`: a finite number > 0.
fn parse_request_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(format!("{s:?} is not a rate (a number > 0)")),
    }
}

/// A `--commands-per-s`: a finite number >= 0.
fn parse_commands_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(r) if r.is_finite() && r >= 0.0 => Ok(r),
        _ => Err(format!("{s:?} is not a rate (a number >= 0)")),
    }
}

/// A `--meter-rate`: a number >= 0, or `max` (infinite: as fast as answers come).
fn parse_rate(s: &str) -> Result<f64, String> {
    if s == "max" {
        return Ok(f64::INFINITY);
    }
    match s.parse::<f64>() {
        Ok(r) if r.is_finite() && r >= 0.0 => Ok(r),
        _ => Err(format!("{s:?} is not a rate (a number >= 0, or max)")),
    }
}

/// Chargers per source address when `--source-addrs` is left to choose. An address has ~28k
/// ports, but the kernel's search for a free one slows down as they fill up (connects at 25k
/// per address took most of the simulator's CPU), so stay well below.
const CHARGERS_PER_SOURCE: usize = 10_000;

impl Args {
    /// The runtime the chargers or clients run on (`--threads` workers); `None` (the reason
    /// printed) when it cannot start.
    pub fn runtime(&self) -> Option<tokio::runtime::Runtime> {
        let built = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(self.threads as usize)
            .enable_all()
            .build();
        built
            .map_err(|e| eprintln!("cms-loadtest: cannot start the runtime: {e}"))
            .ok()
    }

    /// Prints a mode's summary: as JSON with `--json`, else as its table.
    pub fn print_summary(&self, summary: &impl serde::Serialize, table: impl FnOnce() -> String) {
        if !self.json {
            print!("{}", table());
            return;
        }
        match serde_json::to_string_pretty(summary) {
            Ok(json) => println!("{json}"),
            Err(e) => eprintln!("cms-loadtest: {e}"),
        }
    }

    /// What clap cannot check alone: TLS options only with a wss target, the command
    /// generator's needs, the handshake mode in one process, `--http-reads`' options with it.
    pub fn check(&self, processes: usize) -> Result<(), String> {
        // A mode of its own, which opens no charger: none of the fleet's checks apply.
        if self.http_reads {
            if self.handshakes || self.commands_per_s > 0.0 {
                return Err(
                    "--http-reads is a mode of its own: leave out --handshakes and \
                     --commands-per-s"
                        .into(),
                );
            }
            if self.http_base.is_empty() {
                return Err("--http-reads needs --http-base (http://127.0.0.1:PORT)".into());
            }
            if self.paths.is_empty() && self.paths_file.is_none() {
                return Err("--http-reads needs a --path or a --paths-file".into());
            }
            return Ok(());
        }
        if self.rate.is_some()
            || !self.http_base.is_empty()
            || !self.paths.is_empty()
            || self.paths_file.is_some()
        {
            return Err("--rate, --http-base, --path and --paths-file go with --http-reads".into());
        }
        if self.target.tls && self.tls_ca.is_none() {
            return Err(
                "a wss:// target needs --tls-ca (the CA that signed its certificate)".into(),
            );
        }
        if !self.target.tls
            && (self.tls_ca.is_some() || self.tls_server_name.is_some() || self.no_resumption)
        {
            return Err(
                "--tls-ca, --tls-server-name and --no-resumption are for a wss:// target".into(),
            );
        }
        if self.handshakes {
            if self.commands_per_s > 0.0 {
                return Err("--handshakes sends no calls: leave out --commands-per-s".into());
            }
            if processes > 1 {
                return Err(format!(
                    "--handshakes runs in one process, and {} clients need {processes} here: \
                     fewer --chargers, or raise ulimit -n",
                    self.chargers
                ));
            }
        }
        if self.open_loop && !(self.meter_rate > 0.0 && self.meter_rate.is_finite()) {
            return Err("--open-loop needs a --meter-rate above 0 and not max".into());
        }
        if self.commands_per_s > 0.0 {
            if self.api.is_none() || self.token.is_none() {
                return Err("--commands-per-s needs --api and --token".into());
            }
            if processes > 1 {
                return Err(format!(
                    "--commands-per-s runs in one process, and {} chargers need {processes} \
                     here: raise ulimit -n or pass --processes 1",
                    self.chargers
                ));
            }
        }
        Ok(())
    }

    /// `--http-reads`' paths: the `--path`s, then the lines of `--paths-file`.
    pub fn read_paths(&self) -> Result<Vec<String>, String> {
        let mut paths = self.paths.clone();
        if let Some(file) = &self.paths_file {
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            for (n, line) in text.lines().enumerate() {
                let line = line.trim();
                if !line.is_empty() {
                    let path = parse_path(line)
                        .map_err(|e| format!("{} line {}: {e}", file.display(), n + 1))?;
                    paths.push(path);
                }
            }
        }
        if paths.is_empty() {
            return Err("no paths to GET: --paths-file is empty".into());
        }
        Ok(paths)
    }

    /// The TLS client of a wss target, made once for every charger of this process.
    pub fn tls(&self) -> Result<Option<crate::tls::Tls>, String> {
        let (true, Some(ca)) = (self.target.tls, &self.tls_ca) else {
            return Ok(None);
        };
        let name = match &self.tls_server_name {
            Some(name) => name.clone(),
            None => crate::tls::Tls::ip_name(*self.target.addr.ip()),
        };
        crate::tls::Tls::new(ca, &name, !self.no_resumption, self.chargers).map(Some)
    }

    /// Source addresses in use: as given, or enough for the fleet.
    pub fn source_addrs(&self) -> u8 {
        match self.source_addrs {
            0 => self.chargers.div_ceil(CHARGERS_PER_SOURCE).clamp(1, 254) as u8,
            n => n,
        }
    }

    /// The source address of charger number `number` (1-based, over the whole fleet).
    pub fn source_of(&self, number: u64) -> std::net::Ipv4Addr {
        let k = (number - 1) % self.source_addrs() as u64;
        std::net::Ipv4Addr::new(127, 0, 0, 1 + k as u8)
    }
}

/// A charger's identity: the prefix and its 1-based number, zero-padded to 5 digits.
pub fn identity(prefix: &str, number: u64) -> String {
    format!("{prefix}{number:05}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_targets_only() {
        assert_eq!(
            parse_loopback("127.0.0.1:9000").unwrap(),
            "127.0.0.1:9000".parse().unwrap()
        );
        assert!(parse_loopback("127.255.3.4:1").is_ok());
        let err = parse_loopback("10.0.0.1:9000").unwrap_err();
        assert!(err.contains("127.0.0.0/8"), "{err}");
        assert!(parse_loopback("[::1]:9000").is_err());
        assert!(parse_loopback("128.0.0.1:9000").is_err());
        assert!(parse_loopback("localhost:9000").is_err());
        assert!(parse_loopback("127.0.0.1").is_err());
    }

    #[test]
    fn targets_are_ws_or_wss_on_loopback() {
        let addr: SocketAddrV4 = "127.0.0.1:9443".parse().unwrap();
        let plain = Target { addr, tls: false };
        let tls = Target { addr, tls: true };
        assert_eq!(parse_target("127.0.0.1:9443").unwrap(), plain);
        assert_eq!(parse_target("ws://127.0.0.1:9443").unwrap(), plain);
        assert_eq!(parse_target("ws://127.0.0.1:9443/").unwrap(), plain);
        assert_eq!(parse_target("wss://127.0.0.1:9443").unwrap(), tls);
        // What a target prints is what a child process is given: it must read back.
        assert_eq!(parse_target(&tls.to_string()).unwrap(), tls);
        assert_eq!(parse_target(&plain.to_string()).unwrap(), plain);
        assert!(
            parse_target("https://127.0.0.1:9443")
                .unwrap_err()
                .contains("wss://")
        );
        assert!(
            parse_target("wss://10.0.0.1:9443")
                .unwrap_err()
                .contains("loopback")
        );
        assert!(parse_target("wss://127.0.0.1:9443/ocpp").is_err());
    }

    #[test]
    fn tls_options_go_with_a_wss_target() {
        let parse = |extra: &[&str]| {
            let mut argv = vec!["cms-loadtest"];
            argv.extend_from_slice(extra);
            Args::try_parse_from(argv).unwrap()
        };
        let wss = ["--target", "wss://127.0.0.1:9443"];
        assert!(parse(&wss).check(1).unwrap_err().contains("--tls-ca"));
        let with_ca: Vec<&str> = wss.iter().copied().chain(["--tls-ca", "ca.pem"]).collect();
        assert!(parse(&with_ca).check(1).is_ok());
        let no_resumption: Vec<&str> = with_ca.iter().copied().chain(["--no-resumption"]).collect();
        assert!(parse(&no_resumption).no_resumption);
        for stray in [
            &["--tls-ca", "ca.pem"][..],
            &["--no-resumption"],
            &["--tls-server-name", "localhost"],
        ] {
            assert!(parse(stray).check(1).unwrap_err().contains("wss://"));
        }
        // No TLS client without a wss target; a CA file that is not there is named.
        assert!(parse(&[]).tls().unwrap().is_none());
        let missing: Vec<&str> = wss
            .iter()
            .copied()
            .chain(["--tls-ca", "/nonexistent/ca.pem"])
            .collect();
        assert!(
            parse(&missing)
                .tls()
                .unwrap_err()
                .contains("/nonexistent/ca.pem")
        );
    }

    #[test]
    fn handshakes_run_in_one_process_and_send_no_calls() {
        let parse = |extra: &[&str]| {
            let mut argv = vec!["cms-loadtest", "--handshakes", "--chargers", "32"];
            argv.extend_from_slice(extra);
            Args::try_parse_from(argv).unwrap()
        };
        assert!(parse(&[]).check(1).is_ok());
        assert!(parse(&[]).check(2).unwrap_err().contains("one process"));
        let commands = [
            "--commands-per-s",
            "1",
            "--api",
            "http://127.0.0.1:8080",
            "--token",
            "t",
        ];
        assert!(
            parse(&commands)
                .check(1)
                .unwrap_err()
                .contains("--commands-per-s")
        );
    }

    #[test]
    fn identities_match_import_files() {
        assert_eq!(identity("LOAD-", 1), "LOAD-00001");
        assert_eq!(identity("LOAD-", 99999), "LOAD-99999");
        assert_eq!(identity("X", 123456), "X123456");
    }

    #[test]
    fn source_addresses_follow_the_fleet_size() {
        let parse = |extra: &[&str]| {
            let mut argv = vec!["cms-loadtest"];
            argv.extend_from_slice(extra);
            Args::try_parse_from(argv).unwrap()
        };
        assert_eq!(parse(&["--chargers", "10000"]).source_addrs(), 1);
        assert_eq!(parse(&["--chargers", "10001"]).source_addrs(), 2);
        assert_eq!(parse(&["--chargers", "100000"]).source_addrs(), 10);
        let a = parse(&["--chargers", "100000", "--source-addrs", "3"]);
        assert_eq!(a.source_addrs(), 3);
        // Round robin over the whole fleet, so every slice of a multi-process run agrees.
        let sources: Vec<_> = (1..=4).map(|n| a.source_of(n).to_string()).collect();
        assert_eq!(
            sources,
            ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.1"]
        );
        let several = parse(&["--pid", "11,12,13"]);
        assert_eq!(several.pid, [11, 12, 13]);
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("0").unwrap(), 0.0);
        assert_eq!(parse_rate("2.5").unwrap(), 2.5);
        assert!(parse_rate("-1").is_err());
        assert!(parse_rate("inf").is_err());
        assert_eq!(parse_rate("max").unwrap(), f64::INFINITY);
    }

    #[test]
    fn the_api_is_on_loopback() {
        let a = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(parse_api("http://127.0.0.1:8080").unwrap(), a);
        assert_eq!(parse_api("http://127.0.0.1:8080/").unwrap(), a);
        assert!(parse_api("127.0.0.1:8080").is_err());
        assert!(parse_api("https://127.0.0.1:8080").is_err());
        assert!(parse_api("http://10.1.1.1:8080").is_err());
        assert!(parse_api("http://127.0.0.1:8080/api").is_err());
    }

    #[test]
    fn commands_need_the_api_a_token_and_one_process() {
        let parse = |extra: &[&str]| {
            let mut argv = vec!["cms-loadtest", "--chargers", "10"];
            argv.extend_from_slice(extra);
            Args::try_parse_from(argv).unwrap()
        };
        assert!(parse(&[]).check(2).is_ok(), "no commands, any processes");
        let rate = ["--commands-per-s", "0.5"];
        assert!(parse(&rate).check(1).is_err());
        let api = ["--api", "http://127.0.0.1:8080", "--token", "1|x"];
        let all: Vec<&str> = rate.iter().chain(&api).copied().collect();
        let a = parse(&all);
        assert!(a.check(1).is_ok());
        assert!(a.check(2).unwrap_err().contains("one process"));
        assert_eq!(a.commands_per_s, 0.5);
        assert_eq!(a.command, CommandAction::DataTransfer);
        assert!(Args::try_parse_from(["cms-loadtest", "--commands-per-s", "max"]).is_err());
    }

    #[test]
    fn http_reads_need_an_api_and_paths_and_nothing_of_the_fleet() {
        let parse = |extra: &[&str]| {
            let mut argv = vec!["cms-loadtest"];
            argv.extend_from_slice(extra);
            Args::try_parse_from(argv)
        };
        let base = ["--http-reads", "--http-base", "http://127.0.0.1:8080"];
        let a =
            parse(&[&base[..], &["--path", "/healthz", "--connections", "8"]].concat()).unwrap();
        assert!(a.check(1).is_ok());
        assert_eq!(
            (a.paths.as_slice(), a.api_connections),
            (&["/healthz".to_string()][..], 8)
        );
        assert_eq!(a.read_paths().unwrap(), ["/healthz"]);
        // Several replicas; an open-loop rate.
        let a = parse(&[
            "--http-reads",
            "--http-base",
            "http://127.0.0.1:8081,http://127.0.0.2:8082",
            "--path",
            "/api/v3/chargers?page=1",
            "--rate",
            "500",
        ])
        .unwrap();
        assert_eq!(a.http_base.len(), 2);
        assert_eq!(a.rate, Some(500.0));
        assert!(a.check(1).is_ok());
        assert!(parse(&[&base[..], &["--path", "/x", "--rate", "0"]].concat()).is_err());
        // What is missing is named.
        assert!(
            parse(&base)
                .unwrap()
                .check(1)
                .unwrap_err()
                .contains("--path")
        );
        let no_base = parse(&["--http-reads", "--path", "/x"]).unwrap();
        assert!(no_base.check(1).unwrap_err().contains("--http-base"));
        // Paths are origin-form, on loopback only.
        assert!(parse(&[&base[..], &["--path", "healthz"]].concat()).is_err());
        assert!(parse(&["--http-reads", "--http-base", "http://10.0.0.1:80"]).is_err());
        // The mode's options alone do not make the mode.
        let stray = parse(&["--path", "/x"]).unwrap();
        assert!(stray.check(1).unwrap_err().contains("--http-reads"));
        let both = parse(&[&base[..], &["--path", "/x", "--handshakes"]].concat()).unwrap();
        assert!(both.check(1).unwrap_err().contains("mode of its own"));
    }

    #[test]
    fn paths_come_from_a_file_too() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("paths.txt");
        std::fs::write(&file, "/a\n\n  /b?page=2  \n").unwrap();
        let file_arg = file.to_str().unwrap();
        let argv = [
            "cms-loadtest",
            "--http-reads",
            "--http-base",
            "http://127.0.0.1:1",
        ];
        let a = Args::try_parse_from(argv.iter().copied().chain([
            "--path",
            "/first",
            "--paths-file",
            file_arg,
        ]))
        .unwrap();
        assert!(a.check(1).is_ok());
        assert_eq!(a.read_paths().unwrap(), ["/first", "/a", "/b?page=2"]);
        std::fs::write(&file, "/a\nnot-a-path\n").unwrap();
        let err = a.read_paths().unwrap_err();
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn old_flags_still_parse() {
        let a = Args::try_parse_from([
            "cms-loadtest",
            "--target",
            "127.0.0.1:19300",
            "--chargers",
            "5",
            "--ramp",
            "10",
            "--heartbeat",
            "30",
            "--duration",
            "3",
            "--pid",
            "42",
        ])
        .unwrap();
        assert_eq!(a.chargers, 5);
        assert_eq!(a.pid, [42]);
        assert_eq!(a.meter_rate, 0.0);
        assert!(Args::try_parse_from(["cms-loadtest", "--target", "192.168.1.1:9000"]).is_err());
    }
}
