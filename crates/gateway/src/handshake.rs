//! The HTTP side of a charger connection: read the upgrade request, look the charger up, admit
//! it by its security profile (`admission.rs`), and answer 101 (or 4xx before any upgrade).
//! Done by hand rather than through tungstenite's callback because the directory look-up is
//! asynchronous.

use crate::admission::{ClientSubject, Refusal, Transport, admit};
use crate::diagnostics::RefusedBecause;
use crate::directory::ChargerDirectory;
use crate::identity::ChargerIdentity;
use crate::tls_listener::TrustedProxies;
use cms_ocpp::OcppVersion;
use std::net::IpAddr;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

/// Largest request head accepted; real upgrade requests are a few hundred bytes.
const MAX_HEAD: usize = 8 * 1024;

/// A charger whose upgrade was accepted.
pub struct Accepted {
    pub identity: ChargerIdentity,
    /// The version agreed; `None` when the client offered no subprotocol we speak: the upgrade
    /// completes without the header (as the OCPP-J spec asks) and the session closes right after.
    pub version: Option<OcppVersion>,
    /// Whether the charger proved who it is (its registration asks for a password and it gave
    /// the right one); a session that did not may never replace one that did.
    pub authenticated: bool,
    /// Bytes the client sent after its request head (the start of its first frames).
    pub leftover: Vec<u8>,
}

/// Why a handshake did not become a session; `Display` is the metric label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    BadRequest,
    NotFound,
    /// A registered charger below its security profile, or without its credentials.
    Refused(Refusal),
    Unavailable,
    /// A health probe on the OCPP port, answered and done.
    Probe,
    ClientGone,
}

impl Rejection {
    pub fn label(self) -> &'static str {
        match self {
            Rejection::BadRequest => "bad_request",
            Rejection::NotFound => "unknown_charger",
            Rejection::Refused(refusal) => refusal.label(),
            Rejection::Unavailable => "directory_unavailable",
            Rejection::Probe => "probe",
            Rejection::ClientGone => "client_gone",
        }
    }
}

struct Request {
    path: String,
    upgrade: bool,
    key: Option<String>,
    version_13: bool,
    protocols: Vec<String>,
    authorization: Option<String>,
    /// The client certificate a trusted proxy forwarded, when one is configured.
    forwarded_certificate: Option<String>,
}

/// The version a client offering `offered` (its subprotocols, in its order) speaks with us:
/// `preferred` when it offers that one (a station offering both is a newer station with a
/// fallback), else the one it offers, else none.
pub fn choose(offered: &[String], preferred: OcppVersion) -> Option<OcppVersion> {
    let offers = |version: OcppVersion| offered.iter().any(|p| p == version.subprotocol());
    std::iter::once(preferred)
        .chain(OcppVersion::ALL)
        .find(|version| offers(*version))
}

/// What the gateway asks of every connection besides its registration: the version a client
/// offering both gets, and the operator's name a profile-3 certificate must carry as subject O.
#[derive(Debug, Clone, Copy)]
pub struct Terms<'a> {
    pub preferred: OcppVersion,
    pub organization: Option<&'a str>,
}

/// A refused connection's identity and cms's reason, for the charger's connection attempts
/// (`diagnostics.rs`): set when a handshake that named a charger is refused.
pub type Diagnosis = Option<(ChargerIdentity, RefusedBecause)>;

impl Refusal {
    /// The reason a charger's connection attempts give: a missing password told apart from a
    /// wrong one by whether the request carried credentials.
    fn because(self, gave_credentials: bool) -> RefusedBecause {
        match self {
            Refusal::Unauthorized if gave_credentials => RefusedBecause::WrongPassword,
            Refusal::Unauthorized => RefusedBecause::NoPassword,
            Refusal::TlsRequired => RefusedBecause::TlsRequired,
            Refusal::ClientCertificateRequired => RefusedBecause::NoCertificate,
            Refusal::ClientCertificateMismatch
            | Refusal::ClientCertificateOrganizationMismatch
            | Refusal::ClientCertificateInvalid => RefusedBecause::CertificateSubject,
        }
    }
}

