//! A listener's current TLS configuration, swapped whole on reload: new connections get the
//! new one, established connections keep the one they were accepted with.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use chrono::{DateTime, Utc};
use rustls::crypto::CryptoProvider;
use rustls::{HandshakeKind, ServerConfig, ServerConnection};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::client_trust::verify_chain;
use crate::config::{Loaded, build};
use crate::fingerprint::Fingerprints;
use crate::watch::{Reload, ReloadCause, watch};
use crate::{ClientCertificate, TlsError, TlsFiles, metrics};

/// The TLS set-up of one listener. Cheap to clone; clones share the configuration.
#[derive(Clone)]
pub struct ServerTls {
    shared: Arc<Shared>,
}

struct Shared {
    listener: &'static str,
    files: TlsFiles,
    provider: Arc<CryptoProvider>,
    current: RwLock<Loaded>,
    /// The files as they were when last read. Held for the whole of a reload, so that two
    /// reloads (a SIGHUP and a file change at once) do not interleave.
    last_read: Mutex<Fingerprints>,
}

impl ServerTls {
    /// Reads the files and builds the first configuration. `listener` names the listener in
    /// metrics and logs (`"ocpp"`, `"http"`): one process may serve several with different
    /// certificates.
    pub fn load(listener: &'static str, files: TlsFiles) -> Result<Self, TlsError> {
        let provider = Arc::new(crate::config::provider());
        let fingerprints = Fingerprints::of(&files);
        let loaded = build(&files, &provider, None)?;
        metrics::set_expiry(listener, loaded.not_after);
        warn_if_expired(listener, loaded.not_after);
        tracing::info!(listener, not_after = %loaded.not_after, "TLS certificate loaded");
        Ok(ServerTls {
            shared: Arc::new(Shared {
                listener,
                files,
                provider,
                current: RwLock::new(loaded),
                last_read: Mutex::new(fingerprints),
            }),
        })
    }

    /// An acceptor for the next connection, with the configuration current now. Take one per
    /// accepted connection (it is an `Arc` clone) so that a reload reaches new connections.
    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(self.config())
    }

    pub fn config(&self) -> Arc<ServerConfig> {
        self.read_current(|loaded| loaded.config.clone())
    }

    /// The client certificate of a connection whose handshake is done, or `None` when the
    /// client presented none (a profile-2 charger, or a listener with no client CA).
    ///
    /// A resumed session carries the certificate of the handshake it resumes, which rustls does
    /// not verify again: here it is, against the client CA and CRLs in force now, so that a
    /// charger whose CA was removed, or whose certificate was revoked or has expired since,
    /// is refused (`TlsError::ClientCertificateRefused`) rather than let in on an old session.
    pub fn client_certificate(
        &self,
        connection: &ServerConnection,
    ) -> Result<Option<ClientCertificate>, TlsError> {
        let Some(chain) = connection.peer_certificates().filter(|c| !c.is_empty()) else {
            return Ok(None);
        };
        if connection.handshake_kind() == Some(HandshakeKind::Resumed) {
            let verifier = self.read_current(|loaded| loaded.verifier.clone());
            verify_chain(verifier.as_ref(), chain).map_err(TlsError::ClientCertificateRefused)?;
        }
        ClientCertificate::from_der(&chain[0]).map(Some)
    }

    /// As [`ServerTls::client_certificate`], for the stream a `TlsAcceptor` yields.
    pub fn client_certificate_of<IO>(
        &self,
        stream: &tokio_rustls::server::TlsStream<IO>,
    ) -> Result<Option<ClientCertificate>, TlsError> {
        self.client_certificate(stream.get_ref().1)
    }

    /// The earliest notAfter of the chain being served.
    pub fn not_after(&self) -> DateTime<Utc> {
        self.read_current(|loaded| loaded.not_after)
    }

    pub fn files(&self) -> &TlsFiles {
        &self.shared.files
    }

    pub fn listener(&self) -> &'static str {
        self.shared.listener
    }

    /// Reads the files again and, if they make a valid configuration, serves it to new
    /// connections. Otherwise the current configuration stays. Either way the outcome is
    /// logged and counted in `cms_tls_reloads_total`; the error is returned for a caller that
    /// answers someone (an admin request), not to be logged again.
    pub fn reload(&self) -> Result<(), TlsError> {
        self.reload_because(ReloadCause::Requested)
    }

    fn reload_locked(
        &self,
        last_read: &mut Fingerprints,
        cause: ReloadCause,
    ) -> Result<(), TlsError> {
        let listener = self.shared.listener;
        // Taken before reading: a file replaced while we read is noticed on the next look.
        *last_read = Fingerprints::of(&self.shared.files);
        let built = self.read_current(|previous| {
            build(&self.shared.files, &self.shared.provider, Some(previous))
        });
        match built {
            Ok(loaded) => {
                let not_after = loaded.not_after;
                *self
                    .shared
                    .current
                    .write()
                    .unwrap_or_else(PoisonError::into_inner) = loaded;
                metrics::count_reload(listener, true);
                metrics::set_expiry(listener, not_after);
                warn_if_expired(listener, not_after);
                tracing::info!(listener, ?cause, %not_after, "TLS certificate reloaded");
                Ok(())
            }
            Err(error) => {
                metrics::count_reload(listener, false);
                tracing::warn!(
                    listener, ?cause, %error,
                    "TLS reload failed; still serving the previous certificate"
                );
                Err(error)
            }
        }
    }

    fn read_current<T>(&self, read: impl FnOnce(&Loaded) -> T) -> T {
        read(
            &self
                .shared
                .current
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    fn lock_last_read(&self) -> std::sync::MutexGuard<'_, Fingerprints> {
        self.shared
            .last_read
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Reload for ServerTls {
    fn reload_because(&self, cause: ReloadCause) -> Result<(), TlsError> {
        let mut last_read = self.lock_last_read();
        self.reload_locked(&mut last_read, cause)
    }

    fn reload_if_changed(&self) -> Option<Result<(), TlsError>> {
        let mut last_read = self.lock_last_read();
        if Fingerprints::of(&self.shared.files) == *last_read {
            return None;
        }
        Some(self.reload_locked(&mut last_read, ReloadCause::FileChanged))
    }
}

/// Served anyway: refusing would take the listener down, and clients refuse it themselves.
fn warn_if_expired(listener: &'static str, not_after: DateTime<Utc>) {
    if not_after < Utc::now() {
        tracing::warn!(listener, %not_after, "the TLS certificate chain being served has expired");
    }
}

impl fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerTls")
            .field("listener", &self.shared.listener)
            .field("files", &self.shared.files)
            .field("not_after", &self.not_after())
            .finish_non_exhaustive()
    }
}

impl ServerTls {
    /// Spawns the task that reloads on SIGHUP and when a file's inode, size, modification or
    /// change time differs from when it was last read, looking every `poll_every`, until
    /// `shutdown` is cancelled. Outcomes are logged and counted by the reload itself; a broken
    /// file is not retried until it changes again or SIGHUP comes.
    ///
    /// The SIGHUP handler is in place when this returns (from then on SIGHUP no longer ends
    /// the process). Call it inside a tokio runtime with I/O enabled; the error is the
    /// runtime's refusal to register the signal.
    pub fn watch(
        &self,
        poll_every: Duration,
        shutdown: CancellationToken,
    ) -> std::io::Result<JoinHandle<()>> {
        watch(self.clone(), poll_every, shutdown)
    }
}
