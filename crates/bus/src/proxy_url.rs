//! A proxy server's URL, `ws[s]://[user[:password]@]host[:port][/path]`: the one parser the API
//! (which accepts only `wss`), the store and the relay share, so what the API takes is what the
//! relay dials. The relay appends the charger's identity as the last path segment and sends the
//! credentials as Basic auth (docs/proxy.md). The rules, strictest of the three parsers that
//! came before (docs/decisions.md, "One proxy URL"):
//! - the scheme is `ws://` or `wss://`, in lower case;
//! - no whitespace, no control character, no query (`?`) and no fragment (`#`): the identity is
//!   appended to the path, and would land before them;
//! - a host, not empty; a port, if any, of digits only, 1 to 65535;
//! - user info, if any, with a user name that is not empty.

use std::fmt;

/// What an answer shows for a stored password.
pub const MASK: &str = "***";

/// A proxy server's URL that passed [`ProxyUrl::parse`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProxyUrl {
    text: String,
    tls: bool,
    host: String,
    port: u16,
}

impl ProxyUrl {
    /// `text` if it is a proxy server's URL; otherwise why not (without its password).
    pub fn parse(text: &str) -> Result<ProxyUrl, String> {
        let (tls, rest) = if let Some(rest) = text.strip_prefix("wss://") {
            (true, rest)
        } else if let Some(rest) = text.strip_prefix("ws://") {
            (false, rest)
        } else {
            return Err(format!("not a websocket URL: {}", redacted(text)));
        };
        if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("a URL holds no whitespace or control character".into());
        }
        if text.contains(['?', '#']) {
            return Err("a proxy server's URL has no query or fragment".into());
        }
        let authority = rest.split('/').next().unwrap_or("");
        let (credentials, host_port) = match authority.rsplit_once('@') {
            Some((credentials, host_port)) => (Some(credentials), host_port),
            None => (None, authority),
        };
        if credentials.is_some_and(|c| c.split(':').next().unwrap_or("").is_empty()) {
            return Err("the URL's user name is empty".into());
        }
        // The last colon starts a port unless it is inside an IPv6 host's brackets.
        let (host, port) = match host_port.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => (host, Some(port)),
            _ => (host_port, None),
        };
        // Digits only: `u16`'s parser would take a sign.
        let port = match port {
            Some(port) if port.bytes().all(|b| b.is_ascii_digit()) => match port.parse() {
                Ok(0) | Err(_) => return Err(format!("bad port {port:?}")),
                Ok(port) => port,
            },
            Some(port) => return Err(format!("bad port {port:?}")),
            None if tls => 443,
            None => 80,
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err("no host in the URL".into());
        }
        Ok(ProxyUrl {
            text: text.to_string(),
            tls,
            host: host.to_string(),
            port,
        })
    }

    /// The URL as given, credentials and all.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// `wss`: the relay speaks TLS to it.
    pub fn is_secure(&self) -> bool {
        self.tls
    }

    /// The host to dial, an IPv6 address without its brackets.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port to dial: the URL's, or 443 for `wss` and 80 for `ws`.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `Basic <base64>` from the URL's `user:password@` (percent-decoded), if it has one.
    pub fn basic_auth(&self) -> Option<String> {
        use base64::Engine;
        let credentials = self.authority().rsplit_once('@')?.0;
        let decoded = percent_encoding::percent_decode_str(credentials).decode_utf8_lossy();
        let encoded = base64::engine::general_purpose::STANDARD.encode(decoded.as_bytes());
        Some(format!("Basic {encoded}"))
    }

    /// The URL the relay asks for on behalf of `identity`: without credentials, the identity
    /// (percent-encoded) appended as the last path segment.
    pub fn for_charger(&self, identity: &str) -> String {
        let scheme = if self.tls { "wss" } else { "ws" };
        let authority = self.authority();
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let path = self.path().trim_end_matches('/');
        let identity = percent_encoding::utf8_percent_encode(identity, SEGMENT);
        format!("{scheme}://{host_port}{path}/{identity}")
    }

    fn after_scheme(&self) -> &str {
        let start = self.text.find("://").map_or(0, |i| i + 3);
        &self.text[start..]
    }

    fn authority(&self) -> &str {
        self.after_scheme().split('/').next().unwrap_or("")
    }

    fn path(&self) -> &str {
        let rest = self.after_scheme();
        rest.find('/').map_or("", |i| &rest[i..])
    }
}

impl fmt::Display for ProxyUrl {
    /// Without credentials: what logs and events may show.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redacted(&self.text))
    }
}

/// What a path segment may not hold as it is.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'/')
    .add(b'?')
    .add(b'#')
    .add(b'%');

/// `url` (a proxy URL or not) without its user info, for logs.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((_, host)) => format!("{scheme}://{host}{path}"),
        None => url.to_string(),
    }
}

/// `url` with its password, if any, shown as [`MASK`]: how the API shows a stored URL.
pub fn masked(url: &str) -> String {
    match split_password(url) {
        Some((before, _, after)) => format!("{before}{MASK}{after}"),
        None => url.to_string(),
    }
}

/// `url` whose password is [`MASK`] completed from the stored URL it masks; `None` when no
/// stored URL does (the password is not known). Any other URL is itself.
pub fn unmasked<'a>(url: &str, stored: impl IntoIterator<Item = &'a str>) -> Option<String> {
    match split_password(url) {
        Some((_, MASK, _)) => stored
            .into_iter()
            .find(|s| masked(s) == url)
            .map(str::to_string),
        _ => Some(url.to_string()),
    }
}

/// (everything up to the password, the password, everything after it).
fn split_password(url: &str) -> Option<(&str, &str, &str)> {
    let start = url.find("://")? + 3;
    let authority_end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    let at = start + url[start..authority_end].rfind('@')?;
    let colon = start + url[start..at].find(':')?;
    Some((&url[..colon + 1], &url[colon + 1..at], &url[at..]))
}

#[cfg(test)]
mod tests;
