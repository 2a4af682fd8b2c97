//! TLS on the command line: the gateway's wss listener (OCPP security profiles 2 and 3) and
//! HTTPS for the REST API, each from PEM files, reloaded on SIGHUP or when the files change.

use crate::duration::positive_duration;
use cms_gateway::{GatewaySecurity, GatewayTls, TrustedProxies};
use cms_tls::{DEFAULT_POLL_INTERVAL, ForwardedCertificates, ServerTls, TlsFiles};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, clap::Args)]
pub struct OcppTlsArgs {
    /// Where chargers connect over TLS: wss://OCPP_TLS_ADDR/ocpp/{identity}. Needs --tls-cert
    /// and --tls-key.
    #[arg(long, env = "CMS_OCPP_TLS_ADDR", requires_all = ["tls_cert", "tls_key"])]
    pub ocpp_tls_addr: Option<SocketAddr>,
    /// The wss listener's certificate chain (PEM), leaf first.
    #[arg(long, env = "CMS_TLS_CERT")]
    pub tls_cert: Option<PathBuf>,
    /// Its private key (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, env = "CMS_TLS_KEY")]
    pub tls_key: Option<PathBuf>,
    /// CA certificates (PEM) that sign chargers' client certificates (security profile 3). A
    /// charger's certificate must chain to one, be valid now, and name it as subject CN.
    #[arg(long, env = "CMS_TLS_CLIENT_CA")]
    pub tls_client_ca: Option<PathBuf>,
    /// Certificate revocation lists (PEM) of the --tls-client-ca CAs: a charger certificate
    /// they revoke is refused, as is one whose status no CRL here tells (every CA that issued
    /// a certificate of a charger's chain needs its CRL in the file). Reloaded like the CA.
    #[arg(long, env = "CMS_TLS_CLIENT_CRL", requires = "tls_client_ca")]
    pub tls_client_crl: Option<PathBuf>,
    /// The charging station operator's name: a profile-3 charger's certificate (1.6 or 2.0.1)
    /// must then also hold it as its subject O, exactly, or the charger is refused with 403
    /// (`client_certificate_organization_mismatch`). Unset, O is not checked.
    #[arg(long, env = "CMS_TLS_CLIENT_ORGANIZATION", requires = "tls_client_ca", value_parser = organization)]
    pub tls_client_organization: Option<String>,
    /// Threads doing TLS handshakes, apart from the shards that serve established chargers.
    #[arg(long, env = "CMS_TLS_HANDSHAKE_THREADS", default_value_t = 1)]
    pub tls_handshake_threads: usize,
    /// TLS handshakes under way at once from one IPv4 address or one IPv6 /64; past it a
    /// connection is closed at once (`tls_per_address`). 0 for no limit: behind a TCP balancer
    /// that hides the chargers' addresses, or when many chargers share one NAT address.
    #[arg(long, env = "CMS_TLS_HANDSHAKES_PER_ADDRESS", default_value_t = 16)]
    pub tls_handshakes_per_address: usize,
    /// How long a wss client has, from the accept, to send its whole TLS ClientHello; a socket
    /// left idle longer is closed (`tls_slow_start`).
    #[arg(long, env = "CMS_TLS_HELLO_TIMEOUT", default_value = "2s", value_parser = positive_duration)]
    pub tls_hello_timeout: Duration,
    /// Load balancers (IP addresses, comma-separated) that terminate TLS in front of the
    /// gateway: their plain connections count as TLS, and the client certificate each forwards
    /// in --client-cert-header is believed once it verifies against --tls-client-ca. Off by
    /// default; a header from any other address is ignored.
    #[arg(
        long,
        visible_alias = "trusted-proxy",
        env = "CMS_TRUSTED_PROXIES",
        value_delimiter = ',',
        requires = "tls_client_ca"
    )]
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// The header trusted proxies forward the client certificate in: Envoy's form
    /// (`By=..;Cert="<URL-encoded PEM>"`) or a URL-encoded PEM alone (nginx, AWS ALB).
    #[arg(
        long,
        env = "CMS_CLIENT_CERT_HEADER",
        default_value = "X-Forwarded-Client-Cert"
    )]
    pub client_cert_header: String,
}

impl OcppTlsArgs {
    /// The gateway's TLS: its wss listener and the proxies it trusts.
    pub fn security(&self, stop: &CancellationToken) -> Result<GatewaySecurity, String> {
        Ok(GatewaySecurity {
            tls: self.gateway_tls(stop)?,
            proxies: self.trusted_proxies(stop)?,
            client_organization: self.tls_client_organization.clone(),
        })
    }

