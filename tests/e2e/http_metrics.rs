//! `GET /metrics` on the REST API's side: requests by route template, method and status with
//! their latency, and the process's own CPU seconds and resident memory.

use crate::support::{Api, Cms, Metrics, eventually_within};
use std::time::{Duration, Instant};

const CHARGER: &str = "/api/v3/chargers/{charger_uuid}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_requests_are_counted_by_route_template_and_status() {
    let started = Instant::now();
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP-HTTP-METRICS-1").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let unknown = "5b0c3a8e-1d2f-4c6b-9e7a-0f1e2d3c4b5a";

    let known = api.get(&format!("/api/v3/chargers/{uuid}")).await.status;
    assert_eq!(
        api.get(&format!("/api/v3/chargers/{unknown}")).await.status,
        404
    );
    assert_eq!(
        api.get(&format!("/api/v3/chargers/{unknown}")).await.status,
        404
    );
    let stray = api.get(&format!("/no/such/path/{unknown}")).await.status;
    assert_eq!(stray, 404);

    // The middleware counts once the answer is made, a moment before the client reads it.
    let metrics = eventually_within(
        Duration::from_secs(5),
        "the charger requests under their route template",
        async || {
            let m = api.metrics().await;
            let seen = [
                requests(&m, CHARGER, &known.to_string()),
                requests(&m, CHARGER, "404"),
                requests(&m, "unmatched", "404"),
            ];
            match seen == [Some(1.0), Some(2.0), Some(1.0)] {
                true => Ok(m),
                false => Err(format!("[{known}, 404, unmatched 404] = {seen:?}")),
            }
        },
    )
    .await;
    let timed = metrics.sum(
        "cms_http_request_duration_seconds_count",
        &[("route", CHARGER), ("method", "GET")],
    );
    assert_eq!(timed, Some(3.0), "latency samples of {CHARGER}");
    assert!(
        metrics
            .sum(
                "cms_http_request_duration_seconds_bucket",
                &[("route", CHARGER), ("le", "+Inf")]
            )
            .is_some(),
        "cms_http_request_duration_seconds should be a histogram with buckets:\n{}",
        metrics.text
    );
    assert!(
        metrics
            .label_values()
            .all(|v| !v.contains(&uuid) && !v.contains(unknown) && !v.contains("/no/such")),
        "a label carries a raw path:\n{}",
        metrics.text
    );

    // The process's own figures, read every 5 s: plausible against what the kernel says now.
    // A figure read while the process was still starting may be half of today's resident
    // memory, so the memory is awaited too: within a factor of two of the kernel's at a read.
    let pid = cms.pid();
    let (cpu, rss) = eventually_within(
        Duration::from_secs(15),
        "process CPU seconds above zero, resident memory near the kernel's",
        async || {
            let m = api.metrics().await;
            let cpu = m.sum("process_cpu_seconds_total", &[]);
            let rss = m.sum("process_resident_memory_bytes", &[]);
            let (_, rss_now) = kernel_figures(pid);
            match (cpu, rss) {
                (Some(cpu), Some(rss))
                    if cpu > 0.0 && rss < 2.0 * rss_now && rss > rss_now / 2.0 =>
                {
                    Ok((cpu, rss))
                }
                _ => Err(format!(
                    "cpu {cpu:?}, rss {rss:?} against {rss_now} from /proc/{pid}/status"
                )),
            }
        },
    )
    .await;
    let (cpu_now, _) = kernel_figures(pid);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    assert!(
        cpu <= cpu_now + 0.01 && cpu <= started.elapsed().as_secs_f64() * cores,
        "process_cpu_seconds_total {cpu} against {cpu_now} s from /proc/{pid}/stat"
    );
    assert!(
        rss > 4.0 * 1024.0 * 1024.0,
        "process_resident_memory_bytes {rss}: less than the binary alone"
    );
    let m = api.metrics().await;
    let (open, max) = (
        m.sum("process_open_fds", &[]),
        m.sum("process_max_fds", &[]),
    );
    assert!(
        open.is_some_and(|o| o > 0.0) && max.is_some_and(|x| x >= open.unwrap()),
        "process_open_fds {open:?}, process_max_fds {max:?}"
    );
}

fn requests(m: &Metrics, route: &str, status: &str) -> Option<f64> {
    m.sum(
        "cms_http_requests_total",
        &[("route", route), ("method", "GET"), ("status", status)],
    )
}

/// CPU seconds and resident bytes of `pid`, as the kernel tells them.
fn kernel_figures(pid: u32) -> (f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    let (_, rest) = stat.rsplit_once(')').expect("a stat line");
    let fields: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|f| f.parse().expect("a number of ticks"))
        .collect();
    let cpu = (fields[0] + fields[1]) / 100.0;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS");
    (cpu, kib * 1024.0)
}