/// Runs the handshake on a fresh connection from `peer` that came in over `transport`. A plain
/// connection from one of the `proxies` (a load balancer that terminated TLS) counts as TLS,
/// with the client certificate the proxy forwarded, once it verified. A refusal of a named
/// charger is told in `diagnosis`.
pub async fn accept<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    directory: &dyn ChargerDirectory,
    transport: Transport<'_>,
    peer: IpAddr,
    proxies: Option<&TrustedProxies>,
    terms: Terms<'_>,
    diagnosis: &mut Diagnosis,
) -> Result<Accepted, Rejection> {
    let proxy = proxies.filter(|p| matches!(transport, Transport::Plain) && p.trusts(peer));
    let header = proxy.map(|p| p.header.as_str());
    let (request, leftover) = read_request(stream, header).await?;
    let forwarded = match (proxy, &request.forwarded_certificate) {
        (Some(proxy), Some(value)) => match proxy.certificates.verify(value) {
            Ok(certificate) => Some(ClientSubject::from(&certificate)),
            Err(e) => {
                tracing::info!(%peer, error = %e, "forwarded client certificate refused");
                let refusal = Refusal::ClientCertificateInvalid;
                let (status, body) = refusal.answer();
                return respond(stream, status, &[], body, Rejection::Refused(refusal)).await;
            }
        },
        (Some(_), None) => Some(ClientSubject::default()),
        (None, _) => None,
    };
    let transport = match &forwarded {
        Some(client) => Transport::Tls { client },
        None => transport,
    };
    let Some(segment) = request.path.strip_prefix("/ocpp/") else {
        return match request.path.as_str() {
            "/healthz" | "/readyz" => {
                respond(stream, "200 OK", &[], "ok\n", Rejection::Probe).await
            }
            _ => {
                respond(
                    stream,
                    "404 Not Found",
                    &[],
                    "not found\n",
                    Rejection::NotFound,
                )
                .await
            }
        };
    };
    let identity = match ChargerIdentity::from_path_segment(segment) {
        Ok(identity) => identity,
        Err(e) => {
            return respond(
                stream,
                "400 Bad Request",
                &[],
                &format!("{e}\n"),
                Rejection::BadRequest,
            )
            .await;
        }
    };
    let (true, Some(key), true) = (request.upgrade, &request.key, request.version_13) else {
        let body = "expected a websocket upgrade (version 13)\n";
        return respond(stream, "400 Bad Request", &[], body, Rejection::BadRequest).await;
    };
    let registration = match directory.lookup(identity.as_str()).await {
        Ok(Some(registration)) => registration,
        Ok(None) => {
            *diagnosis = Some((identity.clone(), RefusedBecause::UnknownIdentity));
            let body = format!("no charger with identity {identity}\n");
            return respond(stream, "404 Not Found", &[], &body, Rejection::NotFound).await;
        }
        Err(e) => {
            tracing::error!(%identity, error = %e, "handshake refused: directory unavailable");
            let body = "charger directory unavailable, retry later\n";
            return respond(
                stream,
                "503 Service Unavailable",
                &[],
                body,
                Rejection::Unavailable,
            )
            .await;
        }
    };
    let authorization = request.authorization.as_deref();
    let admitted = admit(
        &identity,
        &registration,
        transport,
        authorization,
        terms.organization,
    );
    let authenticated = match admitted {
        Ok(authenticated) => authenticated,
        Err(refusal) => {
            // Who and why, never the credentials.
            tracing::info!(%identity, reason = refusal.label(), "handshake refused");
            let because = refusal.because(authorization.is_some());
            *diagnosis = Some((identity.clone(), because));
            let (status, body) = refusal.answer();
            let challenge = [("WWW-Authenticate", "Basic realm=\"cms\", charset=\"UTF-8\"")];
            let headers: &[(&str, &str)] = match refusal {
                Refusal::Unauthorized => &challenge,
                _ => &[],
            };
            return respond(stream, status, headers, body, Rejection::Refused(refusal)).await;
        }
    };
    let version = choose(&request.protocols, terms.preferred);
    let mut response = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n",
        derive_accept_key(key.as_bytes())
    );
    if let Some(version) = version {
        response.push_str("Sec-WebSocket-Protocol: ");
        response.push_str(version.subprotocol());
        response.push_str("\r\n");
    }
    response.push_str("\r\n");
    stream
        .write_all(response.as_bytes())
        .await
        .map_err(|_| Rejection::ClientGone)?;
    // Over TLS the answer may sit in the session's buffer: a request that came with the
    // client's Finished is read before the socket ever polled writable on its shard, and
    // nothing else would flush it before the charger gives up waiting.
    stream.flush().await.map_err(|_| Rejection::ClientGone)?;
    Ok(Accepted {
        identity,
        version,
        authenticated,
        leftover,
    })
}

