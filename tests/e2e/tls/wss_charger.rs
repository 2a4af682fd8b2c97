//! A charger on wss with rustls as its TLS stack, for the connections a test keeps open while
//! other clients come and go: it trusts the test CA, may send Basic credentials, remembers the
//! certificate the server showed it, and makes OCPP calls. Beside it, a bare TLS handshake (to
//! see the certificate served now) and a client that decides which bytes share a write.

use crate::support::REPLY_TIMEOUT;
use base64::Engine;
use cms_tls::rustls::pki_types::pem::PemObject;
use cms_tls::rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use cms_tls::rustls::{ClientConfig, ClientConnection, HandshakeKind, RootCertStore};
use cms_tls::test_pki::{ClientFiles, TestPki};
use cms_tls::tokio_rustls::TlsConnector;
use cms_tls::tokio_rustls::client::TlsStream;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

pub struct WssCharger {
    ws: WebSocketStream<TlsStream<TcpStream>>,
    /// The leaf certificate the server presented in this connection's handshake.
    pub served: CertificateDer<'static>,
    /// Whether the handshake resumed an earlier session.
    pub resumed: bool,
    next_id: u64,
}

impl WssCharger {
    /// Opens `url` (`wss://127.0.0.1:PORT/ocpp/ID`) offering `ocpp1.6`, trusting the PKI's
    /// CA, with `Authorization: Basic` for `identity:password` when a password is given; fails
    /// the test unless the server lets it in.
    pub async fn connect(pki: &TestPki, url: &str, basic: Option<(&str, &str)>) -> WssCharger {
        let config = Arc::new(client_config(&pki.ca_certificate()));
        match WssCharger::connect_with(&config, url, basic).await {
            Ok(charger) => charger,
            Err(e) => panic!("{e}"),
        }
    }

    /// As [`WssCharger::connect`] with a client configuration of the test's (a certificate,
    /// a session store: see [`profile_3_client`]); what went wrong when the charger is not let
    /// in and a Heartbeat answered.
    pub async fn connect_with(
        config: &Arc<ClientConfig>,
        url: &str,
        basic: Option<(&str, &str)>,
    ) -> Result<WssCharger, String> {
        let mut request = url.into_client_request().expect("a valid wss url");
        let headers = request.headers_mut();
        headers.insert(
            "Sec-WebSocket-Protocol",
            HeaderValue::from_static("ocpp1.6"),
        );
        if let Some((user, password)) = basic {
            let token =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            let value = HeaderValue::from_str(&format!("Basic {token}")).expect("a header value");
            headers.insert("Authorization", value);
        }
        let authority = request.uri().authority().expect("a host").to_string();
        let handshake = tls_connect_with(config, &authority);
        let tls = match tokio::time::timeout(REPLY_TIMEOUT, handshake).await {
            Ok(Ok(tls)) => tls,
            Ok(Err(e)) => return Err(format!("expected a TLS handshake with {url}, got: {e}")),
            Err(_) => {
                let took =
                    format!("the TLS handshake with {url} took longer than {REPLY_TIMEOUT:?}");
                return Err(took);
            }
        };
        let served = leaf_of(&tls);
        let resumed = tls.get_ref().1.handshake_kind() == Some(HandshakeKind::Resumed);
        let upgrade = tokio_tungstenite::client_async(request, tls);
        let charger = match tokio::time::timeout(REPLY_TIMEOUT, upgrade).await {
            Ok(Ok((ws, _))) => WssCharger {
                ws,
                served,
                resumed,
                next_id: 0,
            },
            Ok(Err(e)) => {
                return Err(format!(
                    "expected {url} to let the rustls charger in, got: {e}"
                ));
            }
            Err(_) => {
                return Err(format!(
                    "TLS is up, but no answer to the websocket upgrade came from {url} within \
                     {REPLY_TIMEOUT:?}"
                ));
            }
        };
        Ok(charger)
    }

