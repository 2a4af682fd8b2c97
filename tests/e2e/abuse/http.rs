//! Abuse cases of the HTTP listener: clients that open connections and send their requests
//! slowly or never, and more connections than the listener takes. Each is cut off or refused
//! in bounded time while everyone else goes on being served.

use crate::support::{Cms, Metrics, REPLY_TIMEOUT, eventually};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Far beyond any timeout the tests set, so that only a server that never cuts off fails.
const CUT_OFF_BOUND: Duration = Duration::from_secs(15);

/// An HTTP/1.1 client on one raw TCP connection, to send exactly the bytes a stranger would.
pub(super) struct RawHttp {
    stream: TcpStream,
    /// Bytes read past the end of the last response.
    buffered: Vec<u8>,
}

/// A response as it arrived: status, headers (names lower-cased) and body.
#[derive(Debug)]
pub(super) struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        let found = self.headers.iter().find(|(n, _)| n == name);
        found.map(|(_, v)| v.as_str())
    }
}

impl RawHttp {
    /// Connects to `127.0.0.1:PORT`.
    pub async fn connect(addr: &str) -> RawHttp {
        let stream = tokio::time::timeout(REPLY_TIMEOUT, TcpStream::connect(addr))
            .await
            .unwrap_or_else(|_| panic!("connecting to {addr} timed out"))
            .unwrap_or_else(|e| panic!("connecting to {addr}: {e}"));
        RawHttp {
            stream,
            buffered: Vec::new(),
        }
    }

    pub async fn send(&mut self, bytes: &str) {
        self.stream
            .write_all(bytes.as_bytes())
            .await
            .expect("write to the server");
    }

    /// `GET path` on this connection, kept alive; returns the response.
    pub async fn get(&mut self, path: &str) -> RawResponse {
        self.send(&format!("GET {path} HTTP/1.1\r\nHost: cms\r\n\r\n"))
            .await;
        self.response().await
    }

    /// Reads one response (its body by `Content-Length`, else to the end of the connection).
    pub async fn response(&mut self) -> RawResponse {
        tokio::time::timeout(REPLY_TIMEOUT, self.read_response())
            .await
            .expect("no complete response in time")
    }

    async fn read_response(&mut self) -> RawResponse {
        let head_end = loop {
            if let Some(at) = self.buffered.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            assert!(
                self.fill().await,
                "the connection ended before a response head"
            );
        };
        let head = String::from_utf8_lossy(&self.buffered[..head_end]).to_string();
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap_or_default();
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not a status line: {status_line:?}"));
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let length = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .map(|(_, v)| v.parse::<usize>().expect("a numeric content-length"));
        self.buffered.drain(..head_end);
        match length {
            Some(length) => {
                while self.buffered.len() < length {
                    assert!(self.fill().await, "the connection ended inside a body");
                }
            }
            None => while self.fill().await {},
        }
        let body = self
            .buffered
            .drain(..length.unwrap_or(self.buffered.len()))
            .collect::<Vec<u8>>();
        RawResponse {
            status,
            headers,
            body: String::from_utf8_lossy(&body).to_string(),
        }
    }

    /// Reads more; false at the end of the connection (or when it was reset).
    async fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 4096];
        match self.stream.read(&mut chunk).await {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.buffered.extend_from_slice(&chunk[..n]);
                true
            }
        }
    }

    /// Waits (at most `limit`) for the server to end the connection; true if it did.
    pub async fn is_closed_within(&mut self, limit: Duration) -> bool {
        let closed = async { while self.fill().await {} };
        tokio::time::timeout(limit, closed).await.is_ok()
    }
}

fn http_addr(cms: &Cms) -> String {
    cms.http_url("").trim_start_matches("http://").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_stop_halfway_through_a_request_head_are_cut_off_while_others_are_served() {
    let cms = Cms::up_with(&["--http-header-timeout", "1s"]).await;
    let addr = http_addr(&cms);
    let mut slow = Vec::new();
    for _ in 0..3 {
        let mut client = RawHttp::connect(&addr).await;
        client.send("GET /healthz HTTP/1.1\r\nHost: cms\r\n").await;
        slow.push(client);
    }

    let mut normal = RawHttp::connect(&addr).await;
    let answer = normal.get("/healthz").await;
    assert_eq!(answer.status, 200, "a normal client meanwhile: {answer:?}");

    for (i, client) in slow.iter_mut().enumerate() {
        assert!(
            client.is_closed_within(CUT_OFF_BOUND).await,
            "slow client {i} still connected {CUT_OFF_BOUND:?} after half a request head"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_body_that_stops_arriving_is_answered_408_after_the_request_timeout() {
    let cms = Cms::up_with(&["--http-request-timeout", "1s"]).await;
    let mut client = RawHttp::connect(&http_addr(&cms)).await;
    client
        .send(concat!(
            "POST /oauth/token HTTP/1.1\r\nHost: cms\r\n",
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n",
            "grant_type=",
        ))
        .await;

    let answer = tokio::time::timeout(CUT_OFF_BOUND, client.read_response())
        .await
        .expect("no answer to a body that stopped arriving");
    assert_eq!(answer.status, 408, "{answer:?}");
    let body: serde_json::Value = serde_json::from_str(&answer.body).expect("a JSON body");
    assert!(
        body["message"].is_string(),
        "the reference's error shape: {body}"
    );
    assert!(
        client.is_closed_within(CUT_OFF_BOUND).await,
        "the connection stays open after a timed-out request"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_connection_cap_a_newcomer_gets_503_while_open_connections_are_still_served() {
    let cms = Cms::up_with(&["--http-max-connections", "2"]).await;
    let addr = http_addr(&cms);
    let mut first = RawHttp::connect(&addr).await;
    let mut second = RawHttp::connect(&addr).await;
    assert_eq!(first.get("/healthz").await.status, 200);
    assert_eq!(second.get("/healthz").await.status, 200);

    let mut third = RawHttp::connect(&addr).await;
    let refused = third.get("/healthz").await;
    assert_eq!(refused.status, 503, "{refused:?}");
    let retry_after = refused.header("retry-after").map(str::parse::<u64>);
    assert!(
        matches!(retry_after, Some(Ok(s)) if s > 0),
        "Retry-After in seconds: {refused:?}"
    );
    assert_eq!(refused.header("connection"), Some("close"), "{refused:?}");
    let body: serde_json::Value = serde_json::from_str(&refused.body).expect("a JSON body");
    assert!(
        body["message"].is_string(),
        "the reference's error shape: {body}"
    );
    assert!(third.is_closed_within(CUT_OFF_BOUND).await);

    // The connections already open go on being served, keep-alive.
    assert_eq!(first.get("/healthz").await.status, 200);
    let metrics = second.get("/metrics").await;
    assert_eq!(metrics.status, 200);
    let refusals = Metrics::parse(&metrics.body).sum("cms_http_connections_refused_total", &[]);
    assert_eq!(refusals, Some(1.0), "refusals counted in /metrics");

    // One leaves: a newcomer gets in.
    drop(first);
    eventually("a new connection served once one closed", async || {
        let answer = RawHttp::connect(&addr).await.get("/healthz").await;
        match answer.status {
            200 => Ok(()),
            _ => Err(format!("{answer:?}")),
        }
    })
    .await;
}
