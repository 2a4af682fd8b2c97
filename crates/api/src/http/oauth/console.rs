//! The operator console's client ([`CONSOLE_CLIENT_ID`]): it is served by this API, so the only
//! place to send its users back to is `/console/` on the origin their browser asked for the
//! authorization: `<scheme>://<Host>/console/`. The scheme is `https` on a TLS listener; on a
//! plain one `http`, or `https` for a reverse proxy that ends TLS in front of it (the host is the
//! same either way, and the code is of no use without the PKCE verifier the console holds).

use axum::http::HeaderMap;
use axum::http::header::HOST;

pub use cms_store::oauth::CONSOLE_CLIENT_ID;

/// Whether `redirect_uri` is the console on the origin of a request with `headers`, made to a
/// listener with TLS (`tls`) or without.
pub fn is_own_console(redirect_uri: &str, headers: &HeaderMap, tls: bool) -> bool {
    let Some(host) = headers.get(HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let host = host.trim();
    if host.is_empty() || host.contains(['/', '@', '?', '#', ' ']) {
        return false;
    }
    let schemes: &[&str] = if tls { &["https"] } else { &["http", "https"] };
    schemes.iter().any(|scheme| {
        let expected = format!("{scheme}://{host}/console/");
        redirect_uri.eq_ignore_ascii_case(&expected)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(HOST, value.parse().unwrap());
        headers
    }

    #[test]
    fn only_the_console_on_the_requests_own_origin() {
        let local = host("127.0.0.1:8080");
        assert!(is_own_console(
            "http://127.0.0.1:8080/console/",
            &local,
            false
        ));
        assert!(is_own_console(
            "https://127.0.0.1:8080/console/",
            &local,
            false
        ));
        assert!(!is_own_console(
            "http://127.0.0.1:8080/console/",
            &local,
            true
        ));
        assert!(is_own_console(
            "https://127.0.0.1:8080/console/",
            &local,
            true
        ));
        for elsewhere in [
            "http://127.0.0.1:8081/console/",
            "http://evil.example/console/",
            "http://127.0.0.1:8080/console/x",
            "http://127.0.0.1:8080/console",
            "http://127.0.0.1:8080/console/?next=x",
            "http://127.0.0.1:8080.evil.example/console/",
            "javascript://127.0.0.1:8080/console/",
        ] {
            assert!(!is_own_console(elsewhere, &local, false), "{elsewhere}");
        }
        assert!(!is_own_console("http:///console/", &host(""), false));
        assert!(!is_own_console("http://a@b/console/", &host("a@b"), false));
        assert!(!is_own_console(
            "http://x/console/",
            &HeaderMap::new(),
            false
        ));
    }
}
