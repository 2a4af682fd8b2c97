//! The client's network address, as the login limiter and the pending-request limit count it.
//!
//! It is the TCP peer's address, read from the [`ConnectInfo`] the HTTP server puts in each
//! request's extensions; `X-Forwarded-For` is never trusted, since any client can write it.
//! Behind a reverse proxy every client therefore has the proxy's address (and shares its
//! limits). Without a peer address (a server that does not record it) every request counts as
//! one `unknown` client.

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};

/// The key of a client's address: an IPv4 address, an IPv6 /64 network (one host usually holds
/// a whole /64, so counting single IPv6 addresses would be no limit), or `unknown`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientAddress(String);

impl ClientAddress {
    pub fn of(peer: Option<IpAddr>) -> ClientAddress {
        let key = match peer {
            None => "unknown".to_string(),
            Some(IpAddr::V4(v4)) => v4.to_string(),
            Some(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
                Some(v4) => v4.to_string(),
                None => {
                    let s = v6.segments();
                    format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
                }
            },
        };
        ClientAddress(key)
    }

    pub fn key(&self) -> &str {
        &self.0
    }
}

impl<S: Send + Sync> FromRequestParts<S> for ClientAddress {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip());
        Ok(ClientAddress::of(peer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request;

    fn key_of(ip: &str) -> String {
        ClientAddress::of(Some(ip.parse().unwrap())).0
    }

    #[test]
    fn ipv6_clients_count_by_their_64_bit_network() {
        assert_eq!(key_of("192.0.2.7"), "192.0.2.7");
        assert_eq!(key_of("::ffff:192.0.2.7"), "192.0.2.7");
        assert_eq!(key_of("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
        assert_eq!(key_of("2001:db8:1:2::9"), key_of("2001:db8:1:2:ffff::1"));
        assert_ne!(key_of("2001:db8:1:2::9"), key_of("2001:db8:1:3::9"));
    }

    #[tokio::test]
    async fn the_peer_address_is_read_from_the_connection_not_from_headers() {
        let request = Request::builder()
            .header("x-forwarded-for", "203.0.113.9")
            .body(())
            .unwrap();
        let (mut parts, ()) = request.into_parts();
        let unknown = ClientAddress::from_request_parts(&mut parts, &()).await;
        assert_eq!(unknown.unwrap().key(), "unknown");
        let peer: SocketAddr = "198.51.100.4:50000".parse().unwrap();
        parts.extensions.insert(ConnectInfo(peer));
        let known = ClientAddress::from_request_parts(&mut parts, &()).await;
        assert_eq!(known.unwrap().key(), "198.51.100.4");
    }
}
