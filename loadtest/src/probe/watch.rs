//! What the probe samples each second besides its chargers: watched processes' RSS and CPU from
//! /proc, and the deployment's Prometheus metrics (consumer lag, records materialised, frames
//! in).

use crate::api::ApiClient;
use crate::args::Watched;
use crate::{cpu, progress};
use hyper::Method;
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::SocketAddrV4;
use std::time::Duration;
use tokio::time::Instant;

/// A watched process this second.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ProcessSample {
    pub rss_kb: Option<u64>,
    /// CPU seconds used since the last sample per second: cores busy.
    pub cpu_cores: Option<f64>,
    /// CPU seconds used since the first sample.
    pub cpu_s: Option<f64>,
}

/// The watched processes, with their CPU time at the first and last sample.
pub struct Processes {
    watches: Vec<Watched>,
    first: Vec<Option<f64>>,
    last: Vec<Option<(Instant, f64)>>,
}

impl Processes {
    pub fn new(watches: &[Watched]) -> Self {
        Processes {
            watches: watches.to_vec(),
            first: vec![None; watches.len()],
            last: vec![None; watches.len()],
        }
    }

    pub fn sample(&mut self) -> BTreeMap<String, ProcessSample> {
        let now = Instant::now();
        let mut samples = BTreeMap::new();
        for (n, w) in self.watches.iter().enumerate() {
            let cpu = cpu::total_cpu_s(&w.pids);
            let first = *self.first[n].get_or_insert_with(|| cpu.unwrap_or(0.0));
            let cores = match (self.last[n], cpu) {
                (Some((at, before)), Some(now_s)) => {
                    let dt = now.duration_since(at).as_secs_f64();
                    (dt > 0.0).then(|| (now_s - before).max(0.0) / dt)
                }
                _ => None,
            };
            if let Some(cpu) = cpu {
                self.last[n] = Some((now, cpu));
            }
            samples.insert(
                w.name.clone(),
                ProcessSample {
                    rss_kb: progress::total_rss_kib(&w.pids),
                    cpu_cores: cores,
                    cpu_s: cpu.map(|c| c - first),
                },
            );
        }
        samples
    }
}

/// What the metrics endpoints said this second, summed over them; `None`: none exports it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Scrape {
    pub lag: Option<f64>,
    pub materialised_per_s: Option<f64>,
    pub frames_in_per_s: Option<f64>,
}

/// One metrics endpoint and its counters' last values.
struct Endpoint {
    client: ApiClient,
    path: String,
    materialised: Rate,
    frames_in: Rate,
}

pub struct Metrics {
    endpoints: Vec<Endpoint>,
}

/// Longest a scrape may take (it is taken every second).
const SCRAPE_TIMEOUT: Duration = Duration::from_millis(800);

impl Metrics {
    pub fn new(urls: &[(SocketAddrV4, String)], token: &str) -> Self {
        let endpoints = urls
            .iter()
            .map(|(addr, path)| Endpoint {
                client: ApiClient::new(*addr, token),
                path: path.clone(),
                materialised: Rate::default(),
                frames_in: Rate::default(),
            })
            .collect();
        Metrics { endpoints }
    }

    /// Scrapes every endpoint at once; one that does not answer in time adds nothing.
    pub async fn scrape(&mut self) -> Scrape {
        let scrapes = self.endpoints.iter_mut().map(|e| async move {
            let get = e.client.request(Method::GET, &e.path, "");
            let text = match tokio::time::timeout(SCRAPE_TIMEOUT, get).await {
                Ok(Ok((200, body))) => String::from_utf8_lossy(&body).into_owned(),
                _ => return Scrape::default(),
            };
            let now = Instant::now();
            Scrape {
                lag: sum(&text, "cms_kafka_consumer_lag"),
                materialised_per_s: e
                    .materialised
                    .next(now, sum(&text, "cms_materialiser_records_total")),
                frames_in_per_s: e
                    .frames_in
                    .next(now, sum(&text, "cms_gateway_frames_in_total")),
            }
        });
        let add = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        futures_util::future::join_all(scrapes)
            .await
            .into_iter()
            .fold(Scrape::default(), |all, s| Scrape {
                lag: add(all.lag, s.lag),
                materialised_per_s: add(all.materialised_per_s, s.materialised_per_s),
                frames_in_per_s: add(all.frames_in_per_s, s.frames_in_per_s),
            })
    }
}

