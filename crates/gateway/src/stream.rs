//! A charger's byte stream: plain TCP, or TLS over TCP. A TLS connection is handshaken on the
//! gateway's TLS runtime and then handed to a shard, so its socket moves from one runtime's
//! reactor to another's (`HandedTcp::rebind`) while the TLS session stays as it is.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

/// What a session reads frames from and writes answers to.
pub enum ChargerStream {
    Plain(TcpStream),
    /// Boxed: a TLS session is several times the size of a socket, and plain connections
    /// should not carry its room.
    Tls(Box<TlsStream<HandedTcp>>),
}

/// The server's websocket over `stream`, once the upgrade was answered; `leftover` is what was
/// read past the upgrade request.
///
/// Without leftover bytes (a charger waits for the 101), tungstenite's read buffer starts at
/// its configured size and remembers it: when frames still held by their records leave it no
/// room, it allocates that size again and reads a whole frame at once. Built from a leftover,
/// even an empty one, it remembers a size of 0 and allocates each frame's exact room, reading
/// its header first and the rest after: two reads and two allocations a frame
/// (docs/performance.md, "Two reads a frame").
pub async fn websocket<S>(
    stream: S,
    leftover: Vec<u8>,
    config: WebSocketConfig,
) -> WebSocketStream<S>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    if leftover.is_empty() {
        WebSocketStream::from_raw_socket(stream, Role::Server, Some(config)).await
    } else {
        WebSocketStream::from_partially_read(stream, leftover, Role::Server, Some(config)).await
    }
}

/// A TCP stream that can move to the runtime of the thread it is used on.
pub struct HandedTcp(Option<TcpStream>);

impl HandedTcp {
    pub fn new(stream: TcpStream) -> Self {
        HandedTcp(Some(stream))
    }

    /// Registers the socket with the reactor of the runtime this is called on (a shard's),
    /// leaving the one it was accepted on (the TLS runtime's).
    pub fn rebind(&mut self) -> io::Result<()> {
        let stream = self.0.take().ok_or_else(gone)?;
        let std = stream.into_std()?;
        self.0 = Some(TcpStream::from_std(std)?);
        Ok(())
    }

    fn stream(self: Pin<&mut Self>) -> io::Result<Pin<&mut TcpStream>> {
        let stream = self.get_mut().0.as_mut().ok_or_else(gone)?;
        Ok(Pin::new(stream))
    }
}

fn gone() -> io::Error {
    io::Error::new(
        io::ErrorKind::NotConnected,
        "the socket failed to move runtimes",
    )
}

impl AsyncRead for HandedTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.stream() {
            Ok(stream) => stream.poll_read(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

impl AsyncWrite for HandedTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.stream() {
            Ok(stream) => stream.poll_write(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.stream() {
            Ok(stream) => stream.poll_flush(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.stream() {
            Ok(stream) => stream.poll_shutdown(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

impl AsyncRead for ChargerStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ChargerStream::Plain(stream) => Pin::new(stream).poll_read(cx, buf),
            ChargerStream::Tls(stream) => Pin::new(stream.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ChargerStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            ChargerStream::Plain(stream) => Pin::new(stream).poll_write(cx, buf),
            ChargerStream::Tls(stream) => Pin::new(stream.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ChargerStream::Plain(stream) => Pin::new(stream).poll_flush(cx),
            ChargerStream::Tls(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ChargerStream::Plain(stream) => Pin::new(stream).poll_shutdown(cx),
            ChargerStream::Tls(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests;
