//! The signals that stop a service: SIGTERM (orchestrators) and SIGINT (Ctrl-C).

use tokio::signal::unix::{Signal, SignalKind, signal as listen};

pub async fn signal() {
    Signals::listen().recv().await;
}

/// SIGTERM and SIGINT, listened to from creation on, each received once or more: the first
/// starts a graceful stop, a second one hurries it.
pub struct Signals {
    term: Option<Signal>,
    int: Option<Signal>,
}

impl Signals {
    pub fn listen() -> Signals {
        let term = listen(SignalKind::terminate())
            .inspect_err(
                |e| tracing::warn!(error = %e, "no SIGTERM handler; stopping on Ctrl-C only"),
            )
            .ok();
        let int = listen(SignalKind::interrupt())
            .inspect_err(|e| tracing::warn!(error = %e, "no SIGINT handler"))
            .ok();
        Signals { term, int }
    }

    /// The next SIGTERM or SIGINT (never, if neither could be listened to).
    pub async fn recv(&mut self) {
        async fn next(signal: &mut Option<Signal>) {
            match signal {
                Some(signal) => {
                    signal.recv().await;
                }
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            _ = next(&mut self.term) => {}
            _ = next(&mut self.int) => {}
        }
    }
}
