//! A real TLS echo server on loopback and real rustls clients: what a charger or an HTTPS
//! client would do, with the server's view of each handshake reported back to the test.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cms_tls::rustls::client::Resumption;
use cms_tls::rustls::pki_types::pem::PemObject;
use cms_tls::rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use cms_tls::rustls::{ClientConfig, RootCertStore, SupportedProtocolVersion};
use cms_tls::test_pki::ClientFiles;
use cms_tls::tokio_rustls::TlsConnector;
use cms_tls::tokio_rustls::client::TlsStream;
use cms_tls::{ClientCertificate, ServerTls};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

pub use cms_tls::rustls::version::{TLS12, TLS13};

/// No test step should take long on loopback; a hang fails the test instead of CI.
pub const STEP: Duration = Duration::from_secs(10);

/// What the server saw of one handshake: the client certificate, or why it failed.
pub type ServerHandshake = Result<Option<ClientCertificate>, String>;

pub struct EchoServer {
    pub addr: SocketAddr,
    handshakes: mpsc::UnboundedReceiver<ServerHandshake>,
}

impl EchoServer {
    /// Accepts connections the way the gateway will: an acceptor taken per connection.
    pub async fn start(tls: ServerTls) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (report, handshakes) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (tls, acceptor) = (tls.clone(), tls.acceptor());
                let report = report.clone();
                tokio::spawn(async move {
                    let mut stream = match acceptor.accept(tcp).await {
                        Ok(stream) => stream,
                        Err(error) => return drop(report.send(Err(error.to_string()))),
                    };
                    // As the gateway does: a certificate refused after the handshake (on a
                    // resumed session) ends the connection.
                    let certificate = tls.client_certificate_of(&stream);
                    let refused = certificate.is_err();
                    let _ = report.send(certificate.map_err(|error| format!("{error:?}")));
                    if refused {
                        return;
                    }
                    let mut buffer = [0; 1024];
                    while let Ok(n @ 1..) = stream.read(&mut buffer).await {
                        if stream.write_all(&buffer[..n]).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        EchoServer { addr, handshakes }
    }

    pub async fn next_handshake(&mut self) -> ServerHandshake {
        tokio::time::timeout(STEP, self.handshakes.recv())
            .await
            .expect("the server reports each handshake")
            .expect("the server runs")
    }
}

/// A client that trusts `ca`, speaks only `versions`, may present a certificate, and does not
/// resume (so every handshake shows the server's current chain).
pub fn client_config(
    ca: &Path,
    versions: &[&'static SupportedProtocolVersion],
    certificate: Option<&ClientFiles>,
) -> ClientConfig {
    let mut roots = RootCertStore::empty();
    for certificate in certificates(ca) {
        roots.add(certificate).unwrap();
    }
    let provider = Arc::new(cms_tls::rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots);
    let mut config = match certificate {
        Some(files) => builder
            .with_client_auth_cert(
                certificates(&files.certificate),
                PrivateKeyDer::from_pem_file(&files.private_key).unwrap(),
            )
            .unwrap(),
        None => builder.with_no_client_auth(),
    };
    config.resumption = Resumption::disabled();
    config
}

pub async fn connect(
    addr: SocketAddr,
    config: &Arc<ClientConfig>,
) -> std::io::Result<TlsStream<TcpStream>> {
    let step = async {
        let tcp = TcpStream::connect(addr).await?;
        let name = ServerName::IpAddress(addr.ip().into());
        TlsConnector::from(config.clone()).connect(name, tcp).await
    };
    tokio::time::timeout(STEP, step)
        .await
        .expect("the handshake ends")
}

/// Sends `message` and reads it back: the connection carries data both ways.
pub async fn echo(stream: &mut TlsStream<TcpStream>, message: &[u8]) -> std::io::Result<Vec<u8>> {
    let step = async {
        stream.write_all(message).await?;
        stream.flush().await?;
        let mut answer = vec![0; message.len()];
        stream.read_exact(&mut answer).await?;
        Ok(answer)
    };
    tokio::time::timeout(STEP, step)
        .await
        .expect("the echo ends")
}

/// Connects and checks the connection carries data: what "the client got in" means.
pub async fn connect_and_echo(
    addr: SocketAddr,
    config: &Arc<ClientConfig>,
) -> std::io::Result<TlsStream<TcpStream>> {
    let mut stream = connect(addr, config).await?;
    assert_eq!(
        echo(&mut stream, b"BootNotification").await?,
        b"BootNotification"
    );
    Ok(stream)
}

/// The chain the server presented on this connection.
pub fn served_chain(stream: &TlsStream<TcpStream>) -> Vec<CertificateDer<'static>> {
    let chain = stream
        .get_ref()
        .1
        .peer_certificates()
        .expect("the server sent its chain");
    chain.iter().map(|der| der.clone().into_owned()).collect()
}

pub fn certificates(path: &Path) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_file_iter(path)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}