async fn read_request<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    forwarded_header: Option<&str>,
) -> Result<(Request, Vec<u8>), Rejection> {
    let mut buf = Vec::with_capacity(1024);
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut parsed = httparse::Request::new(&mut headers);
        match parsed.parse(&buf) {
            Ok(httparse::Status::Complete(head_len)) => {
                if parsed.method != Some("GET") {
                    return respond(
                        stream,
                        "405 Method Not Allowed",
                        &[],
                        "GET only\n",
                        Rejection::BadRequest,
                    )
                    .await;
                }
                let request = to_request(&parsed, forwarded_header);
                let leftover = buf[head_len..].to_vec();
                return Ok((request, leftover));
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => {}
            Ok(httparse::Status::Partial) => {
                return respond(
                    stream,
                    "431 Request Header Fields Too Large",
                    &[],
                    "",
                    Rejection::BadRequest,
                )
                .await;
            }
            Err(_) => {
                return respond(
                    stream,
                    "400 Bad Request",
                    &[],
                    "malformed request\n",
                    Rejection::BadRequest,
                )
                .await;
            }
        }
        let mut chunk = [0u8; 1024];
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|_| Rejection::ClientGone)?;
        if n == 0 {
            return Err(Rejection::ClientGone);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn to_request(parsed: &httparse::Request<'_, '_>, forwarded_header: Option<&str>) -> Request {
    let headers: &[httparse::Header<'_>] = parsed.headers;
    let has_token = |name: &str, token: &str| {
        header_values(headers, name)
            .any(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    };
    let path = parsed.path.unwrap_or("/");
    Request {
        path: path.split('?').next().unwrap_or(path).to_string(),
        upgrade: has_token("upgrade", "websocket") && has_token("connection", "upgrade"),
        key: header_values(headers, "sec-websocket-key")
            .next()
            .map(|k| k.trim().to_string()),
        version_13: header_values(headers, "sec-websocket-version").any(|v| v.trim() == "13"),
        protocols: header_values(headers, "sec-websocket-protocol")
            .flat_map(|v| v.split(','))
            .map(|p| p.trim().to_string())
            .collect(),
        authorization: header_values(headers, "authorization")
            .next()
            .map(str::to_string),
        // Every line of the header, in order (as one value, RFC 9110): a proxy that adds its
        // own line after the client's puts the nearest element last, where it is read.
        forwarded_certificate: forwarded_header
            .map(|name| header_values(headers, name).collect::<Vec<_>>())
            .filter(|lines| !lines.is_empty())
            .map(|lines| lines.join(",")),
    }
}

/// The values of every header with this name (case-insensitive), as text.
fn header_values<'a>(
    headers: &'a [httparse::Header<'a>],
    name: &'a str,
) -> impl Iterator<Item = &'a str> + 'a {
    headers
        .iter()
        .filter(move |h| h.name.eq_ignore_ascii_case(name))
        .filter_map(|h| std::str::from_utf8(h.value).ok())
}

/// Writes a plain HTTP response and ends the exchange with `rejection`.
async fn respond<S: AsyncRead + AsyncWrite + Unpin, T>(
    stream: &mut S,
    status: &str,
    extra_headers: &[(&str, &str)],
    body: &str,
    rejection: Rejection,
) -> Result<T, Rejection> {
    let mut response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in extra_headers {
        response.push_str(&format!("{name}: {value}\r\n"));
    }
    response.push_str("\r\n");
    response.push_str(body);
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
    Err(rejection)
}

#[cfg(test)]
mod tests;
