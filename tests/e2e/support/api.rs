//! The REST API as a user with a personal access token sees it.

use super::{Cms, EVENTUALLY, REPLY_TIMEOUT, eventually_within};
use serde_json::Value;
use std::time::Duration;

pub struct Api {
    base: String,
    token: String,
    client: reqwest::Client,
}

/// An HTTP answer: status, raw body, and the body parsed as JSON (`Null` if it is not JSON).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: String,
    pub json: Value,
}

impl Api {
    pub fn new(cms: &Cms, token: &str) -> Api {
        Api::at(&cms.http_url(""), token)
    }

    /// A client of the REST API at `base` (`http://127.0.0.1:PORT`, no trailing slash).
    pub fn at(base: &str, token: &str) -> Api {
        Api {
            base: base.to_string(),
            token: token.to_string(),
            client: reqwest::Client::builder()
                .no_proxy()
                .timeout(REPLY_TIMEOUT)
                .build()
                .expect("http client"),
        }
    }

    /// GET with `Authorization: Bearer <token>`.
    pub async fn get(&self, path: &str) -> Answer {
        let bearer = format!("Bearer {}", self.token);
        self.get_authorized(path, Some(&bearer)).await
    }

    /// GET with the given `Authorization` header value, or none.
    pub async fn get_authorized(&self, path: &str, authorization: Option<&str>) -> Answer {
        self.send_authorized("GET", path, None, authorization).await
    }

    /// POST a JSON body.
    pub async fn post(&self, path: &str, body: &Value) -> Answer {
        self.send("POST", path, Some(body)).await
    }

    /// PUT a JSON body.
    pub async fn put(&self, path: &str, body: &Value) -> Answer {
        self.send("PUT", path, Some(body)).await
    }

    /// Any method, with an optional JSON body (a GET may carry one: endpoint 5 reads it).
    pub async fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Answer {
        let bearer = format!("Bearer {}", self.token);
        self.send_authorized(method, path, body, Some(&bearer))
            .await
    }

    /// Any method with the given `Authorization` header value, or none.
    /// GET with `If-None-Match: etag` (when given); the status, the `ETag` answered, the body.
    pub async fn get_if_none_match(
        &self,
        path: &str,
        etag: Option<&str>,
    ) -> (u16, Option<String>, String) {
        let mut request = self
            .client
            .get(format!("{}{path}", self.base))
            .header("Authorization", format!("Bearer {}", self.token));
        if let Some(etag) = etag {
            request = request.header("If-None-Match", etag);
        }
        let response = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {path} failed: {e}"));
        let status = response.status().as_u16();
        let etag = response
            .headers()
            .get("etag")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = response.text().await.unwrap_or_default();
        (status, etag, body)
    }

