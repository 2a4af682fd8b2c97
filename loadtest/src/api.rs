//! A client of cms's REST API on loopback, for the command generator: HTTP/1.1 over one
//! kept-alive connection (hyper's own client connection), a bearer token, JSON bodies. Its
//! connections are `--http-reads`' too.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Body;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::net::SocketAddrV4;
use tokio::net::TcpStream;

/// Why a request got no HTTP answer.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("cannot connect to the API: {0}")]
    Connect(#[source] std::io::Error),
    #[error("HTTP: {0}")]
    Http(#[from] hyper::Error),
    #[error("bad request: {0}")]
    Request(#[from] hyper::http::Error),
}

/// One connection to the API, opened on first use and again after it closed.
pub struct ApiClient {
    addr: SocketAddrV4,
    authorization: String,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl ApiClient {
    pub fn new(addr: SocketAddrV4, token: &str) -> Self {
        ApiClient {
            addr,
            authorization: format!("Bearer {token}"),
            sender: None,
        }
    }

    /// Sends a request and reads the whole answer: its status and body.
    pub async fn request(
        &mut self,
        method: Method,
        path: &str,
        body: &'static str,
    ) -> Result<(u16, Bytes), ApiError> {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header(HOST, self.addr.to_string())
            .header(AUTHORIZATION, &self.authorization)
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from_static(body.as_bytes())))?;
        // Taken for the request and put back after a whole answer: a connection that failed
        // halfway is dropped, and the next request opens a new one.
        let kept = match self.sender.take() {
            Some(mut sender) => sender.ready().await.is_ok().then_some(sender),
            None => None,
        };
        let mut sender = match kept {
            Some(sender) => sender,
            None => self.connect().await?,
        };
        let response = sender.send_request(request).await?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await?.to_bytes();
        self.sender = Some(sender);
        Ok((status, body))
    }

    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, ApiError> {
        connect(self.addr).await
    }
}

/// A new HTTP/1.1 connection to `addr`, its requests carrying bodies of type `B` (the command
/// generator's are JSON, `--http-reads` sends none).
pub async fn connect<B>(addr: SocketAddrV4) -> Result<SendRequest<B>, ApiError>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let stream = TcpStream::connect(addr).await.map_err(ApiError::Connect)?;
    // Requests are small and each waits for its answer: no Nagle delay on them.
    stream.set_nodelay(true).map_err(ApiError::Connect)?;
    let (sender, connection) = http1::handshake(TokioIo::new(stream)).await?;
    // Drives the connection; ends when the sender is dropped or the server closes it.
    tokio::spawn(connection);
    Ok(sender)
}

/// The uuids of the chargers named in `identities`, read from `GET /api/v3/chargers` page by
/// page (25 a page) until all are found or the list ends.
pub async fn charger_uuids(
    client: &mut ApiClient,
    identities: &[String],
) -> Result<HashMap<String, String>, String> {
    charger_uuids_among(client, identities, None).await
}

/// The same among the chargers whose identity contains `search` (`filter[search]`, URL-safe
/// text): a few among a fleet of 100,000 without walking its 4,000 pages.
pub async fn charger_uuids_among(
    client: &mut ApiClient,
    identities: &[String],
    search: Option<&str>,
) -> Result<HashMap<String, String>, String> {
    let filter = search.map_or(String::new(), |s| format!("&filter[search]={s}"));
    let wanted: std::collections::HashSet<&str> = identities.iter().map(String::as_str).collect();
    let mut found = HashMap::with_capacity(identities.len());
    for page in 1u64.. {
        let path = format!("/api/v3/chargers?page={page}{filter}");
        let (status, body) = client
            .request(Method::GET, &path, "")
            .await
            .map_err(|e| format!("GET {path}: {e}"))?;
        if status != 200 {
            let text = String::from_utf8_lossy(&body);
            return Err(format!("GET {path}: {status} {text}"));
        }
        let page: ChargerPage =
            serde_json::from_slice(&body).map_err(|e| format!("GET {path}: {e}"))?;
        for charger in page.data {
            if wanted.contains(charger.identity.as_str()) {
                found.insert(charger.identity, charger.uuid);
            }
        }
        if page.links.next.is_none() || found.len() == wanted.len() {
            break;
        }
    }
    Ok(found)
}

/// What the generator reads of a page of chargers.
#[derive(serde::Deserialize)]
struct ChargerPage {
    data: Vec<ListedCharger>,
    links: Links,
}

#[derive(serde::Deserialize)]
struct ListedCharger {
    uuid: String,
    identity: String,
}

#[derive(serde::Deserialize)]
struct Links {
    next: Option<String>,
}