    /// Sends a CALL and returns the CALLRESULT payload, failing the test on anything else.
    pub async fn call_result(&mut self, action: &str, payload: Value) -> Value {
        self.next_id += 1;
        let id = format!("wss-{}", self.next_id);
        let frame = json!([2, id, action, payload]).to_string();
        let exchange = async {
            self.ws.send(Message::text(frame)).await?;
            while let Some(message) = self.ws.next().await {
                let Message::Text(text) = message? else {
                    continue;
                };
                let answer: Value = serde_json::from_str(&text).expect("a JSON frame");
                if answer[0] == 2 {
                    // cms's own call after a boot (GetConfiguration): nothing to configure here.
                    let reply = json!([3, answer[1], {"configurationKey": []}]).to_string();
                    self.ws.send(Message::text(reply)).await?;
                    continue;
                }
                return Ok(answer);
            }
            Err(WsError::ConnectionClosed)
        };
        let answer = match tokio::time::timeout(REPLY_TIMEOUT, exchange).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => panic!("expected an answer to {action} over wss, the connection: {e}"),
            Err(_) => panic!("no answer to {action} over wss within {REPLY_TIMEOUT:?}"),
        };
        assert_eq!(
            (&answer[0], &answer[1]),
            (&json!(3), &json!(id)),
            "expected a CALLRESULT to {action} {id}, got {answer}"
        );
        answer[2].clone()
    }

    /// A Heartbeat answered with the current time: proof the connection still works.
    pub async fn heartbeat(&mut self) {
        let answer = self.call_result("Heartbeat", json!({})).await;
        assert!(
            answer["currentTime"].is_string(),
            "Heartbeat answer: {answer}"
        );
    }
}

/// The leaf certificate a TLS handshake with `authority` (`127.0.0.1:PORT`) shows now; the
/// connection then closes without a word of HTTP.
pub async fn served_certificate(pki: &TestPki, authority: &str) -> CertificateDer<'static> {
    match tokio::time::timeout(REPLY_TIMEOUT, tls_connect(pki, authority)).await {
        Ok(Ok(tls)) => leaf_of(&tls),
        Ok(Err(e)) => panic!("expected a TLS handshake with {authority}, got: {e}"),
        Err(_) => panic!("the TLS handshake with {authority} took over {REPLY_TIMEOUT:?}"),
    }
}

async fn tls_connect(pki: &TestPki, authority: &str) -> std::io::Result<TlsStream<TcpStream>> {
    tls_connect_with(&Arc::new(client_config(&pki.ca_certificate())), authority).await
}

async fn tls_connect_with(
    config: &Arc<ClientConfig>,
    authority: &str,
) -> std::io::Result<TlsStream<TcpStream>> {
    let connector = TlsConnector::from(config.clone());
    let tcp = TcpStream::connect(authority).await?;
    let name = ServerName::try_from("127.0.0.1").expect("an IP address");
    connector.connect(name, tcp).await
}

fn leaf_of(tls: &TlsStream<TcpStream>) -> CertificateDer<'static> {
    let chain = tls.get_ref().1.peer_certificates();
    chain.expect("the server's chain")[0].clone().into_owned()
}

/// The leaf (first) certificate of a PEM chain file, as the server would present it.
pub fn leaf_certificate(chain: &Path) -> CertificateDer<'static> {
    CertificateDer::pem_file_iter(chain)
        .expect("a readable PEM chain")
        .next()
        .expect("at least one certificate")
        .expect("a PEM certificate")
}

