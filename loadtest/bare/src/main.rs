//! `cms-bare-central`: the ceiling of the comparison (`loadtest/compare`). A plain tokio +
//! tokio-tungstenite websocket server that answers every OCPP CALL `[2,"id",...]` with the empty
//! CALLRESULT `[3,"id",{}]`. It finds the id by scanning the first bytes of the frame and never
//! parses the JSON, so what it costs is the websocket and the runtime alone: whatever a central
//! system does on top shows as the distance to this server in the same run.

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use std::net::{SocketAddr, SocketAddrV4};
use std::process::ExitCode;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::accept_hdr_async_with_config;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// The subprotocols it agrees to, the first one offered of these.
const SUBPROTOCOLS: [&str; 2] = ["ocpp1.6", "ocpp2.0.1"];

#[derive(Parser, Debug)]
#[command(
    about = "Answer every OCPP CALL with an empty CALLRESULT, unparsed: the load tests' ceiling",
    long_about = "Accepts websockets on any path (subprotocol ocpp1.6 or ocpp2.0.1 when offered) and answers \
                  each text frame [2,\"id\",...] with [3,\"id\",{}], finding the id by scanning \
                  bytes. Anything else is ignored. Loopback only."
)]
struct Args {
    /// Where to listen, on loopback (an IPv4 address in 127.0.0.0/8); port 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:9000", value_parser = parse_loopback)]
    listen: SocketAddrV4,
    /// Runtime worker threads.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: u64,
    /// Bytes of each connection's read buffer. tungstenite's default (128 KiB, zeroed, so
    /// resident) makes the ceiling cost ~135 KiB per idle connection; with 4 KiB it costs
    /// about what tungstenite did before 0.25 made 128 KiB the default.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(256..=1 << 20))]
    read_buffer: u64,
}

fn parse_loopback(s: &str) -> Result<SocketAddrV4, String> {
    match s.parse::<SocketAddr>() {
        Ok(SocketAddr::V4(v4)) if v4.ip().is_loopback() => Ok(v4),
        Ok(addr) => Err(format!(
            "{} is not in 127.0.0.0/8: this server listens on loopback only",
            addr.ip()
        )),
        Err(_) => Err(format!("{s:?} is not IP:PORT")),
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads as usize)
        .enable_all()
        .build();
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let config = WebSocketConfig::default().read_buffer_size(args.read_buffer as usize);
    match runtime.block_on(serve(args.listen, config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Accepts connections until Ctrl-C or SIGTERM.
async fn serve(addr: SocketAddrV4, config: WebSocketConfig) -> Result<(), String> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    println!("cms-bare-central: listening on ws://{local}/");
    let accept = async {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(answer(stream, config));
                }
                // Out of file descriptors and the like: the connection is lost, the server not.
                // Back off, or the loop spins and the ceiling measures its own spinning.
                Err(e) => {
                    eprintln!("accept: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
        }
    };
    tokio::select! {
        () = accept => Ok(()),
        () = stopped() => Ok(()),
    }
}

async fn stopped() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// One charger: the handshake, then an empty CALLRESULT for each CALL until it goes away.
async fn answer(stream: TcpStream, config: WebSocketConfig) {
    let _ = stream.set_nodelay(true);
    let handshake = accept_hdr_async_with_config(stream, offer_ocpp, Some(config));
    let Ok(mut ws) = handshake.await else {
        return;
    };
    while let Some(Ok(message)) = ws.next().await {
        match message {
            Message::Text(text) => {
                if let Some(id) = call_id(text.as_bytes()) {
                    let reply = format!("[3,\"{id}\",{{}}]");
                    if ws.send(Message::text(reply)).await.is_err() {
                        return;
                    }
                }
            }
            // tungstenite answers pings and closes by itself.
            Message::Close(_) => return,
            _ => {}
        }
    }
}

/// The handshake answer: subprotocol ocpp1.6 or ocpp2.0.1, whichever the charger offers (1.6
/// when both), any path accepted.
// The signature is tungstenite's handshake callback, its error type included.
#[allow(clippy::result_large_err)]
fn offer_ocpp(request: &Request, mut response: Response) -> Result<Response, ErrorResponse> {
    let offered: Vec<&str> = request
        .headers()
        .get_all("sec-websocket-protocol")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    if let Some(agreed) = SUBPROTOCOLS.into_iter().find(|p| offered.contains(p)) {
        response
            .headers_mut()
            .insert("sec-websocket-protocol", HeaderValue::from_static(agreed));
    }
    Ok(response)
}

/// The message id of a CALL frame, `[2,"id",...]`, as it is written in the frame (escapes
/// kept, so it stays a valid JSON string when copied into the answer); `None` for anything
/// else. Scans bytes up to the id's closing quote and reads nothing after it.
fn call_id(frame: &[u8]) -> Option<&str> {
    let mut at = 0;
    for expected in [b'[', b'2', b',', b'"'] {
        while frame.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        if frame.get(at) != Some(&expected) {
            return None;
        }
        at += 1;
    }
    let start = at;
    while let Some(&byte) = frame.get(at) {
        match byte {
            b'"' => return std::str::from_utf8(&frame[start..at]).ok(),
            b'\\' => at += 2,
            _ => at += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_id_of_a_call() {
        let frame = br#"[2,"19223201","MeterValues",{"connectorId":1}]"#;
        assert_eq!(call_id(frame), Some("19223201"));
        assert_eq!(call_id(b" [ 2 , \"a-b\" ,\"Heartbeat\",{}]"), Some("a-b"));
        assert_eq!(call_id(br#"[2,"",{}]"#), Some(""));
        // An escaped quote stays escaped, so the answer is still valid JSON.
        assert_eq!(call_id(br#"[2,"x\"y","Heartbeat",{}]"#), Some(r#"x\"y"#));
    }

    #[test]
    fn ignores_what_is_not_a_call() {
        assert_eq!(call_id(br#"[3,"1",{}]"#), None);
        assert_eq!(call_id(br#"[4,"1","NotImplemented","",{}]"#), None);
        assert_eq!(call_id(br#"[22,"1","Heartbeat",{}]"#), None);
        assert_eq!(call_id(br#"[2,1,"Heartbeat",{}]"#), None);
        assert_eq!(call_id(br#"[2,"unterminated"#), None);
        assert_eq!(call_id(br#"[2,"\"#), None);
        assert_eq!(call_id(b""), None);
        assert_eq!(call_id(b"hello"), None);
    }

    #[test]
    fn loopback_only() {
        assert!(parse_loopback("127.0.0.1:0").is_ok());
        assert!(parse_loopback("127.1.2.3:9000").is_ok());
        assert!(parse_loopback("0.0.0.0:9000").is_err());
        assert!(parse_loopback("10.0.0.1:9000").is_err());
        assert!(parse_loopback("[::1]:9000").is_err());
        assert!(parse_loopback("localhost:9000").is_err());
    }
}
