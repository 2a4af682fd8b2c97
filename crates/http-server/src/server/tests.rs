//! The server on port 0, spoken to in raw bytes.

use super::*;
use axum::body::Bytes;
use axum::routing::{get, post};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Far beyond any limit set here: only a server that never acts fails.
const BOUND: Duration = Duration::from_secs(10);

struct Running {
    addr: SocketAddr,
    stop: CancellationToken,
    served: tokio::task::JoinHandle<()>,
}

async fn start(limits: HttpLimits) -> Running {
    let router = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/peer",
            get(|ConnectInfo(peer): ConnectInfo<SocketAddr>| async move { peer.to_string() }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                "done"
            }),
        )
        .route("/stuck", get(std::future::pending::<()>))
        .route("/echo", post(|body: Bytes| async move { body }));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let served = tokio::spawn(serve(
        listener,
        router,
        limits,
        None,
        stop.clone().cancelled_owned(),
    ));
    Running { addr, stop, served }
}

/// Sends `request` and reads one response: status, head, body.
async fn exchange(stream: &mut TcpStream, request: &str) -> (u16, String, String) {
    stream.write_all(request.as_bytes()).await.unwrap();
    let read = async {
        let mut seen = Vec::new();
        let mut chunk = [0u8; 1024];
        loop {
            if let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&seen[..end]).to_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                if seen.len() >= end + 4 + length {
                    let status = head[9..12].parse().unwrap();
                    let body = String::from_utf8_lossy(&seen[end + 4..end + 4 + length]);
                    return (status, head, body.to_string());
                }
            }
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "connection ended before a whole response: {seen:?}");
            seen.extend_from_slice(&chunk[..n]);
        }
    };
    tokio::time::timeout(BOUND, read)
        .await
        .expect("no response")
}

async fn is_closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let closed = async {
        let mut chunk = [0u8; 1024];
        while let Ok(1..) = stream.read(&mut chunk).await {}
    };
    tokio::time::timeout(limit, closed).await.is_ok()
}

const GET: &str = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";

#[tokio::test]
async fn a_handler_sees_the_address_the_client_connects_from() {
    let server = start(HttpLimits::default()).await;
    let mut client = TcpStream::connect(server.addr).await.unwrap();
    let (status, _, body) = exchange(&mut client, "GET /peer HTTP/1.1\r\nHost: t\r\n\r\n").await;
    assert_eq!(status, 200);
    assert_eq!(body, client.local_addr().unwrap().to_string());
}

#[tokio::test]
async fn a_handler_that_outlives_the_request_timeout_is_answered_503_with_a_message() {
    let limits = HttpLimits {
        request_timeout: Duration::from_millis(200),
        ..HttpLimits::default()
    };
    let server = start(limits).await;
    let mut client = TcpStream::connect(server.addr).await.unwrap();
    let (status, head, body) =
        exchange(&mut client, "GET /stuck HTTP/1.1\r\nHost: t\r\n\r\n").await;
    assert_eq!(status, 503);
    assert!(head.contains("retry-after: "), "{head}");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(body["message"].is_string(), "{body}");
    // The server's slowness is no reason to drop the client's connection.
    assert_eq!(exchange(&mut client, GET).await.0, 200);
}

#[tokio::test]
async fn a_body_that_stops_arriving_is_answered_408_and_its_connection_closed() {
    let limits = HttpLimits {
        request_timeout: Duration::from_millis(200),
        ..HttpLimits::default()
    };
    let server = start(limits).await;
    let mut client = TcpStream::connect(server.addr).await.unwrap();
    let request = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nhalf";
    let (status, head, body) = exchange(&mut client, request).await;
    assert_eq!(status, 408);
    assert!(head.contains("connection: close"), "{head}");
    assert!(body.contains("\"message\""), "{body}");
    assert!(is_closed_within(&mut client, BOUND).await);
}

#[tokio::test]
async fn a_request_head_over_64_kib_is_answered_431() {
    let server = start(HttpLimits::default()).await;
    let mut client = TcpStream::connect(server.addr).await.unwrap();
    let padding = "x".repeat(70 * 1024);
    let request = format!("GET /healthz HTTP/1.1\r\nHost: t\r\nX-Pad: {padding}\r\n\r\n");
    assert_eq!(exchange(&mut client, &request).await.0, 431);
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_after_the_header_timeout() {
    let limits = HttpLimits {
        header_timeout: Duration::from_millis(200),
        ..HttpLimits::default()
    };
    let server = start(limits).await;
    let mut client = TcpStream::connect(server.addr).await.unwrap();
    assert_eq!(exchange(&mut client, GET).await.0, 200);
    assert!(is_closed_within(&mut client, BOUND).await);
}

#[tokio::test]
async fn past_the_cap_a_connection_is_refused_until_one_closes() {
    let limits = HttpLimits {
        max_connections: 1,
        ..HttpLimits::default()
    };
    let server = start(limits).await;
    let mut first = TcpStream::connect(server.addr).await.unwrap();
    assert_eq!(exchange(&mut first, GET).await.0, 200);

    let mut second = TcpStream::connect(server.addr).await.unwrap();
    let (status, head, _) = exchange(&mut second, GET).await;
    assert_eq!(status, 503);
    assert!(head.contains("connection: close"), "{head}");
    assert_eq!(exchange(&mut first, GET).await.0, 200);

    drop(first);
    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        let mut next = TcpStream::connect(server.addr).await.unwrap();
        if exchange(&mut next, GET).await.0 == 200 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "still refused");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn shutdown_lets_the_request_in_flight_finish() {
    let server = start(HttpLimits::default()).await;
    let mut client = TcpStream::connect(server.addr).await.unwrap();
    client
        .write_all(b"GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    // The request is in its handler once the server answers another on a second connection.
    let mut other = TcpStream::connect(server.addr).await.unwrap();
    assert_eq!(exchange(&mut other, GET).await.0, 200);
    server.stop.cancel();

    let (status, _, body) = exchange(&mut client, "").await;
    assert_eq!((status, body.as_str()), (200, "done"));
    tokio::time::timeout(BOUND, server.served)
        .await
        .expect("the server stops once its requests are done")
        .unwrap();
}

#[tokio::test]
async fn shutdown_does_not_wait_for_a_connection_that_asked_nothing() {
    let limits = HttpLimits {
        header_timeout: Duration::from_secs(600),
        ..HttpLimits::default()
    };
    let server = start(limits).await;
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    // Served (so accepted before the stop) once another connection is answered.
    let mut other = TcpStream::connect(server.addr).await.unwrap();
    assert_eq!(exchange(&mut other, GET).await.0, 200);
    drop(other);
    server.stop.cancel();

    // Far inside the header timeout it would otherwise wait for.
    tokio::time::timeout(BOUND, server.served)
        .await
        .expect("the server stops without waiting for the silent connection")
        .unwrap();
    assert!(is_closed_within(&mut silent, BOUND).await);
}