/// Trusts only `ca`; no client certificate; no resumption, so each handshake shows the
/// server's current certificate.
fn client_config(ca: &Path) -> ClientConfig {
    let mut roots = RootCertStore::empty();
    for certificate in CertificateDer::pem_file_iter(ca).expect("a readable CA file") {
        roots
            .add(certificate.expect("a PEM certificate"))
            .expect("a CA certificate");
    }
    let provider = Arc::new(cms_tls::rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("rustls's default versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.resumption = cms_tls::rustls::client::Resumption::disabled();
    config
}

/// A profile-3 charger's TLS: the PKI's CA trusted, `certificate` presented, and sessions kept
/// in memory, so that a later connection with the same configuration resumes.
pub fn profile_3_client(pki: &TestPki, certificate: &ClientFiles) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    for ca in CertificateDer::pem_file_iter(pki.ca_certificate()).expect("a readable CA file") {
        roots
            .add(ca.expect("a PEM certificate"))
            .expect("a CA certificate");
    }
    let chain = CertificateDer::pem_file_iter(&certificate.certificate)
        .expect("a readable certificate")
        .collect::<Result<Vec<_>, _>>()
        .expect("PEM certificates");
    let key = PrivateKeyDer::from_pem_file(&certificate.private_key).expect("a PEM key");
    let provider = Arc::new(cms_tls::rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("rustls's default versions")
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)
        .expect("a client certificate and its key");
    config.resumption = cms_tls::rustls::client::Resumption::in_memory_sessions(8);
    Arc::new(config)
}

/// Opens a TLS connection to `authority` and sends the client's last handshake flight (its
/// Finished) and the websocket upgrade for `identity` in one write, as a TLS 1.3 client in a
/// hurry may; returns the status line of the answer, or what happened instead.
pub async fn upgrade_sent_with_the_finished(
    pki: &TestPki,
    authority: &str,
    identity: &str,
) -> Result<String, String> {
    let config = Arc::new(client_config(&pki.ca_certificate()));
    let (authority, identity) = (authority.to_string(), identity.to_string());
    let blocking = move || upgrade_in_one_write(config, &authority, &identity);
    tokio::task::spawn_blocking(blocking)
        .await
        .expect("the blocking client")
}

/// rustls without tokio: the client decides what goes on the wire in which write.
fn upgrade_in_one_write(
    config: Arc<ClientConfig>,
    authority: &str,
    identity: &str,
) -> Result<String, String> {
    use std::io::{Read, Write};
    let mut tcp = std::net::TcpStream::connect(authority).map_err(fail("connect"))?;
    tcp.set_read_timeout(Some(REPLY_TIMEOUT))
        .map_err(fail("set a read timeout"))?;
    let name = ServerName::try_from("127.0.0.1").expect("an IP address");
    let mut tls = ClientConnection::new(config, name).map_err(|e| e.to_string())?;
    // Until the server's last flight is in; the client's Finished then waits, unsent.
    while tls.is_handshaking() {
        if tls.wants_write() {
            tls.write_tls(&mut tcp)
                .map_err(fail("write the handshake"))?;
        } else {
            read_some(&mut tls, &mut tcp)?;
        }
    }
    let request = format!(
        "GET /ocpp/{identity} HTTP/1.1\r\nHost: {authority}\r\nUpgrade: websocket\r\n\
         Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ocpp1.6\r\n\r\n"
    );
    tls.writer()
        .write_all(request.as_bytes())
        .map_err(fail("buffer the request"))?;
    let mut flight = Vec::new();
    while tls.wants_write() {
        tls.write_tls(&mut flight).map_err(fail("encrypt"))?;
    }
    tcp.write_all(&flight)
        .map_err(fail("send Finished and the request"))?;
    let mut answer = Vec::new();
    loop {
        read_some(&mut tls, &mut tcp).map_err(|e| format!("waiting for the answer: {e}"))?;
        let mut buffer = [0; 4096];
        match tls.reader().read(&mut buffer) {
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(format!("reading the answer: {e}")),
        }
        if let Some(end) = answer.windows(2).position(|w| w == b"\r\n") {
            return Ok(String::from_utf8_lossy(&answer[..end]).into_owned());
        }
    }
}

fn fail(what: &'static str) -> impl Fn(std::io::Error) -> String {
    move |e| format!("{what}: {e}")
}

/// One read from the socket, processed.
fn read_some(tls: &mut ClientConnection, tcp: &mut std::net::TcpStream) -> Result<(), String> {
    match tls.read_tls(tcp) {
        Ok(0) => Err("the server closed the connection".to_string()),
        Ok(_) => tls
            .process_new_packets()
            .map(drop)
            .map_err(|e| e.to_string()),
        Err(e) => Err(format!("nothing came within {REPLY_TIMEOUT:?} ({e})")),
    }
}
