//! `cms-loadtest`: opens many charger connections to a local gateway, boots them, keeps them
//! alive with heartbeats, and reports how many held and what the gateway's memory did.
//! Loopback only, bounded in count and time: it stops by itself at `--duration`.

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::net::TcpSocket;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

#[derive(Parser, Debug)]
#[command(about = "Hold many idle OCPP 1.6J chargers against a local cms and measure its memory")]
struct Args {
    /// The gateway, on loopback: 127.0.0.1:9000.
    #[arg(long, default_value = "127.0.0.1:9000")]
    target: SocketAddr,
    /// Chargers to connect; identities are PREFIX00001, PREFIX00002, ...
    #[arg(long, default_value_t = 1000)]
    chargers: usize,
    #[arg(long, default_value = "LOAD-")]
    prefix: String,
    /// New connections per second.
    #[arg(long, default_value_t = 2000)]
    ramp: u64,
    /// Seconds between heartbeats of each charger.
    #[arg(long, default_value_t = 60)]
    heartbeat: u64,
    /// Seconds to hold the fleet once connected, then stop.
    #[arg(long, default_value_t = 10)]
    duration: u64,
    /// The gateway's pid, to report its RSS before and after.
    #[arg(long)]
    pid: Option<u32>,
}

#[derive(Default)]
struct Counters {
    connected: AtomicUsize,
    failed: AtomicUsize,
    booted: AtomicUsize,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = Args::parse();
    assert!(
        args.target.ip().is_loopback(),
        "load tests target loopback only"
    );
    let rss_before = args.pid.and_then(rss_kib);
    let counters = Arc::new(Counters::default());
    let stop_at = Instant::now()
        + Duration::from_secs_f64(args.chargers as f64 / args.ramp.max(1) as f64)
        + Duration::from_secs(args.duration);
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(args.chargers);
    for n in 0..args.chargers {
        let identity = format!("{}{:05}", args.prefix, n + 1);
        // ~28k ephemeral ports per source address: spread over 127.0.0.1, .2, ...
        let source = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1 + (n / 20_000) as u8));
        tasks.push(tokio::spawn(charger(
            args.target,
            source,
            identity,
            args.heartbeat,
            stop_at,
            counters.clone(),
        )));
        let due = started + Duration::from_secs_f64((n + 1) as f64 / args.ramp.max(1) as f64);
        tokio::time::sleep_until(due.into()).await;
    }
    let wait_booted = Instant::now() + Duration::from_secs(30);
    while counters.booted.load(Ordering::Relaxed) + counters.failed.load(Ordering::Relaxed)
        < args.chargers
        && Instant::now() < wait_booted
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let boot_secs = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_after = args.pid.and_then(rss_kib);
    println!(
        "chargers connected: {}",
        counters.connected.load(Ordering::Relaxed)
    );
    println!(
        "chargers booted:    {} (in {boot_secs:.1} s)",
        counters.booted.load(Ordering::Relaxed)
    );
    println!(
        "connections failed: {}",
        counters.failed.load(Ordering::Relaxed)
    );
    if let (Some(before), Some(after)) = (rss_before, rss_after) {
        let held = counters.connected.load(Ordering::Relaxed).max(1);
        let per = (after.saturating_sub(before)) as f64 * 1024.0 / held as f64;
        println!(
            "gateway RSS: {before} KiB before, {after} KiB with the fleet: {per:.0} bytes per connection"
        );
    }
    for task in tasks {
        let _ = task.await;
    }
}

async fn charger(
    target: SocketAddr,
    source: IpAddr,
    identity: String,
    heartbeat: u64,
    stop_at: Instant,
    counters: Arc<Counters>,
) {
    let Ok(socket) = TcpSocket::new_v4() else {
        return fail(&counters);
    };
    if socket.bind(SocketAddr::new(source, 0)).is_err() {
        return fail(&counters);
    }
    let Ok(stream) = socket.connect(target).await else {
        return fail(&counters);
    };
    let url = format!("ws://{target}/ocpp/{identity}");
    let Ok(mut request) = url.into_client_request() else {
        return fail(&counters);
    };
    request
        .headers_mut()
        .insert("Sec-WebSocket-Protocol", "ocpp1.6".parse().unwrap());
    let Ok((mut ws, _)) = tokio_tungstenite::client_async(request, stream).await else {
        return fail(&counters);
    };
    counters.connected.fetch_add(1, Ordering::Relaxed);
    let boot = r#"[2,"boot","BootNotification",{"chargePointVendor":"cms","chargePointModel":"loadtest"}]"#;
    if ws.send(Message::text(boot)).await.is_ok() && matches!(ws.next().await, Some(Ok(_))) {
        counters.booted.fetch_add(1, Ordering::Relaxed);
    }
    let mut beat = tokio::time::interval(Duration::from_secs(heartbeat.max(1)));
    beat.tick().await;
    let stop = tokio::time::sleep_until(stop_at.into());
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = beat.tick() => {
                if ws.send(Message::text(r#"[2,"hb","Heartbeat",{}]"#)).await.is_err() { break }
            }
            // Keep reading so pings are answered and heartbeat answers are consumed.
            next = ws.next() => if !matches!(next, Some(Ok(_))) { break },
        }
    }
    let _ = ws.close(None).await;
}

fn fail(counters: &Counters) {
    counters.failed.fetch_add(1, Ordering::Relaxed);
}

/// Resident memory of a process, from /proc.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
