//! The TLS client cms connects to other central systems with (the proxy relay's upstreams):
//! TLS 1.2 and 1.3 on ring, trusting the public web's roots (Mozilla's, as webpki-roots ships
//! them: the same on every machine, unlike an OS store a container may lack) and any
//! certificate authority of the operator's own PEM file (`--proxy-ca-file`).

use std::path::Path;
use std::sync::Arc;

use rustls::{ClientConfig, RootCertStore};

use crate::TlsError;
use crate::files::read_certificates;

/// A client configuration trusting the public roots and the CAs of `extra_ca`, when given.
pub fn client_config(extra_ca: Option<&Path>) -> Result<Arc<ClientConfig>, TlsError> {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Some(path) = extra_ca {
        for certificate in read_certificates(path)? {
            roots
                .add(certificate)
                .map_err(|e| TlsError::BadCertificate {
                    path: path.to_owned(),
                    reason: e.to_string(),
                })?;
        }
    }
    let config = ClientConfig::builder_with_provider(Arc::new(crate::config::provider()))
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Setup)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}
