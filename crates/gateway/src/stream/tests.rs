use super::*;
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio_tungstenite::tungstenite::Message;

/// A stream that counts the reads that returned bytes.
struct Counted<S> {
    inner: S,
    reads: Arc<AtomicUsize>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.reads.fetch_add(1, Ordering::Relaxed);
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Reads per frame when a charger sends `frames` MeterValues-sized frames one at a time and
/// each frame's bytes stay held (as a record holds them until the bus's consumers are done).
async fn reads_per_frame(frames: usize) -> f64 {
    let (server, client) = tokio::io::duplex(64 * 1024);
    let reads = Arc::new(AtomicUsize::new(0));
    let counted = Counted {
        inner: server,
        reads: reads.clone(),
    };
    let config = WebSocketConfig::default().read_buffer_size(1024);
    let mut server = websocket(counted, Vec::new(), config).await;
    let mut charger = WebSocketStream::from_raw_socket(client, Role::Client, None).await;
    let payload = format!(
        "[2,\"1\",\"MeterValues\",{{\"pad\":\"{}\"}}]",
        "x".repeat(440)
    );
    let mut held: Vec<Bytes> = Vec::new();
    for _ in 0..frames {
        charger.send(Message::text(payload.clone())).await.unwrap();
        let Some(Ok(Message::Text(text))) = server.next().await else {
            panic!("no text frame");
        };
        held.push(Bytes::from(text));
    }
    assert!(held.iter().all(|frame| frame.len() == payload.len()));
    reads.load(Ordering::Relaxed) as f64 / frames as f64
}

#[tokio::test]
async fn a_frame_is_read_whole_while_earlier_frames_are_held() {
    // Two reads a frame (header, then the rest) is what a buffer that forgot its size does.
    let per_frame = reads_per_frame(60).await;
    assert!(
        per_frame < 1.5,
        "{per_frame} reads a frame: the read buffer lost its configured size"
    );
}

#[tokio::test]
async fn bytes_read_past_the_upgrade_come_first() {
    // A client that sent a frame before the 101 arrived: the frame is not lost.
    let (server, client) = tokio::io::duplex(4096);
    let config = WebSocketConfig::default().read_buffer_size(1024);
    let mut charger = WebSocketStream::from_raw_socket(client, Role::Client, None).await;
    charger
        .send(Message::text("[2,\"1\",\"Heartbeat\",{}]"))
        .await
        .unwrap();
    // What the handshake would have read past the request: here, the whole first frame.
    let mut server_side = server;
    let mut leftover = vec![0u8; 64];
    let n = tokio::io::AsyncReadExt::read(&mut server_side, &mut leftover)
        .await
        .unwrap();
    leftover.truncate(n);
    let mut server = websocket(server_side, leftover, config).await;
    charger
        .send(Message::text("[2,\"2\",\"Heartbeat\",{}]"))
        .await
        .unwrap();
    for id in ["1", "2"] {
        let Some(Ok(Message::Text(text))) = server.next().await else {
            panic!("no text frame");
        };
        assert_eq!(text.as_str(), format!("[2,\"{id}\",\"Heartbeat\",{{}}]"));
    }
}
