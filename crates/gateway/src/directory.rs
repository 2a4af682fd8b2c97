//! Which chargers may connect, and with which credentials (their security profile and password
//! hash): the gateway asks a directory at each handshake, never on the frame path.

use cms_bus::BoxFuture;
pub use cms_bus::Registration;

/// The directory could not answer (its store is down, say): the handshake fails with 503 and
/// the charger retries, instead of an unknown charger being let in or a known one turned away.
#[derive(Debug, Clone, thiserror::Error)]
#[error("charger directory unavailable: {0}")]
pub struct DirectoryError(pub String);

pub trait ChargerDirectory: Send + Sync + 'static {
    /// The registration of `identity`, or `None` when no such charger is registered.
    fn lookup<'a>(
        &'a self,
        identity: &'a str,
    ) -> BoxFuture<'a, Result<Option<Registration>, DirectoryError>>;
}
