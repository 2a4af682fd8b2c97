//! cms's OCPI endpoints as a party calls them: `Authorization: Token <base64>`, the envelope
//! read back. cms's own tests of its OCPI side (the independent eMSP is support/ocpi_emsp.rs).

use super::REPLY_TIMEOUT;
use base64::Engine;
use serde_json::Value;

/// A party's client of cms's OCPI endpoints.
pub struct Ocpi {
    base: String,
    client: reqwest::Client,
}

/// An OCPI answer: HTTP status, headers, the envelope as JSON.
#[derive(Debug)]
pub struct OcpiAnswer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub json: Value,
}

impl OcpiAnswer {
    /// The envelope's `status_code`.
    pub fn code(&self) -> i64 {
        self.json["status_code"].as_i64().unwrap_or(-1)
    }
    pub fn header(&self, name: &str) -> Option<String> {
        (self.headers.get(name)).and_then(|v| v.to_str().ok().map(str::to_string))
    }
}

/// `Token <base64 of token>`, as OCPI 2.2.1 sends it.
pub fn token_header(token: &str) -> String {
    format!(
        "Token {}",
        base64::engine::general_purpose::STANDARD.encode(token)
    )
}

impl Ocpi {
    /// cms's OCPI at `base` (`http://127.0.0.1:PORT`).
    pub fn at(base: &str) -> Ocpi {
        Ocpi {
            base: base.to_string(),
            client: reqwest::Client::builder()
                .no_proxy()
                .timeout(REPLY_TIMEOUT)
                .build()
                .expect("http client"),
        }
    }

    /// `method` on `path` (under the base, e.g. `/ocpi/versions`, or a whole URL) with `token`.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> OcpiAnswer {
        let url = if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{path}", self.base)
        };
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
        let mut request = self.client.request(method, &url);
        if let Some(token) = token {
            request = request.header("authorization", token_header(token));
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.expect("cms answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap_or_default();
        OcpiAnswer {
            status,
            headers,
            json: serde_json::from_str(&text).unwrap_or(Value::Null),
        }
    }

    pub async fn get(&self, path: &str, token: &str) -> OcpiAnswer {
        self.call("GET", path, Some(token), None).await
    }
}
