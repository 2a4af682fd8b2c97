//! Reloading without a restart: on SIGHUP, and when a configured file is seen to change.

use std::time::Duration;

use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

use crate::TlsError;

/// How often `watch` looks at the files: a rotated certificate is served within seconds, for
/// the price of three `stat` calls.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(5);

/// Why a reload happened, for the log line.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ReloadCause {
    Requested,
    Hangup,
    FileChanged,
}

/// What `watch` reloads: a listener's TLS, or the trusted proxies' client CA.
pub(crate) trait Reload: Send + Sync + 'static {
    fn reload_because(&self, cause: ReloadCause) -> Result<(), TlsError>;
    /// Reloads unless the files look as they did when last read; `None` when unchanged.
    fn reload_if_changed(&self) -> Option<Result<(), TlsError>>;
}

/// The task of [`ServerTls::watch`], for anything that reloads.
pub(crate) fn watch(
    tls: impl Reload,
    poll_every: Duration,
    shutdown: CancellationToken,
) -> std::io::Result<JoinHandle<()>> {
    let mut hangups = signal(SignalKind::hangup())?;
    // The reloads below read three small files and run on this task: not worth a blocking
    // thread. Their outcome is already logged and counted, hence the ignored results.
    Ok(tokio::spawn(async move {
        // The files were read moments ago: the first look is one interval away.
        let first = tokio::time::Instant::now() + poll_every;
        let mut polls = tokio::time::interval_at(first, poll_every);
        polls.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                Some(()) = hangups.recv() => {
                    let _ = tls.reload_because(ReloadCause::Hangup);
                }
                _ = polls.tick() => {
                    let _ = tls.reload_if_changed();
                }
            }
        }
    }))
}
