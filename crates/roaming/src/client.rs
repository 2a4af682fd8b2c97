//! The HTTP client pushes and the credentials handshake go out on: the webhooks' guarded
//! client (cms_webhooks::client: a time-out, no redirects, no proxies from the environment,
//! refused addresses unless `--ocpi-allow-private`), and, since a party's token travels in
//! every request, `https` only unless the operator allows private addresses.

use reqwest::Method;
use std::time::Duration;

pub use cms_webhooks::client::Answer;

/// How much of a party's answer is read: enough for an OCPI envelope and then some.
pub const BODY_LIMIT: usize = 64 * 1024;

/// A party's API as cms reaches it.
#[derive(Clone)]
pub struct Client {
    http: cms_webhooks::client::Client,
    allow_private: bool,
}

impl Client {
    /// A client whose attempts are cut after `timeout`; `allow_private` lets it use `http` and
    /// reach every address.
    pub fn new(allow_private: bool, timeout: Duration) -> Client {
        let agent = concat!("cms-ocpi/", env!("CARGO_PKG_VERSION"));
        Client {
            http: cms_webhooks::client::Client::with_agent(allow_private, timeout, agent),
            allow_private,
        }
    }

    /// Sends `method url` with `headers` and `body` (JSON); the answer, or why there was none
    /// (a URL refused, the connection failed, timed out).
    pub async fn send(
        &self,
        method: &str,
        url: &str,
        headers: &[(&'static str, String)],
        body: Option<String>,
    ) -> Result<Answer, String> {
        let method =
            Method::from_bytes(method.as_bytes()).map_err(|_| format!("{method} is no method"))?;
        if !self.allow_private && !url.starts_with("https://") {
            return Err(format!(
                "{url} is not an https URL (plain http needs --ocpi-allow-private)"
            ));
        }
        self.http
            .request(method, url, headers, body, BODY_LIMIT)
            .await
    }
}