    /// The proxies and the client CA they are believed by, watched until `stop`.
    fn trusted_proxies(&self, stop: &CancellationToken) -> Result<Option<TrustedProxies>, String> {
        let (false, Some(ca)) = (self.trusted_proxies.is_empty(), &self.tls_client_ca) else {
            return Ok(None);
        };
        let certificates = ForwardedCertificates::load(ca, self.tls_client_crl.clone())
            .map_err(|e| e.to_string())?;
        certificates
            .watch(DEFAULT_POLL_INTERVAL, stop.clone())
            .map_err(|e| format!("cannot watch for SIGHUP: {e}"))?;
        Ok(Some(TrustedProxies {
            addresses: self.trusted_proxies.clone(),
            header: self.client_cert_header.to_ascii_lowercase(),
            certificates,
        }))
    }

    /// The wss side of the gateway, its files watched until `stop`; `None` without
    /// `--ocpp-tls-addr`.
    fn gateway_tls(&self, stop: &CancellationToken) -> Result<Option<GatewayTls>, String> {
        let (Some(addr), Some(cert), Some(key)) =
            (self.ocpp_tls_addr, &self.tls_cert, &self.tls_key)
        else {
            return Ok(None);
        };
        let mut files = TlsFiles::new(cert, key);
        if let Some(ca) = &self.tls_client_ca {
            files = files.with_client_ca(ca);
        }
        if let Some(crl) = &self.tls_client_crl {
            files = files.with_client_crl(crl);
        }
        let server = watched("ocpp", files, stop)?;
        Ok(Some(GatewayTls {
            addr,
            server,
            handshake_threads: self.tls_handshake_threads,
            handshakes_per_address: self.tls_handshakes_per_address,
            hello_timeout: self.tls_hello_timeout,
        }))
    }
}

#[derive(Debug, Clone, clap::Args)]
pub struct HttpTlsArgs {
    /// Serve the HTTP listener over HTTPS with this certificate chain (PEM); plain HTTP
    /// without it.
    #[arg(long, env = "CMS_HTTP_TLS_CERT", requires = "http_tls_key")]
    pub http_tls_cert: Option<PathBuf>,
    /// Its private key (PEM).
    #[arg(long, env = "CMS_HTTP_TLS_KEY", requires = "http_tls_cert")]
    pub http_tls_key: Option<PathBuf>,
}

impl HttpTlsArgs {
    /// HTTPS for the listener, its files watched until `stop`; `None` for plain HTTP.
    pub fn server_tls(&self, stop: &CancellationToken) -> Result<Option<ServerTls>, String> {
        let (Some(cert), Some(key)) = (&self.http_tls_cert, &self.http_tls_key) else {
            return Ok(None);
        };
        watched("http", TlsFiles::new(cert, key), stop).map(Some)
    }
}

fn watched(
    listener: &'static str,
    files: TlsFiles,
    stop: &CancellationToken,
) -> Result<ServerTls, String> {
    let tls = ServerTls::load(listener, files).map_err(|e| e.to_string())?;
    tls.watch(DEFAULT_POLL_INTERVAL, stop.clone())
        .map_err(|e| format!("cannot watch for SIGHUP: {e}"))?;
    Ok(tls)
}

/// Parses `--tls-client-organization`: a name no certificate could fail to match by accident
/// of the shell (empty, or with spaces around it) is refused at start.
fn organization(text: &str) -> Result<String, String> {
    match text {
        "" => Err("an empty name (leave the flag out to not check O)".to_string()),
        _ if text.trim() != text => Err(format!("{text:?} has spaces around it")),
        _ => Ok(text.to_string()),
    }
}

/// A listening address, or `off`.
#[derive(Debug, Clone, Copy)]
pub struct ListenAddr(pub Option<SocketAddr>);

/// Parses `--ocpp-addr`: an address, or `off` for no plain listener.
pub fn listen_addr(text: &str) -> Result<ListenAddr, String> {
    match text {
        "off" => Ok(ListenAddr(None)),
        _ => text
            .parse()
            .map(|addr| ListenAddr(Some(addr)))
            .map_err(|e| format!("{text:?}: {e} (or `off`)")),
    }
}

/// The ready lines of the OCPP listeners, which scripts and tests wait for.
pub fn print_ocpp_addresses(gateway: &cms_gateway::Gateway) {
    if let Some(addr) = gateway.local_addr() {
        println!("cms: serving OCPP on ws://{addr}/ocpp/{{identity}}");
    }
    if let Some(addr) = gateway.tls_addr() {
        println!("cms: serving OCPP on wss://{addr}/ocpp/{{identity}}");
    }
}
