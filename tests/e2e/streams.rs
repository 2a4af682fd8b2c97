//! Live streams of latest meter values (docs/api.md "Live streams"): Server-Sent Events read
//! by a real HTTP client, the current value first, each new reading pushed, `Last-Event-ID`
//! resuming, a site's stream, a client too slow to read dropped without slowing others, and a
//! stream ended at its maximum life resumed without losing a value.

use crate::support::rest::operators_site;
use crate::support::{Api, Charger, Cms, eventually};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One `meter-value` event: its id (`<epoch>-<seq>`), its sequence number and its data.
#[derive(Debug)]
struct Received {
    id: String,
    seq: u64,
    data: Value,
}

/// An SSE response read event by event.
struct EventStream {
    response: reqwest::Response,
    pending: String,
    /// The reconnection time the server gave (`retry:`, in ms), once read.
    retry: Option<u64>,
}

impl EventStream {
    async fn open(cms: &Cms, token: &str, path: &str, last_event_id: Option<&str>) -> EventStream {
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let mut request = client
            .get(cms.http_url(path))
            .header("Authorization", format!("Bearer {token}"));
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id);
        }
        let response = request.send().await.expect("the stream opens");
        assert_eq!(response.status(), 200, "{path}");
        let kind = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(kind.starts_with("text/event-stream"), "{kind}");
        EventStream {
            response,
            pending: String::new(),
            retry: None,
        }
    }

    /// The next `meter-value` event within `limit` (keep-alive comments skipped).
    async fn next(&mut self, limit: Duration) -> Option<Received> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(end) = self.pending.find("\n\n") {
                let block: String = self.pending.drain(..end + 2).collect();
                let field = |name: &str| {
                    block
                        .lines()
                        .find_map(|l| l.strip_prefix(name))
                        .map(str::trim)
                        .map(str::to_string)
                };
                if let Some(retry) = field("retry:") {
                    self.retry = retry.parse().ok();
                }
                if field("event:").as_deref() == Some("meter-value") {
                    let id = field("id:")?;
                    return Some(Received {
                        seq: id.split_once('-')?.1.parse().ok()?,
                        id,
                        data: serde_json::from_str(&field("data:")?).ok()?,
                    });
                }
                continue;
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk()).await;
            match chunk {
                Ok(Ok(Some(bytes))) => self.pending.push_str(&String::from_utf8_lossy(&bytes)),
                _ => return None,
            }
        }
    }
}

impl EventStream {
    /// Whether the response ends within `limit` (what is still on its way read and dropped).
    async fn ends_within(&mut self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Ok(Ok(Some(_))) => continue,
                Ok(Ok(None) | Err(_)) => return true,
                Err(_) => return false,
            }
        }
    }
}

fn energy(wh: u32, at: &str) -> Value {
    json!({"connectorId": 1, "meterValue": [{"timestamp": at, "sampledValue": [{"value": wh.to_string()}]}]})
}

/// Waits until connector 1's latest reading is `wh`.
async fn wait_for_value(api: &Api, uuid: &str, wh: &str) {
    let path = format!("/api/v3/chargers/{uuid}/connectors/1/latest-metervalue");
    eventually(&format!("the reading {wh}"), async || {
        let answer = api.get(&path).await;
        match answer.body.contains(&format!("\"{wh}\"")) {
            true => Ok(()),
            false => Err(answer.body),
        }
    })
    .await;
}