    pub async fn send_authorized(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        authorization: Option<&str>,
    ) -> Answer {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("an HTTP method");
        let mut request = self
            .client
            .request(method.clone(), format!("{}{path}", self.base))
            .header("Accept", "application/json");
        if let Some(value) = authorization {
            request = request.header("Authorization", value);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {path} failed: {e}"));
        let status = response.status().as_u16();
        // A live stream that opened does not end: its status is the answer.
        let streaming = response
            .headers()
            .get("content-type")
            .is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"));
        if streaming {
            let (body, json) = (String::new(), Value::Null);
            return Answer { status, body, json };
        }
        let body = response
            .text()
            .await
            .unwrap_or_else(|e| panic!("{method} {path} body: {e}"));
        let json = serde_json::from_str(&body).unwrap_or(Value::Null);
        Answer { status, body, json }
    }

    /// A request that must answer `status` with JSON; returns the JSON.
    pub async fn expect(
        &self,
        status: u16,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Value {
        let answer = self.send(method, path, body).await;
        assert_eq!(
            answer.status, status,
            "{method} {path} answered {}: {}",
            answer.status, answer.body
        );
        answer.json
    }

    /// The `errors` map of a 422, asserting the status and the Laravel shape.
    pub async fn expect_invalid(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let json = self.expect(422, method, path, body).await;
        assert!(
            json["message"].is_string() && json["errors"].is_object(),
            "{method} {path}: a 422 has `message` and an `errors` map: {json}"
        );
        json["errors"].clone()
    }

    /// Waits until GET `path` answers `status`, at most `within` after `since`: for a change
    /// made elsewhere (the command line, another replica), which each replica learns from the
    /// access change log within a poll (docs/api.md "Reads from memory").
    pub async fn wait_for_status(
        &self,
        path: &str,
        status: u16,
        since: std::time::Instant,
        within: Duration,
    ) {
        let what = format!("GET {path} answering {status}");
        let left = within.saturating_sub(since.elapsed());
        eventually_within(left, &what, async || {
            let answer = self.get(path).await;
            match answer.status == status {
                true => Ok(()),
                false => Err(format!("{}: {}", answer.status, answer.body)),
            }
        })
        .await;
        eprintln!("{what}: after {:?}", since.elapsed());
    }

    /// GET that must answer 200 with JSON; returns the JSON.
    pub async fn get_ok(&self, path: &str) -> Value {
        let answer = self.get(path).await;
        assert_eq!(
            answer.status, 200,
            "GET {path} answered {}: {}",
            answer.status, answer.body
        );
        assert!(
            !answer.json.is_null(),
            "GET {path} did not answer JSON: {}",
            answer.body
        );
        answer.json
    }

    /// The charger with `uuid` as the chargers list shows it, walking the pages.
    pub async fn charger(&self, uuid: &str) -> Option<Value> {
        let mut path = "/api/v3/chargers?page=1".to_string();
        for _ in 0..20 {
            let page = self.get_ok(&path).await;
            let data = page["data"]
                .as_array()
                .expect("chargers page has a data array");
            if let Some(found) = data.iter().find(|c| c["uuid"] == uuid) {
                return Some(found.clone());
            }
            match page["links"]["next"].as_str() {
                Some(next) => path = next.to_string(),
                None => return None,
            }
        }
        panic!("the chargers list has more than 20 pages");
    }

    /// Polls the chargers list until the charger `uuid` satisfies `expected`; returns it.
    pub async fn wait_for_charger(
        &self,
        uuid: &str,
        what: &str,
        expected: impl Fn(&Value) -> bool,
    ) -> Value {
        self.wait_for_charger_within(uuid, what, EVENTUALLY, expected)
            .await
    }

    /// [`Api::wait_for_charger`] for at most `limit`.
    pub async fn wait_for_charger_within(
        &self,
        uuid: &str,
        what: &str,
        limit: Duration,
        expected: impl Fn(&Value) -> bool,
    ) -> Value {
        let what = format!("charger {uuid}: {what}");
        eventually_within(limit, &what, async || match self.charger(uuid).await {
            Some(charger) if expected(&charger) => Ok(charger),
            Some(charger) => Err(charger.to_string()),
            None => Err(format!("charger {uuid} not in the list")),
        })
        .await
    }

    /// `GET /api/v3/chargers/{uuid}/connectors/{connector}/latest-metervalue`.
    pub async fn latest_meter_value(&self, uuid: &str, connector: u32) -> Answer {
        self.get(&format!(
            "/api/v3/chargers/{uuid}/connectors/{connector}/latest-metervalue"
        ))
        .await
    }

    /// Polls latest-metervalue until it answers 200 with a body that, whitespace removed,
    /// equals `expected` (so key order counts).
    pub async fn wait_for_latest_meter_value(&self, uuid: &str, connector: u32, expected: &str) {
        self.wait_for_latest_meter_value_within(uuid, connector, expected, EVENTUALLY)
            .await
    }

    /// [`Api::wait_for_latest_meter_value`] for at most `limit`.
    pub async fn wait_for_latest_meter_value_within(
        &self,
        uuid: &str,
        connector: u32,
        expected: &str,
        limit: Duration,
    ) {
        let expected: String = expected.split_whitespace().collect();
        let what = format!("latest-metervalue of connector {connector} to be {expected}");
        eventually_within(limit, &what, async || {
            let answer = self.latest_meter_value(uuid, connector).await;
            let compact: String = answer.body.split_whitespace().collect();
            if answer.status == 200 && compact == expected {
                Ok(())
            } else {
                Err(format!("{} {}", answer.status, answer.body))
            }
        })
        .await
    }
}

impl Api {
    /// `GET /metrics`, parsed.
    pub async fn metrics(&self) -> super::Metrics {
        let answer = self.get("/metrics").await;
        assert_eq!(
            answer.status, 200,
            "GET /metrics answered {}: {}",
            answer.status, answer.body
        );
        super::Metrics::parse(&answer.body)
    }
}
