//! Abuse cases of the operational endpoints: `/metrics` and `/readyz` answered anyone on the
//! REST API's port (issue 40). With `--ops-addr` they move to a listener of their own and the
//! REST listener keeps `/healthz` alone; `/metrics` on the REST listener then answers only the
//! `--metrics-token`, as it does with a token and no ops listener.

use crate::support::Cms;
use serde_json::Value;

const METRICS_TOKEN: &str = "scrape-4f1c9a7e2b6d8035";

/// `GET url` with an optional bearer token: status and body.
async fn get(url: &str, bearer: Option<&str>) -> (u16, String) {
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut request = client.get(url);
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    let answer = request.send().await.expect("an answer");
    (answer.status().as_u16(), answer.text().await.unwrap())
}

fn message(body: &str) -> Value {
    let body: Value = serde_json::from_str(body).unwrap_or_default();
    assert!(body["message"].is_string(), "the reference's shape: {body}");
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_ops_address_probes_and_metrics_leave_the_rest_listener_but_healthz() {
    let cms = Cms::up_with(&["--ops-addr", "127.0.0.1:0"]).await;
    let user = cms.operator_token().await;

    assert_eq!(get(&cms.http_url("/healthz"), None).await.0, 200);
    for bearer in [None, Some(user.as_str())] {
        for path in ["/metrics", "/readyz"] {
            let (status, body) = get(&cms.http_url(path), bearer).await;
            assert_eq!(status, 404, "{path} on the REST listener: {body}");
            message(&body);
        }
    }

    for path in ["/healthz", "/readyz"] {
        assert_eq!(get(&cms.ops_url(path), None).await.0, 200, "{path}");
    }
    let (status, metrics) = get(&cms.ops_url("/metrics"), None).await;
    assert_eq!(status, 200);
    assert!(metrics.contains("cms_api_streams_open"), "{metrics}");
    // The REST API is not on the ops listener.
    let (status, _) = get(&cms.ops_url("/api/v3/chargers"), Some(&user)).await;
    assert_eq!(status, 404, "the REST API on the ops listener");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_metrics_token_metrics_on_the_rest_listener_answer_only_it() {
    let cms = Cms::up_with(&["--metrics-token", METRICS_TOKEN]).await;
    let user = cms.operator_token().await;
    let url = cms.http_url("/metrics");

    for bearer in [None, Some(user.as_str()), Some("scrape-wrong-token-000000")] {
        let (status, body) = get(&url, bearer).await;
        assert_eq!(status, 401, "{bearer:?}: {body}");
        message(&body);
    }
    let (status, metrics) = get(&url, Some(METRICS_TOKEN)).await;
    assert_eq!(status, 200);
    assert!(metrics.contains("cms_api_streams_open"), "{metrics}");
    // The probes stay open on the one listener.
    for path in ["/healthz", "/readyz"] {
        assert_eq!(get(&cms.http_url(path), None).await.0, 200, "{path}");
    }
}