fn value_of(event: &Received) -> &str {
    event.data["meterValue"][0]["sampledValue"][0]["value"]
        .as_str()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_sends_the_current_value_then_each_new_one_and_resumes() {
    let mut cms = Cms::up().await;
    let uuid = cms.add_charger("CP-LIVE").await;
    let token = cms.operator_token().await;
    let api = Api::new(&cms, &token);
    let mut charger = Charger::connect_and_boot(&cms, "CP-LIVE", "1.0.0").await;
    charger
        .call_result("MeterValues", energy(1000, "2026-05-01T10:00:00Z"))
        .await;
    let path = format!("/api/v3/chargers/{uuid}/connectors/1/latest-metervalue");
    eventually("the first reading", async || {
        let answer = api.get(&path).await;
        match answer.body.contains("1000") {
            true => Ok(()),
            false => Err(answer.body),
        }
    })
    .await;

    let stream_path = format!("{path}/stream");
    let mut stream = EventStream::open(&cms, &token, &stream_path, None).await;
    let first = stream
        .next(Duration::from_secs(5))
        .await
        .expect("the current value");
    assert_eq!(value_of(&first), "1000");
    assert_eq!(first.data["charger_uuid"], uuid.as_str());
    assert_eq!(first.data["connectorId"], 1);

    // Pushed when it arrives: measured from the CALLRESULT to the event.
    charger
        .call_result("MeterValues", energy(1200, "2026-05-01T10:01:00Z"))
        .await;
    let answered = Instant::now();
    let second = stream
        .next(Duration::from_secs(5))
        .await
        .expect("the new value");
    eprintln!(
        "stream latency after the CALLRESULT: {:?}",
        answered.elapsed()
    );
    assert_eq!(value_of(&second), "1200");
    assert!(second.seq > first.seq);

    // Resumed after the last event seen: nothing old again, the next new one.
    let mut resumed = EventStream::open(&cms, &token, &stream_path, Some(&second.id)).await;
    charger
        .call_result("MeterValues", energy(1300, "2026-05-01T10:02:00Z"))
        .await;
    let next = resumed
        .next(Duration::from_secs(5))
        .await
        .expect("the next value");
    assert_eq!(value_of(&next), "1300", "not the 1200 seen before");

    // An id this process did not number (another replica's, an earlier run's): the current
    // value again, rather than nothing until the next reading.
    let mut elsewhere = EventStream::open(&cms, &token, &stream_path, Some("0badcafe-99999")).await;
    let current = elsewhere
        .next(Duration::from_secs(5))
        .await
        .expect("the current value");
    assert_eq!(value_of(&current), "1300");

    // A stream opened with a token that is then revoked ends (checked every second).
    let created = api
        .expect(
            201,
            "POST",
            "/api/v3/user/tokens",
            Some(&json!({"name": "dashboard", "scopes": ["meter-values:read"]})),
        )
        .await;
    let dashboard = created["plain_text_token"].as_str().unwrap().to_string();
    let token_id = created["data"]["id"].as_i64().unwrap();
    let mut revoked = EventStream::open(&cms, &dashboard, &stream_path, None).await;
    revoked
        .next(Duration::from_secs(5))
        .await
        .expect("the current value");
    let path = format!("/api/v3/user/tokens/{token_id}");
    api.expect(200, "DELETE", &path, None).await;
    assert!(
        revoked.ends_within(Duration::from_secs(5)).await,
        "the revoked token's stream ended"
    );

    // A site's stream: every connector of its chargers.
    let site = operators_site(&api).await;
    let site_path = format!("/api/v3/sites/{site}/latest-metervalues/stream");
    let mut site_stream = EventStream::open(&cms, &token, &site_path, None).await;
    let current = site_stream
        .next(Duration::from_secs(5))
        .await
        .expect("a value");
    assert_eq!(current.data["charger_uuid"], uuid.as_str());
    assert_eq!(value_of(&current), "1300");

    // Who may not read it is refused before any event.
    let stranger = cms.guest_token("stranger@example.com").await;
    let refused = Api::new(&cms, &stranger).get(&stream_path).await;
    assert_eq!(refused.status, 404);

    // Open streams do not hold the server up: it stops, and they end.
    drop(charger);
    assert!(cms.terminate().await.success());
    assert!(
        site_stream.next(Duration::from_secs(5)).await.is_none(),
        "the stream ended with the server"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_too_slow_to_read_is_dropped_and_the_others_keep_up() {
    let cms = Cms::up_with(&["--stream-buffer", "512"]).await;
    cms.add_charger("CP-FLOOD").await;
    let token = cms.operator_token().await;
    let api = Api::new(&cms, &token);
    let mut charger = Charger::connect_and_boot(&cms, "CP-FLOOD", "1.0.0").await;
    let site = operators_site(&api).await;
    let path = format!("/api/v3/sites/{site}/latest-metervalues/stream");

    // A client that asks and never reads, with as small a window as the kernel allows.
    let base = cms.http_url("");
    let addr: std::net::SocketAddr = base.trim_start_matches("http://").parse().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(1024).unwrap();
    let mut slow = socket.connect(addr).await.expect("connect");
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: cms\r\nAuthorization: Bearer {token}\r\n\r\n");
    slow.write_all(request.as_bytes()).await.unwrap();

    // A client that reads all along, in a task of its own.
    const READINGS: u32 = 4_000;
    let mut reader = EventStream::open(&cms, &token, &path, None).await;
    let reading = tokio::spawn(async move {
        let mut seen = 0;
        while let Some(event) = reader.next(Duration::from_secs(10)).await {
            seen = seen.max(value_of(&event).parse().unwrap_or(0));
            if seen == READINGS {
                break;
            }
        }
        seen
    });
    // Readings of 99 connectors in turn (the materialiser keeps the newest per connector of
    // each batch, so one connector would give a change a batch), 7 KB each (the register,
    // then voltages): past what the kernel holds for the silent client (its send buffer grows
    // to `net.ipv4.tcp_wmem`'s 4 MiB), the HTTP layer's 64 KiB and the 512 queued events.
    for n in 1..=READINGS {
        let at = format!(
            "2026-05-01T{:02}:{:02}:{:02}Z",
            10 + n / 3600,
            n / 60 % 60,
            n % 60
        );
        let mut reading = energy(n, &at);
        reading["connectorId"] = json!(n % 99 + 1);
        let samples = reading["meterValue"][0]["sampledValue"]
            .as_array_mut()
            .unwrap();
        for _ in 0..120 {
            samples.push(
                json!({"value": "230.1", "measurand": "Voltage", "phase": "L1-N", "unit": "V"}),
            );
        }
        charger.call_result("MeterValues", reading).await;
    }
    assert_eq!(
        reading.await.unwrap(),
        READINGS,
        "the reader kept up to the last"
    );
    // Dropped: once it reads again, its response ends (the last chunk, or the connection
    // closed) after what was already on its way, instead of going on. What was on its way is
    // a few MB through a 1 KB window: slow on a busy machine, so the bound is wide; a stream
    // that was not dropped never ends (no more readings come), so only such a server fails.
    let mut seen = Vec::new();
    let ended = tokio::time::timeout(Duration::from_secs(60), async {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            match slow.read(&mut buffer).await {
                Ok(0) | Err(_) => return true,
                Ok(n) => {
                    seen.extend_from_slice(&buffer[..n]);
                    if seen.ends_with(b"0\r\n\r\n") {
                        return true;
                    }
                }
            }
        }
    })
    .await
    .unwrap_or(false);
    assert!(
        ended,
        "the silent client's stream ended ({} bytes read)",
        seen.len()
    );
    let metrics = Api::new(&cms, &token).metrics().await;
    let dropped = metrics.sum("cms_api_stream_dropped_total", &[("reason", "slow")]);
    assert_eq!(
        dropped,
        Some(1.0),
        "counted once, the reader not among them"
    );
    drop(slow);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_ends_at_its_max_life_and_resumes_with_last_event_id_without_losing_a_value() {
    let cms = Cms::up_with(&["--stream-max-life", "2s"]).await;
    let uuid = cms.add_charger("CP-LIFE").await;
    let token = cms.operator_token().await;
    let api = Api::new(&cms, &token);
    let mut charger = Charger::connect_and_boot(&cms, "CP-LIFE", "1.0.0").await;
    charger
        .call_result("MeterValues", energy(1000, "2026-05-01T10:00:00Z"))
        .await;
    wait_for_value(&api, &uuid, "1000").await;
    let path = format!("/api/v3/chargers/{uuid}/connectors/1/latest-metervalue/stream");

    let mut stream = EventStream::open(&cms, &token, &path, None).await;
    let first = stream
        .next(Duration::from_secs(5))
        .await
        .expect("the current value");
    assert_eq!(value_of(&first), "1000");
    charger
        .call_result("MeterValues", energy(1100, "2026-05-01T10:01:00Z"))
        .await;
    let seen = stream
        .next(Duration::from_secs(5))
        .await
        .expect("the new value");
    assert_eq!(value_of(&seen), "1100");
    assert!(
        stream.retry.is_some_and(|ms| ms > 0),
        "the server tells the client how soon to reconnect (`retry:`)"
    );
    // Ends by itself at its maximum life (2 s, less at most a tenth), whatever the client.
    assert!(
        stream.ends_within(Duration::from_secs(10)).await,
        "the stream ended at its maximum life"
    );

    // A reading while the client is away, then its reconnection from the last event it saw:
    // that reading, and not the one seen before.
    charger
        .call_result("MeterValues", energy(1200, "2026-05-01T10:02:00Z"))
        .await;
    wait_for_value(&api, &uuid, "1200").await;
    let mut resumed = EventStream::open(&cms, &token, &path, Some(&seen.id)).await;
    let next = resumed
        .next(Duration::from_secs(5))
        .await
        .expect("the missed value");
    assert_eq!(value_of(&next), "1200", "not the 1100 seen before");
    charger
        .call_result("MeterValues", energy(1300, "2026-05-01T10:03:00Z"))
        .await;
    let live = resumed
        .next(Duration::from_secs(5))
        .await
        .expect("the next value");
    assert_eq!(value_of(&live), "1300");

    let metrics = api.metrics().await;
    let ended = metrics.sum("cms_api_stream_dropped_total", &[("reason", "max_life")]);
    assert!(ended.is_some_and(|n| n >= 1.0), "counted: {ended:?}");
}
