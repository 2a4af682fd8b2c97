//! Command line: what fleet to simulate, against which loopback gateway, for how long.

use clap::Parser;
use std::net::{SocketAddr, SocketAddrV4};

#[derive(Parser, Debug, Clone)]
#[command(
    about = "Simulate a fleet of OCPP 1.6J chargers against a local cms and measure it",
    long_about = "Each charger is a real OCPP 1.6J client on its own websocket \
                  (ws://TARGET/ocpp/{identity}, subprotocol ocpp1.6), with one call outstanding \
                  at a time. Loopback only; stops by itself after the ramp plus --duration."
)]
pub struct Args {
    /// The gateway, on loopback (an IPv4 address in 127.0.0.0/8): 127.0.0.1:9000.
    #[arg(long, default_value = "127.0.0.1:9000", value_parser = parse_loopback)]
    pub target: SocketAddrV4,
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
    /// The gateway's pid, to report its RSS (VmRSS) at start and end.
    #[arg(long)]
    pub pid: Option<u32>,
    /// MeterValues per charger per second (may be fractional); 0: idle except heartbeats.
    #[arg(long, default_value_t = 0.0, value_parser = parse_rate)]
    pub meter_rate: f64,
    /// Run StartTransaction, meter values, StopTransaction cycles.
    #[arg(long)]
    pub transactions: bool,
    /// Seconds each transaction lasts, with --transactions.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub tx_seconds: u64,
    /// Source addresses to spread sockets over: 127.0.0.1 ..= 127.0.0.N (~28k ports each).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=254))]
    pub source_addrs: u8,
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

fn parse_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(r) if r.is_finite() && r >= 0.0 => Ok(r),
        _ => Err(format!("{s:?} is not a rate (a number >= 0)")),
    }
}

/// A charger's identity: the prefix and its 1-based number, zero-padded to 5 digits.
pub fn identity(prefix: &str, number: usize) -> String {
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
    fn identities_match_import_files() {
        assert_eq!(identity("LOAD-", 1), "LOAD-00001");
        assert_eq!(identity("LOAD-", 99999), "LOAD-99999");
        assert_eq!(identity("X", 123456), "X123456");
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("0").unwrap(), 0.0);
        assert_eq!(parse_rate("2.5").unwrap(), 2.5);
        assert!(parse_rate("-1").is_err());
        assert!(parse_rate("inf").is_err());
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
        assert_eq!(a.pid, Some(42));
        assert_eq!(a.meter_rate, 0.0);
        assert!(Args::try_parse_from(["cms-loadtest", "--target", "192.168.1.1:9000"]).is_err());
    }
}
