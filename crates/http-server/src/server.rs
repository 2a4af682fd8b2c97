//! The server of every HTTP listener (the REST API, the ops listeners, a gateway's probes):
//! hyper's HTTP/1 with the limits a stranger must not get past. A request head must arrive within the
//! header timeout, a whole request within the request timeout, and at most `max_connections`
//! are served at once (a semaphore, as mini-redis caps its connections); past the cap a
//! connection is answered 503 and closed (`cms_listener`).

mod deadline;
pub use deadline::AnswerBy;
#[cfg(test)]
mod tests;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::http::Uri;
use cms_listener::{ConnectionCap, Refusal};
use cms_tls::ServerTls;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use metrics::{Counter, Gauge, counter, gauge};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::OwnedSemaphorePermit;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// What a client past the connection cap is told.
const REFUSAL: Refusal = Refusal {
    listener: "HTTP listener",
    content_type: "application/json",
    body: r#"{"message":"The server is at its connection limit; retry later."}"#,
    retry_after_secs: 5,
    step: Duration::from_secs(1),
    at_once: 64,
};

/// Connections served at once by default. Kept well inside the 1,000 open files a gateway
/// leaves for the rest of its process (`cms up` serves chargers and HTTP in one process).
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// Time a client has for a request head by default.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a whole request may take by default, body and handler.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The limits of an ops listener (`--ops-addr`): probes and scrapes, a few at a time, each
/// quick.
pub const OPS_LIMITS: HttpLimits = HttpLimits {
    max_connections: 32,
    header_timeout: Duration::from_secs(5),
    request_timeout: Duration::from_secs(10),
};
/// The largest request head, and a connection's read buffer (hyper's default is ~400 KiB: 512
/// connections could hold 200 MiB): bearer tokens and the longest OAuth query fit many times
/// over; past it the answer is 431.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// What one HTTP listener lets a client have.
#[derive(Debug, Clone, Copy)]
pub struct HttpLimits {
    /// Connections served at once; past it a new one is answered 503 and closed.
    pub max_connections: usize,
    /// Time a client has to send a request head, counted from its connection or from the end
    /// of its previous response: hyper's header timer also runs on an idle kept-alive
    /// connection, so this is its idle limit too.
    pub header_timeout: Duration,
    /// Time for a whole request once its head is in: its body read and its handler. Past it
    /// the client gets 408 (its body had not arrived) or 503 (the server was slow).
    pub request_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
        }
    }
}

/// A rewrite of a request's URI before routing (path parameters are read while routing):
/// `None` leaves it as it came.
pub type UriRewrite = fn(&Uri) -> Option<Uri>;

/// How one listener serves: its name (the `listener` label of its metrics: `http`, `ops`), its
/// limits, TLS, and a rewrite of every request's URI before routing.
pub struct Served {
    pub name: &'static str,
    pub limits: HttpLimits,
    pub tls: Option<ServerTls>,
    pub rewrite: Option<UriRewrite>,
}

/// Serves `router` on `listener` until `shutdown` resolves, then stops accepting, lets the
/// requests in flight finish (each bounded by the request timeout), and returns. Each request
/// carries the client's address as `ConnectInfo<SocketAddr>`. Its metrics are labelled
/// `listener="http"`.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: HttpLimits,
    tls: Option<ServerTls>,
    shutdown: impl Future<Output = ()> + Send,
) {
    serve_as("http", listener, router, limits, tls, shutdown).await
}

/// [`serve`], its metrics labelled `listener=name` (`http`, `ops`).
pub async fn serve_as(
    name: &'static str,
    listener: TcpListener,
    router: Router,
    limits: HttpLimits,
    tls: Option<ServerTls>,
    shutdown: impl Future<Output = ()> + Send,
) {
    let served = Served {
        name,
        limits,
        tls,
        rewrite: None,
    };
    serve_with(listener, router, served, shutdown).await
}

