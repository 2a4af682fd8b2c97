//! For tests: a minimal central system on a loopback port, over ws or wss (a throwaway CA from
//! `cms_tls::test_pki`), that accepts any charger and answers every CALL with an accepting
//! CALLRESULT, as the bare server does (MeterValues after a delay, if asked).

use crate::connect::Target;
use crate::tls::Tls;
use cms_tls::test_pki::TestPki;
use cms_tls::{ServerTls, TlsFiles};
use futures_util::{SinkExt, StreamExt};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};

pub struct Central {
    pub target: Target,
    /// The client side of a wss central, trusting its CA.
    pub tls: Option<Tls>,
    /// Websocket upgrades it accepted.
    pub upgrades: Arc<AtomicU64>,
    _pki: Option<(tempfile::TempDir, TestPki)>,
}

impl Central {
    /// Starts serving on the current runtime, over wss with `tls`; `resumption` for the
    /// clients' side, with tickets for 64 chargers.
    pub async fn start(tls: bool, resumption: bool) -> Central {
        Self::start_with(tls, resumption, Duration::ZERO).await
    }

    /// A plain ws central that answers each MeterValues `delay` after it came.
    pub async fn slow(delay: Duration) -> Central {
        Self::start_with(false, false, delay).await
    }

    async fn start_with(tls: bool, resumption: bool, delay: Duration) -> Central {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let std::net::SocketAddr::V4(addr) = listener.local_addr().unwrap() else {
            unreachable!("bound to an IPv4 address")
        };
        let upgrades = Arc::new(AtomicU64::new(0));
        let target = Target { addr, tls };
        if !tls {
            tokio::spawn(serve(listener, None, upgrades.clone(), delay));
            return Central {
                target,
                tls: None,
                upgrades,
                _pki: None,
            };
        }
        let dir = tempfile::tempdir().unwrap();
        let pki = TestPki::create(dir.path());
        let files = TlsFiles::new(pki.server_chain(), pki.server_key());
        let server = ServerTls::load("test", files).unwrap();
        tokio::spawn(serve(listener, Some(server), upgrades.clone(), delay));
        let client = Tls::new(&pki.ca_certificate(), "127.0.0.1", resumption, 64).unwrap();
        Central {
            target,
            tls: Some(client),
            upgrades,
            _pki: Some((dir, pki)),
        }
    }
}

async fn serve(
    listener: TcpListener,
    tls: Option<ServerTls>,
    upgrades: Arc<AtomicU64>,
    delay: Duration,
) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            return;
        };
        let (tls, upgrades) = (tls.clone(), upgrades.clone());
        tokio::spawn(async move {
            match tls {
                None => answer(tcp, &upgrades, delay).await,
                Some(tls) => {
                    if let Ok(stream) = tls.acceptor().accept(tcp).await {
                        answer(stream, &upgrades, delay).await
                    }
                }
            }
        });
    }
}

// The callback's type, and so its large error, is tungstenite's.
#[allow(clippy::result_large_err)]
fn agree_ocpp(request: &Request, mut response: Response) -> Result<Response, ErrorResponse> {
    let offered = request.headers().get("Sec-WebSocket-Protocol").cloned();
    let agreed = offered.unwrap_or_else(|| "ocpp1.6".parse().unwrap());
    response
        .headers_mut()
        .insert("Sec-WebSocket-Protocol", agreed);
    Ok(response)
}

/// One charger's connection: the upgrade (the subprotocol offered agreed), then an answer to
/// every CALL that accepts whatever it is, in 1.6's shapes and in 2.0.1's.
async fn answer<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    upgrades: &AtomicU64,
    delay: Duration,
) {
    let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(stream, agree_ocpp).await else {
        return;
    };
    upgrades.fetch_add(1, Ordering::Relaxed);
    while let Some(Ok(message)) = ws.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        let frame: Vec<serde_json::Value> = serde_json::from_str(text.as_str()).unwrap();
        if frame[0] == 2 {
            if frame[2] == "MeterValues" && !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            let answer = serde_json::json!([3, frame[1], {
                "status": "Accepted", "currentTime": "2025-01-01T00:00:00Z", "interval": 60,
                "transactionId": 1, "idTagInfo": {"status": "Accepted"},
                "idTokenInfo": {"status": "Accepted"}
            }]);
            if ws.send(Message::text(answer.to_string())).await.is_err() {
                return;
            }
        }
    }
}
