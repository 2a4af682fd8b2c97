//! Abuse cases of the live streams: one token opening streams without end, and more streams
//! than the process takes in all. Each held a connection for ever, so 600 of them took every
//! slot of the HTTP listener and `/healthz` answered 503 (issue 40). Past either limit a new
//! stream is now refused at once with `Retry-After`, and everyone else, probes included, is
//! served meanwhile.

use crate::support::rest::operators_site;
use crate::support::{Api, Cms, Metrics, eventually_within, run_cli};
use futures_util::StreamExt;
use serde_json::Value;
use std::time::Duration;

/// Far beyond what 600 requests on the loopback take, so that only a server that hangs fails.
const ANSWERS_BOUND: Duration = Duration::from_secs(60);
/// A stream closed by its client gives its place back once the server notices: at once, or at
/// the latest with the next keep-alive comment (every 15 s).
const RELEASE_BOUND: Duration = Duration::from_secs(20);

/// What a request for a stream got: the stream, kept open, or a refusal.
enum Opened {
    Stream(#[allow(dead_code)] reqwest::Response),
    Refused {
        status: u16,
        retry_after: Option<u64>,
        body: Value,
    },
}

async fn open(client: &reqwest::Client, url: &str, token: &str) -> Opened {
    let response = client.get(url).bearer_auth(token).send().await;
    let response = response.expect("an answer to a stream request");
    match response.status().as_u16() {
        200 => Opened::Stream(response),
        status => {
            let retry_after = response.headers().get("retry-after");
            let retry_after = retry_after.and_then(|v| v.to_str().ok()?.parse().ok());
            let body = response.json().await.unwrap_or_default();
            Opened::Refused {
                status,
                retry_after,
                body,
            }
        }
    }
}

/// At most this many stream requests in flight: the client keeps every stream it got and
/// reuses the connection of every refusal, so the connections it holds stay below the REST
/// listener's cap (512), whose own refusal (503, or a close in a flood) is tested elsewhere.
const IN_FLIGHT: usize = 64;

/// Opens `n` streams, [`IN_FLIGHT`] at a time; returns those open and the refusals.
async fn open_many(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    n: usize,
) -> (Vec<Opened>, Vec<(u16, Option<u64>, Value)>) {
    let all = futures_util::stream::iter((0..n).map(|_| open(client, url, token)))
        .buffer_unordered(IN_FLIGHT)
        .collect::<Vec<_>>();
    let all = tokio::time::timeout(ANSWERS_BOUND, all).await;
    let (mut open, mut refused) = (Vec::new(), Vec::new());
    for opened in all.expect("every stream request answered in time") {
        match opened {
            Opened::Refused {
                status,
                retry_after,
                body,
            } => refused.push((status, retry_after, body)),
            stream => open.push(stream),
        }
    }
    (open, refused)
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

async fn ops_metrics(cms: &Cms) -> Metrics {
    let answer = client().get(cms.ops_url("/metrics")).send().await.unwrap();
    assert_eq!(answer.status(), 200, "/metrics on the ops listener");
    Metrics::parse(&answer.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_token_opening_600_streams_is_refused_past_its_limit_and_everyone_else_is_served() {
    let cms = Cms::up_with(&["--ops-addr", "127.0.0.1:0"]).await;
    let uuid = cms.add_charger("CP-STREAMS-600").await;
    let token = cms.operator_token().await;
    let api = Api::new(&cms, &token);
    let site = operators_site(&api).await;
    let url = cms.http_url(&format!("/api/v3/sites/{site}/latest-metervalues/stream"));
    let metrics = ops_metrics(&cms).await;
    assert_eq!(
        metrics.sum("cms_api_streams_refused_total", &[("reason", "user")]),
        Some(0.0),
        "registered at start"
    );

    let client = client();
    let (mut streams, refused) = open_many(&client, &url, &token, 600).await;
    let statuses: Vec<u16> = refused.iter().map(|(s, _, _)| *s).collect();
    assert_eq!(
        streams.len(),
        10,
        "the default limit of streams per user; the others answered {statuses:?}"
    );
    assert_eq!(refused.len(), 590);
    for (status, retry_after, body) in &refused {
        assert_eq!(*status, 429, "{body}");
        assert!(matches!(retry_after, Some(1..)), "Retry-After: {body}");
        assert!(body["message"].is_string(), "the reference's shape: {body}");
    }

    // Meanwhile everyone else is served: the probes on both listeners, an ordinary request.
    let healthz = client.get(cms.http_url("/healthz")).send().await.unwrap();
    assert_eq!(healthz.status(), 200, "/healthz on the REST listener");
    let charger = api.get(&format!("/api/v3/chargers/{uuid}")).await;
    assert_eq!(charger.status, 200, "an ordinary request: {}", charger.body);
    for path in ["/healthz", "/readyz"] {
        let probe = client.get(cms.ops_url(path)).send().await.unwrap();
        assert_eq!(probe.status(), 200, "{path} on the ops listener");
    }
    let metrics = ops_metrics(&cms).await;
    assert_eq!(metrics.sum("cms_api_streams_open", &[]), Some(10.0));
    let refusals = |reason| metrics.sum("cms_api_streams_refused_total", &[("reason", reason)]);
    assert_eq!(
        (refusals("user"), refusals("total")),
        (Some(590.0), Some(0.0))
    );

    // A stream closed gives its place back.
    drop(streams.pop());
    let reopened = eventually_within(
        RELEASE_BOUND,
        "a stream once one closed",
        async || match open(&client, &url, &token).await {
            Opened::Refused { status, body, .. } => Err(format!("{status} {body}")),
            stream => Ok(stream),
        },
    )
    .await;
    drop((reopened, streams));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_total_of_streams_a_new_one_is_refused_503_while_requests_are_served() {
    let cms = Cms::up_with(&["--stream-max-total", "3"]).await;
    let uuid = cms.add_charger("CP-STREAMS-TOTAL").await;
    let token = cms.operator_token().await;
    let api = Api::new(&cms, &token);
    let site = operators_site(&api).await;
    let url = cms.http_url(&format!("/api/v3/sites/{site}/latest-metervalues/stream"));
    let connector = format!("/api/v3/chargers/{uuid}/connectors/1/latest-metervalue/stream");

    let client = client();
    let (mut streams, refused) = open_many(&client, &url, &token, 5).await;
    assert_eq!(streams.len(), 3, "the total: {refused:?}");
    for (status, retry_after, body) in &refused {
        assert_eq!(*status, 503, "{body}");
        assert!(matches!(retry_after, Some(1..)), "Retry-After: {body}");
        assert!(body["message"].is_string(), "the reference's shape: {body}");
    }
    // Both kinds of stream count in the one total.
    match open(&client, &cms.http_url(&connector), &token).await {
        Opened::Refused { status, .. } => assert_eq!(status, 503),
        Opened::Stream(_) => panic!("a connector's stream past the total"),
    }
    let charger = api.get(&format!("/api/v3/chargers/{uuid}")).await;
    assert_eq!(charger.status, 200, "an ordinary request: {}", charger.body);
    let metrics = api.metrics().await;
    let refusals = |reason| metrics.sum("cms_api_streams_refused_total", &[("reason", reason)]);
    assert_eq!(
        (refusals("user"), refusals("total")),
        (Some(0.0), Some(3.0))
    );

    drop(streams.pop());
    let reopened = eventually_within(
        RELEASE_BOUND,
        "a stream once one closed",
        async || match open(&client, &url, &token).await {
            Opened::Refused { status, body, .. } => Err(format!("{status} {body}")),
            stream => Ok(stream),
        },
    )
    .await;
    drop((reopened, streams));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_total_of_streams_not_below_the_connection_cap_is_refused_at_start() {
    let data = tempfile::TempDir::new().unwrap();
    let store = ["--data-dir".to_string(), data.path().display().to_string()];
    let args = [
        "up",
        "--ocpp-addr",
        "127.0.0.1:0",
        "--http-addr",
        "127.0.0.1:0",
    ];
    let limits = ["--http-max-connections", "100", "--stream-max-total", "100"];
    let out = run_cli(
        &store,
        &[&args[..], &limits[..]].concat(),
        Duration::from_secs(20),
    )
    .await;
    assert!(!out.status.success(), "started anyway: {}", out.stderr);
    assert!(
        out.stderr
            .contains("--stream-max-total 100 must be below --http-max-connections 100"),
        "says which flags: {}",
        out.stderr
    );
}