/// [`serve`], as `served` says.
pub async fn serve_with(
    listener: TcpListener,
    router: Router,
    served: Served,
    shutdown: impl Future<Output = ()> + Send,
) {
    let Served {
        name,
        limits,
        tls,
        rewrite,
    } = served;
    let metrics = HttpMetrics::new(name, limits.max_connections);
    let cap = ConnectionCap::new(limits.max_connections, REFUSAL, metrics.refused.clone());
    let stop = CancellationToken::new();
    let tasks = TaskTracker::new();
    let mut shutdown = pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, say: back off instead of spinning.
                    tracing::warn!(error = %e, "HTTP accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            }
        };
        match cap.admit() {
            Some(permit) => {
                let connection = Connection {
                    router: router.clone(),
                    peer,
                    limits,
                    rewrite,
                    metrics: metrics.clone(),
                    _permit: permit,
                };
                match &tls {
                    Some(tls) => {
                        tasks.spawn(connection.serve_tls(tls.acceptor(), stream, stop.clone()))
                    }
                    None => tasks.spawn(connection.serve(stream, stop.clone())),
                };
            }
            None => cap.refuse(stream, peer, &tasks),
        }
    }
    drop(listener);
    stop.cancel();
    tasks.close();
    tasks.wait().await;
}

/// One accepted connection; its permit goes back when it ends.
struct Connection {
    router: Router,
    peer: SocketAddr,
    limits: HttpLimits,
    rewrite: Option<UriRewrite>,
    metrics: HttpMetrics,
    _permit: OwnedSemaphorePermit,
}

impl Connection {
    /// HTTPS: the TLS handshake first, within the header timeout (a client that never
    /// finishes it holds a socket like one that never sends its head).
    async fn serve_tls(self, acceptor: TlsAcceptor, stream: TcpStream, stop: CancellationToken) {
        let handshake = tokio::time::timeout(self.limits.header_timeout, acceptor.accept(stream));
        match handshake.await {
            Ok(Ok(stream)) => self.serve(stream, stop).await,
            Ok(Err(e)) => tracing::debug!(peer = %self.peer, error = %e, "TLS handshake failed"),
            Err(_) => tracing::debug!(peer = %self.peer, "TLS handshake timed out"),
        }
    }

    async fn serve<S>(self, stream: S, stop: CancellationToken)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        self.metrics.open.increment(1.0);
        let (router, peer, request_timeout) = (self.router, self.peer, self.limits.request_timeout);
        let rewrite = self.rewrite;
        let timeouts = self.metrics.timeouts.clone();
        let asked = Arc::new(AtomicBool::new(false));
        let first_request = asked.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            first_request.store(true, Ordering::Relaxed);
            let (mut parts, body) = request.into_parts();
            parts.extensions.insert(ConnectInfo(peer));
            if let Some(uri) = rewrite.and_then(|rewrite| rewrite(&parts.uri)) {
                parts.uri = uri;
            }
            let answer = deadline::answer_within(
                request_timeout,
                router.clone(),
                parts,
                body,
                timeouts.clone(),
            );
            async move { Ok::<_, Infallible>(answer.await) }
        });
        let connection = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(self.limits.header_timeout)
            .max_buf_size(MAX_HEAD_BYTES)
            .max_header_size(MAX_HEAD_BYTES)
            .serve_connection(TokioIo::new(stream), service);
        let mut connection = pin!(connection);
        let ended = tokio::select! {
            ended = connection.as_mut() => ended,
            () = stop.cancelled() => match asked.load(Ordering::Relaxed) {
                // Idle connections close now; one mid-request closes after its response.
                true => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
                // Nothing asked yet: hyper would wait for a first request, up to the header
                // timeout. Nothing was started either, so the connection just closes.
                false => Ok(()),
            },
        };
        if let Err(e) = ended {
            // A header timeout or a client gone: the client's doing, not worth more.
            tracing::debug!(peer = %self.peer, error = %e, "HTTP connection ended");
        }
        self.metrics.open.decrement(1.0);
    }
}

/// The listener's metrics, as handles made once.
#[derive(Clone)]
struct HttpMetrics {
    open: Gauge,
    refused: Counter,
    timeouts: deadline::TimeoutCounters,
}

impl HttpMetrics {
    fn new(listener: &'static str, max_connections: usize) -> Self {
        gauge!("cms_http_max_connections", "listener" => listener).set(max_connections as f64);
        HttpMetrics {
            open: gauge!("cms_http_connections_open", "listener" => listener),
            refused: counter!("cms_http_connections_refused_total", "listener" => listener),
            timeouts: deadline::TimeoutCounters::new(listener),
        }
    }
}
