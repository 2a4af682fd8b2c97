//! Doors for the fuzz targets in `fuzz/` (docs/fuzzing.md) into code that is otherwise reached
//! only through a socket: the whole upgrade handshake on an in-memory stream. Not an API.

use crate::admission::{ClientSubject, Transport};
use crate::directory::{ChargerDirectory, DirectoryError, Registration};
use crate::handshake::{Rejection, Terms, accept};
use cms_bus::BoxFuture;
use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The password of the chargers of profiles 1 and 2 in [`handshake`]'s directory.
pub const PASSWORD: &str = "0123456789abcdef";

/// What a handshake did with a request: the bytes it answered and how it ended.
pub struct Handshake {
    pub response: Vec<u8>,
    /// `Ok((identity, authenticated))` when the connection was upgraded.
    pub outcome: Result<(String, bool), Rejection>,
}

/// Runs the gateway's handshake on `request` (the bytes a client sent, all of them at once)
/// over plain ws, or over TLS with a client certificate naming `tls_client_names`. The
/// directory knows `CP0` to `CP3`, one charger of each security profile, the password of
/// 1 and 2 being [`PASSWORD`]; `DOWN` makes the directory fail.
pub async fn handshake(request: &[u8], tls_client_names: Option<&[String]>) -> Handshake {
    let mut stream = Memory {
        input: request,
        output: Vec::new(),
    };
    let client = tls_client_names.map(|names| ClientSubject {
        common_names: names.to_vec(),
        organizations: Vec::new(),
    });
    let transport = match &client {
        Some(client) => Transport::Tls { client },
        None => Transport::Plain,
    };
    let peer = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let terms = Terms {
        preferred: cms_ocpp::OcppVersion::V201,
        organization: None,
    };
    let outcome = accept(&mut stream, &Fixed, transport, peer, None, terms, &mut None)
        .await
        .map(|a| (a.identity.as_str().to_string(), a.authenticated));
    Handshake {
        response: stream.output,
        outcome,
    }
}

struct Fixed;

static HASH: LazyLock<String> = LazyLock::new(|| cms_credentials::hash_secret(PASSWORD));

impl ChargerDirectory for Fixed {
    fn lookup<'a>(
        &'a self,
        identity: &'a str,
    ) -> BoxFuture<'a, Result<Option<Registration>, DirectoryError>> {
        let found = match identity {
            "DOWN" => Err(DirectoryError("down".to_string())),
            "CP0" | "CP1" | "CP2" | "CP3" => {
                let profile = identity.as_bytes()[2] - b'0';
                Ok(Some(Registration {
                    password_hash: matches!(profile, 1 | 2).then(|| HASH.clone()),
                    security_profile: profile,
                    authorization: Default::default(),
                    proxy: None,
                    price_text: None,
                    ocpi_location: None,
                }))
            }
            _ => Ok(None),
        };
        Box::pin(async move { found })
    }
}

/// A client that sent `input` and then closed its side; what the gateway writes is kept.
struct Memory<'a> {
    input: &'a [u8],
    output: Vec<u8>,
}

impl AsyncRead for Memory<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let n = self.input.len().min(buf.remaining());
        let (now, later) = self.input.split_at(n);
        buf.put_slice(now);
        self.input = later;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Memory<'_> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.output.extend_from_slice(data);
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    fn request(identity: &str, authorization: Option<&str>) -> Vec<u8> {
        let mut head = format!(
            "GET /ocpp/{identity} HTTP/1.1\r\nHost: cms\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
             Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ocpp1.6\r\n"
        );
        if let Some(user_pass) = authorization {
            let encoded = base64::engine::general_purpose::STANDARD.encode(user_pass);
            head.push_str(&format!("Authorization: Basic {encoded}\r\n"));
        }
        head.push_str("\r\n");
        head.into_bytes()
    }

    /// The fuzz target's door leads to the real handshake: what a charger of each profile
    /// gets, so a fuzz run explores the paths chargers take.
    #[tokio::test]
    async fn the_fuzzing_handshake_admits_and_refuses_as_the_gateway_does() {
        let open = handshake(&request("CP0", None), None).await;
        assert_eq!(open.outcome, Ok(("CP0".to_string(), false)));
        assert!(open.response.starts_with(b"HTTP/1.1 101 "));

        let right = format!("CP1:{PASSWORD}");
        let password = handshake(&request("CP1", Some(&right)), None).await;
        assert_eq!(password.outcome, Ok(("CP1".to_string(), true)));

        let wrong = handshake(&request("CP1", Some("CP1:nope")), None).await;
        assert!(matches!(wrong.outcome, Err(Rejection::Refused(_))));
        assert!(wrong.response.starts_with(b"HTTP/1.1 401 "));

        let plain = handshake(&request("CP3", None), None).await;
        assert!(matches!(plain.outcome, Err(Rejection::Refused(_))));
        let names = ["CP3".to_string()];
        let tls = handshake(&request("CP3", None), Some(&names)).await;
        assert_eq!(tls.outcome, Ok(("CP3".to_string(), true)));

        let down = handshake(&request("DOWN", None), None).await;
        assert_eq!(down.outcome.unwrap_err(), Rejection::Unavailable);
        assert!(down.response.starts_with(b"HTTP/1.1 503 "));
    }
}
