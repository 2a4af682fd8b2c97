//! The HTTP client deliveries go out on. Receivers are not trusted: an attempt is cut at its
//! time-out, at most [`BODY_LIMIT`] of an answer is read, redirects are not followed, proxies
//! from the environment are not used, and, unless the operator allows private addresses, no
//! connection goes to loopback, private, link-local, unique-local, CGNAT, multicast,
//! unspecified or cloud metadata addresses. Names are resolved by [`GuardedResolver`], which
//! hands the connector only the addresses it checked (no DNS rebinding between the check and
//! the connect); an IP literal, which is never resolved, is checked before the request.

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::{Url, redirect};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// How much of a receiver's answer is read (kept, cut, in the delivery log).
pub const BODY_LIMIT: usize = 4096;

/// Why an address is refused to deliveries without `allow_private`, `None` when it is not.
pub fn refused_address(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return refused_v4(v4);
            }
            let first = v6.segments()[0];
            if v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
                Some("a cloud metadata address")
            } else if v6.is_loopback() {
                Some("a loopback address")
            } else if v6.is_unspecified() {
                Some("an unspecified address")
            } else if v6.is_multicast() {
                Some("a multicast address")
            } else if first & 0xffc0 == 0xfe80 {
                Some("a link-local address")
            } else if first & 0xfe00 == 0xfc00 {
                Some("a unique-local address")
            } else {
                None
            }
        }
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip == Ipv4Addr::new(169, 254, 169, 254) {
        Some("a cloud metadata address")
    } else if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a carrier-grade NAT address")
    } else if ip.is_multicast() || ip.is_broadcast() {
        Some("a multicast or broadcast address")
    } else if a == 0 {
        Some("an unspecified address")
    } else {
        None
    }
}

/// Whether deliveries may go to `url`: an http(s) URL with a host whose address (an IP literal,
/// or every address the name resolves to now) is not refused. With `allow_private` only the
/// URL's form is checked. A name that does not resolve now is let through: the guard at
/// delivery checks it again on every connection. For the API's validation of a webhook's URL.
pub async fn check_url(url: &str, allow_private: bool) -> Result<(), String> {
    let url = Url::parse(url).map_err(|_| "is not a valid URL".to_string())?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("must be an http(s) URL".into());
    }
    let Some(host) = url.host() else {
        return Err("must name a host".into());
    };
    if allow_private {
        return Ok(());
    }
    let refused = |ip: IpAddr| {
        refused_address(ip).map(|why| format!("points at {why}, which deliveries do not reach"))
    };
    match host {
        url::Host::Ipv4(ip) => refused(ip.into()).map_or(Ok(()), Err),
        url::Host::Ipv6(ip) => refused(ip.into()).map_or(Ok(()), Err),
        url::Host::Domain(name) => {
            let port = url.port_or_known_default().unwrap_or(443);
            match tokio::net::lookup_host((name, port)).await {
                Ok(addresses) => addresses
                    .filter_map(|address| refused(address.ip()))
                    .next()
                    .map_or(Ok(()), Err),
                Err(_) => Ok(()),
            }
        }
    }
}

/// Resolves names for the client and keeps only the addresses deliveries may reach.
struct GuardedResolver;

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let resolved: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = resolved
                .iter()
                .copied()
                .filter(|address| refused_address(address.ip()).is_none())
                .collect();
            if allowed.is_empty() {
                let why = resolved
                    .first()
                    .and_then(|address| refused_address(address.ip()))
                    .unwrap_or("no address");
                return Err(
                    format!("{host} resolves to {why}, which deliveries do not reach").into(),
                );
            }
            let addrs: Addrs = Box::new(allowed.into_iter());
            Ok(addrs)
        })
    }
}

/// A receiver's answer: its status and the start of its body.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub status: u16,
    /// At most [`BODY_LIMIT`] bytes of it, as text (lossy).
    pub body: String,
}

/// The deliveries' client.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    allow_private: bool,
}

impl Client {
    /// A client whose attempts are cut after `timeout`; `allow_private` lets it reach every
    /// address (the operator's `--webhook-allow-private`).
    pub fn new(allow_private: bool, timeout: Duration) -> Client {
        Client::with_agent(
            allow_private,
            timeout,
            concat!("cms-webhooks/", env!("CARGO_PKG_VERSION")),
        )
    }

    /// [`Client::new`] naming itself `agent` (OCPI's pushes and handshake: `cms-ocpi/...`).
    pub fn with_agent(allow_private: bool, timeout: Duration, agent: &'static str) -> Client {
        let mut builder = reqwest::Client::builder()
            .redirect(redirect::Policy::none())
            .no_proxy()
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(agent);
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

    /// POSTs `body` as JSON with `headers`; the answer, or why there was none (refused
    /// address, connection failed, timed out).
    pub async fn post(
        &self,
        url: &str,
        headers: &[(&'static str, String)],
        body: String,
    ) -> Result<Answer, String> {
        self.request(reqwest::Method::POST, url, headers, Some(body), BODY_LIMIT)
            .await
    }

    /// Sends a `method` request with `headers` and, if any, `body` as JSON; at most
    /// `answer_limit` bytes of the answer are read (OCPI's handshake reads whole JSON answers
    /// through the same guards as webhooks: cms-roaming, the API's OCPI client).
    pub async fn request(
        &self,
        method: reqwest::Method,
        url: &str,
        headers: &[(&'static str, String)],
        body: Option<String>,
        answer_limit: usize,
    ) -> Result<Answer, String> {
        let parsed = Url::parse(url).map_err(|_| format!("{url} is not a valid URL"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("{url} is not an http(s) URL"));
        }
        if !self.allow_private {
            let literal = match parsed.host() {
                Some(url::Host::Ipv4(ip)) => Some(IpAddr::from(ip)),
                Some(url::Host::Ipv6(ip)) => Some(IpAddr::from(ip)),
                _ => None,
            };
            if let Some(why) = literal.and_then(refused_address) {
                return Err(format!(
                    "{url} points at {why}, which deliveries do not reach"
                ));
            }
        }
        let mut request = self.http.request(method, parsed);
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body);
        }
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let mut response = request.send().await.map_err(describe)?;
        let status = response.status().as_u16();
        let mut read = Vec::new();
        while read.len() < answer_limit {
            match response.chunk().await {
                Ok(Some(chunk)) => read.extend_from_slice(&chunk),
                Ok(None) => break,
                // The status is what counts; a body cut short is kept as read.
                Err(_) => break,
            }
        }
        read.truncate(answer_limit);
        Ok(Answer {
            status,
            body: String::from_utf8_lossy(&read).into_owned(),
        })
    }
}

/// An error of reqwest's as the delivery log shows it: what failed, with its causes.
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

#[cfg(test)]
mod tests;