/// A counter's rate between successive scrapes.
#[derive(Debug, Default)]
struct Rate {
    last: Option<(Instant, f64)>,
}

impl Rate {
    /// The rate since the last value, if any; a counter that went down (a restart) counts
    /// from zero.
    fn next(&mut self, at: Instant, value: Option<f64>) -> Option<f64> {
        let value = value?;
        let last = self.last.replace((at, value));
        let (then, before) = last?;
        let dt = at.duration_since(then).as_secs_f64();
        let grown = if value >= before {
            value - before
        } else {
            value
        };
        (dt > 0.0).then(|| grown / dt)
    }
}

/// The sum of every sample of metric `name` in a Prometheus text exposition, whatever its
/// labels; `None` when it has none.
pub fn sum(text: &str, name: &str) -> Option<f64> {
    let mut total = None;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(name) else {
            continue;
        };
        let rest = if let Some(labels) = rest.strip_prefix('{') {
            match after_labels(labels) {
                Some(rest) => rest,
                None => continue,
            }
        } else if rest.starts_with([' ', '\t']) {
            rest
        } else {
            // Another metric whose name starts with this one (`_bucket`, `_sum`, ...).
            continue;
        };
        if let Some(Ok(v)) = rest.split_whitespace().next().map(str::parse::<f64>) {
            *total.get_or_insert(0.0) += v;
        }
    }
    total
}

/// What follows the closing `}` of a label set (a `}` inside a quoted value does not close).
fn after_labels(labels: &str) -> Option<&str> {
    let (mut quoted, mut escaped) = (false, false);
    for (at, c) in labels.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '}' if !quoted => return Some(&labels[at + 1..]),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"# HELP cms_kafka_consumer_lag records behind
# TYPE cms_kafka_consumer_lag gauge
cms_kafka_consumer_lag{topic="cms.frames",partition="0"} 12
cms_kafka_consumer_lag{topic="cms.frames",partition="1"} 30
cms_kafka_consumer_lag{topic="odd}\"name",partition="2"} 0.5
cms_kafka_consumer_lag_seconds 99
cms_gateway_frames_in_total{action="MeterValues"} 1000
cms_gateway_frames_in_total{action="Heartbeat"} 24 1700000000000
cms_materialiser_records_total 7
"#;

    #[test]
    fn a_metric_is_summed_over_its_label_sets_and_only_its_own() {
        assert_eq!(sum(TEXT, "cms_kafka_consumer_lag"), Some(42.5));
        assert_eq!(sum(TEXT, "cms_gateway_frames_in_total"), Some(1024.0));
        assert_eq!(sum(TEXT, "cms_materialiser_records_total"), Some(7.0));
        assert_eq!(sum(TEXT, "cms_materialiser_records"), None);
        assert_eq!(sum(TEXT, "cms_absent"), None);
    }

    #[test]
    fn a_counters_rate_is_per_second_between_scrapes() {
        let mut r = Rate::default();
        let t0 = Instant::now();
        assert_eq!(r.next(t0, Some(100.0)), None, "one value is no rate");
        let rate = r
            .next(t0 + Duration::from_millis(500), Some(150.0))
            .unwrap();
        assert!((rate - 100.0).abs() < 1e-9, "{rate}");
        assert_eq!(r.next(t0 + Duration::from_secs(1), None), None);
        // A restart: the counter starts again from zero.
        let rate = r.next(t0 + Duration::from_secs(2), Some(20.0)).unwrap();
        assert!((rate - 13.333).abs() < 0.01, "{rate}");
    }

    #[test]
    fn watches_name_their_pids() {
        use crate::args::parse_watch;
        assert_eq!(
            parse_watch("gateway=123,456").unwrap(),
            Watched {
                name: "gateway".into(),
                pids: vec![123, 456]
            }
        );
        assert!(parse_watch("gateway").is_err());
        assert!(parse_watch("=1").is_err());
        assert!(parse_watch("api=x").is_err());
    }

    #[test]
    fn this_process_is_watched() {
        let me = Watched {
            name: "me".into(),
            pids: vec![std::process::id()],
        };
        let mut p = Processes::new(&[me]);
        let first = p.sample();
        assert!(first["me"].rss_kb.unwrap() > 0);
        assert_eq!(first["me"].cpu_cores, None, "no rate from one sample");
        std::thread::sleep(Duration::from_millis(20));
        assert!(p.sample()["me"].cpu_cores.is_some());
    }
}
