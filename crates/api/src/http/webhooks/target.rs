//! Where a webhook may send its events: an absolute `https` URL without a user name or
//! password, whose host is a public address or a name that resolves to public addresses only.
//! With `--webhook-allow-private` (tests, closed networks) `http` is accepted too and the host
//! is not looked up. Delivery checks the addresses again at connect time (DNS may change).

use cms_webhooks::refused_address as refused;
use std::net::IpAddr;
use std::time::Duration;

/// The longest URL accepted, in characters.
pub const MAX_URL: usize = 2048;

/// How long the name of a URL's host may take to resolve.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(3);

/// `Err` with the message of the `url` field when `text` is no URL a webhook may have.
pub async fn check(text: &str, allow_private: bool) -> Result<(), String> {
    let url =
        url::Url::parse(text).map_err(|_| "The url field must be a valid URL.".to_string())?;
    match url.scheme() {
        "https" => {}
        "http" if allow_private => {}
        _ => return Err("The url field must be an https URL.".into()),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("The url field must not contain a user name or password.".into());
    }
    if allow_private {
        return Ok(());
    }
    let addresses: Vec<IpAddr> = match url.host() {
        Some(url::Host::Ipv4(ip)) => vec![ip.into()],
        Some(url::Host::Ipv6(ip)) => vec![ip.into()],
        Some(url::Host::Domain(name)) => {
            let port = url.port_or_known_default().unwrap_or(443);
            let found =
                tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((name, port)));
            match found.await {
                Ok(Ok(found)) => found.map(|a| a.ip()).collect(),
                _ => Vec::new(),
            }
        }
        None => return Err("The url field must be a valid URL.".into()),
    };
    if addresses.is_empty() {
        return Err("The url field's host does not resolve.".into());
    }
    match addresses
        .into_iter()
        .find_map(|ip| refused(ip).map(|kind| (ip, kind)))
    {
        Some((ip, kind)) => Err(format!(
            "The url field's host is {kind} ({ip}): webhooks are not sent there."
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_url_is_https_without_credentials_to_a_public_address() {
        assert_eq!(check("https://1.1.1.1/hooks", false).await, Ok(()));
        assert_eq!(
            check("https://[2606:4700::1111]:8443/", false).await,
            Ok(())
        );
        for (url, says) in [
            ("not a url", "valid URL"),
            ("/relative/path", "valid URL"),
            ("http://1.1.1.1/hooks", "https"),
            ("ftp://1.1.1.1/", "https"),
            ("https://user:pass@1.1.1.1/", "user name or password"),
            ("https://user@1.1.1.1/", "user name or password"),
            ("https://127.0.0.1/", "loopback"),
            ("https://127.1/", "loopback"),
            ("https://[::ffff:10.0.0.1]/", "private"),
            ("https://169.254.169.254/latest", "metadata"),
            ("https://localhost:8443/", "loopback"),
            ("https://no-such-host.invalid/", "does not resolve"),
        ] {
            let error = check(url, false).await.expect_err(url);
            assert!(error.contains(says), "{url}: {error}");
        }
    }

    #[tokio::test]
    async fn with_private_allowed_http_and_private_addresses_pass() {
        assert_eq!(check("http://127.0.0.1:9999/hooks", true).await, Ok(()));
        assert_eq!(check("https://10.0.0.1/", true).await, Ok(()));
        // Credentials and other schemes stay refused.
        assert!(check("https://a:b@127.0.0.1/", true).await.is_err());
        assert!(check("ftp://127.0.0.1/", true).await.is_err());
    }
}
