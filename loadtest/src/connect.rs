//! How a simulated charger reaches the gateway: a TCP connection from its own source address,
//! TLS over it for a `wss://` target, then the websocket upgrade (subprotocol ocpp1.6).

use crate::tls::Tls;
use std::fmt;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The gateway under test: a loopback address, over ws or wss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub addr: SocketAddrV4,
    pub tls: bool,
}

impl Target {
    /// Where charger `identity` upgrades: `ws://ADDR/ocpp/{identity}` or `wss://...`.
    pub fn url(&self, identity: &str) -> String {
        let scheme = if self.tls { "wss" } else { "ws" };
        format!("{scheme}://{}/ocpp/{identity}", self.addr)
    }
}

/// Reads back with `--target`: a plain target prints as `IP:PORT`, as it always has.
impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.tls {
            write!(f, "wss://{}", self.addr)
        } else {
            write!(f, "{}", self.addr)
        }
    }
}

/// A TCP connection to `target` from `source` (any port of it), without Nagle's delay.
pub async fn tcp(source: Ipv4Addr, target: SocketAddrV4) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    defer_port_choice(&socket)?;
    socket.bind(SocketAddr::new(source.into(), 0))?;
    let stream = socket.connect(target.into()).await?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// The TLS client side over `tcp`, for a `wss://` target.
pub async fn tls(
    tls: &Tls,
    tcp: TcpStream,
) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
    tls.connect(tcp).await
}

/// The websocket upgrade of charger `identity` over `stream`, offering `subprotocol`.
pub async fn upgrade<S>(
    stream: S,
    target: &Target,
    identity: &str,
    subprotocol: &'static str,
) -> Result<WebSocketStream<S>, Error>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut request = target.url(identity).into_client_request()?;
    request.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        HeaderValue::from_static(subprotocol),
    );
    let (ws, _) =
        tokio_tungstenite::client_async_with_config(request, stream, Some(ws_config())).await?;
    Ok(ws)
}

/// Binding to a source address with port 0 makes the kernel pick a port there and then, unique
/// among everything bound to that address: a search that grows with every socket (tens of
/// thousands: most of the simulator's CPU). With IP_BIND_ADDRESS_NO_PORT it picks one at
/// connect, unique only for the destination, as a plain connect would.
fn defer_port_choice(socket: &TcpSocket) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    // SAFETY: a valid socket descriptor, and an option value of the size given.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// tungstenite's default read buffer is 128 KiB, zeroed on every read: most of the simulator's
/// CPU and 128 KiB per charger. OCPP frames are small; 4 KiB holds several.
fn ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(4 * 1024)
        .write_buffer_size(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_follow_the_scheme() {
        let addr = "127.0.0.1:9443".parse().unwrap();
        let wss = Target { addr, tls: true };
        assert_eq!(wss.url("CP-1"), "wss://127.0.0.1:9443/ocpp/CP-1");
        assert_eq!(wss.to_string(), "wss://127.0.0.1:9443");
        let ws = Target { addr, tls: false };
        assert_eq!(ws.url("CP-1"), "ws://127.0.0.1:9443/ocpp/CP-1");
        assert_eq!(ws.to_string(), "127.0.0.1:9443");
    }
}
