//! Proxy servers' URLs: `wss://[user[:password]@]host[:port][/path]`. The relay sends the
//! credentials as Basic auth (docs/proxy.md); the API never shows a password back: an answer
//! shows `user:***@`, and a PUT that gives `***` keeps the password already stored for the same
//! URL, so a client can send back what it read.

/// What an answer shows for a stored password.
pub const MASK: &str = "***";

/// Whether `url` is a secure websocket URL cms can relay to.
pub fn is_secure_websocket_url(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("wss://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let (credentials, host_port) = match authority.rsplit_once('@') {
        Some((credentials, host_port)) => (Some(credentials), host_port),
        None => (None, authority),
    };
    // The last colon starts a port unless it is inside an IPv6 host's brackets.
    let (host, port) = match host_port.rfind(':') {
        Some(i) if !host_port[i..].contains(']') => (&host_port[..i], Some(&host_port[i + 1..])),
        _ => (host_port, None),
    };
    // A port the relay can dial: 1 to 65535, digits only (a sign would parse).
    let port_ok = port.is_none_or(|p| {
        p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok_and(|n| n > 0)
    });
    let user_ok = credentials.is_none_or(|c| !c.split(':').next().unwrap_or("").is_empty());
    // The charger's identity is appended as the last path segment: a query or a fragment would
    // end up before it.
    port_ok
        && user_ok
        && !host.is_empty()
        && !url.contains(['?', '#'])
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// `url` with its password, if any, shown as [`MASK`].
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
mod tests {
    use super::*;

    #[test]
    fn proxy_servers_are_secure_websocket_urls() {
        for good in [
            "wss://proxy.example.com",
            "wss://proxy.example.com/ocpp",
            "wss://10.0.0.1:8443/ocpp/CP-1",
            "wss://[::1]:8443/ocpp",
            "wss://ops:s3cret@proxy.example.com/ocpp",
            "wss://ops@proxy.example.com/ocpp",
            "wss://proxy.example.com:65535/ocpp",
        ] {
            assert!(is_secure_websocket_url(good), "{good}");
        }
        for bad in [
            "ws://proxy.example.com",
            "https://proxy.example.com",
            "wss://",
            "wss:///path",
            "wss://host:port/x",
            "wss://127.0.0.1:99999/x",
            "wss://host:65536/x",
            "wss://host:0/x",
            "wss://host:/x",
            "wss://host:+443/x",
            "wss://@host/x",
            "wss://:pw@host/x",
            "wss://host/a b",
            "wss://host/ocpp?token=x",
            "wss://host/ocpp#x",
        ] {
            assert!(!is_secure_websocket_url(bad), "{bad}");
        }
    }

    #[test]
    fn a_password_is_never_shown_and_comes_back_from_its_mask() {
        let stored = "wss://ops:s3:cr@t@proxy.example.com:8443/ocpp";
        assert_eq!(masked(stored), "wss://ops:***@proxy.example.com:8443/ocpp");
        assert_eq!(masked("wss://ops@h/x"), "wss://ops@h/x");
        assert_eq!(masked("wss://h/x@y"), "wss://h/x@y");
        let shown = masked(stored);
        assert_eq!(unmasked(&shown, [stored]).as_deref(), Some(stored));
        assert_eq!(unmasked("wss://ops:***@elsewhere/ocpp", [stored]), None);
        assert_eq!(
            unmasked("wss://ops:new@h/x", [stored]).as_deref(),
            Some("wss://ops:new@h/x")
        );
    }
}
