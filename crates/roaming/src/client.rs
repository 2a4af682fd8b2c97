//! The HTTP client pushes go out on. A party is not trusted more than a webhook receiver: an
//! attempt is cut at its time-out, at most [`BODY_LIMIT`] of an answer is read, redirects are
//! not followed, proxies from the environment are not used, and, unless the operator allows
//! private addresses (`--ocpi-allow-private`), only `https` goes out and no connection goes to
//! an address webhooks refuse ([`cms_webhooks::refused_address`]): names are resolved by
//! [`GuardedResolver`], which hands the connector only the addresses it checked, and an IP
//! literal is checked before the request.

use cms_webhooks::refused_address;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::{Method, Url, redirect};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// How much of a party's answer is read: enough for an OCPI envelope and then some.
pub const BODY_LIMIT: usize = 64 * 1024;

/// A party's answer: its status and the start of its body.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub status: u16,
    /// At most [`BODY_LIMIT`] bytes of it, as text (lossy).
    pub body: String,
}

/// Resolves names for the client and keeps only the addresses pushes may reach.
struct GuardedResolver;

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let resolved: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = (resolved.iter().copied())
                .filter(|address| refused_address(address.ip()).is_none())
                .collect();
            if allowed.is_empty() {
                let why = (resolved.first())
                    .and_then(|address| refused_address(address.ip()))
                    .unwrap_or("no address");
                return Err(format!("{host} resolves to {why}, which pushes do not reach").into());
            }
            let addrs: Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

/// The pushes' client.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    allow_private: bool,
}

impl Client {
    /// A client whose attempts are cut after `timeout`; `allow_private` lets it use `http` and
    /// reach every address.
    pub fn new(allow_private: bool, timeout: Duration) -> Client {
        let mut builder = reqwest::Client::builder()
            .redirect(redirect::Policy::none())
            .no_proxy()
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("cms-ocpi/", env!("CARGO_PKG_VERSION")));
        if !allow_private {
            builder = builder.dns_resolver(Arc::new(GuardedResolver));
        }
        Client {
            http: builder
                .build()
                .expect("a client of rustls and these settings builds"),
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
        let parsed = Url::parse(url).map_err(|_| format!("{url} is not a valid URL"))?;
        self.check(&parsed)?;
        let mut request = self.http.request(method, parsed);
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let mut response = request.send().await.map_err(describe)?;
        let status = response.status().as_u16();
        let mut read = Vec::new();
        while read.len() < BODY_LIMIT {
            match response.chunk().await {
                Ok(Some(chunk)) => read.extend_from_slice(&chunk),
                Ok(None) => break,
                // A body cut short is judged as read (an envelope cut short is no envelope).
                Err(_) => break,
            }
        }
        read.truncate(BODY_LIMIT);
        Ok(Answer {
            status,
            body: String::from_utf8_lossy(&read).into_owned(),
        })
    }

    /// Whether `url` may be pushed to: `https` (or `http` with `allow_private`), and no
    /// refused IP literal.
    fn check(&self, url: &Url) -> Result<(), String> {
        if self.allow_private {
            return match url.scheme() {
                "http" | "https" => Ok(()),
                _ => Err(format!("{url} is not an http(s) URL")),
            };
        }
        if url.scheme() != "https" {
            return Err(format!(
                "{url} is not an https URL (plain http needs --ocpi-allow-private)"
            ));
        }
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::from(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::from(ip)),
            _ => None,
        };
        match literal.and_then(refused_address) {
            Some(why) => Err(format!("{url} points at {why}, which pushes do not reach")),
            None => Ok(()),
        }
    }
}

/// An error of reqwest's as the push log shows it: what failed, with its causes.
fn describe(error: reqwest::Error) -> String {
    if error.is_timeout() {
        return "timed out".into();
    }
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
