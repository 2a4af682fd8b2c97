//! The places for live streams (docs/api.md "Live streams"): at most so many streams of one user
//! and so many in the process. A stream holds its connection for as long as it lives, so
//! without these one token could take every slot of the HTTP listener and leave none for
//! ordinary requests and probes. A place is taken before a stream opens and given back when
//! its response ends; past either limit the request is refused at once with `Retry-After`.

#[cfg(test)]
mod tests;

use axum::Json;
use axum::http::StatusCode;
use axum::http::header::RETRY_AFTER;
use axum::response::{IntoResponse, Response};
use metrics::{Counter, Gauge};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Streams of one user at once by default.
pub const DEFAULT_STREAMS_PER_USER: usize = 10;
/// A stream's life by default.
pub const DEFAULT_STREAM_MAX_LIFE: Duration = Duration::from_secs(3600);
/// What a refused client is told to wait, in seconds.
const RETRY_AFTER_SECS: u32 = 30;

/// How many live streams, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// Streams of one user at once, over all their tokens.
    pub per_user: usize,
    /// Streams of the process at once: keep it well below the HTTP connection cap.
    pub total: usize,
    /// A stream ends this long after it opened (less up to a tenth, drawn per stream, so that
    /// streams opened together do not all end together), and its client reconnects.
    pub max_life: Duration,
}

impl StreamLimits {
    /// The defaults beside an HTTP listener of `max_connections`: half of them for streams.
    pub fn beside(max_connections: usize) -> StreamLimits {
        StreamLimits {
            per_user: DEFAULT_STREAMS_PER_USER,
            total: max_connections / 2,
            max_life: DEFAULT_STREAM_MAX_LIFE,
        }
    }
}

/// Why a stream was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Its user holds `per_user` streams already.
    User { per_user: usize },
    /// The process holds `total` streams already.
    Total,
}

/// The refusal: 429 for a user past their own limit (their doing), 503 for the process at its
/// total (the server's capacity, as past the connection cap); both `{"message": ...}` with
/// `Retry-After`.
impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let (status, message) = match self {
            Refused::User { per_user } => (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "At most {per_user} live streams per user are open at once; close one or \
                     retry later."
                ),
            ),
            Refused::Total => (
                StatusCode::SERVICE_UNAVAILABLE,
                "The server holds as many live streams as it takes; retry later.".to_string(),
            ),
        };
        let body = Json(serde_json::json!({"message": message}));
        (status, [(RETRY_AFTER, RETRY_AFTER_SECS)], body).into_response()
    }
}

/// The streams open, by user and in all, against the limits.
pub struct StreamSlots {
    limits: StreamLimits,
    open: Mutex<Open>,
    metrics: SlotMetrics,
}

#[derive(Default)]
struct Open {
    total: usize,
    by_user: HashMap<i64, usize>,
}

/// Registered at start, so each reads 0 before its first event.
struct SlotMetrics {
    open: Gauge,
    refused_user: Counter,
    refused_total: Counter,
}

impl StreamSlots {
    pub fn new(limits: StreamLimits) -> Arc<StreamSlots> {
        metrics::gauge!("cms_api_streams_max").set(limits.total as f64);
        for reason in ["slow", "access", "max_life"] {
            metrics::counter!("cms_api_stream_dropped_total", "reason" => reason).increment(0);
        }
        let metrics = SlotMetrics {
            open: metrics::gauge!("cms_api_streams_open"),
            refused_user: metrics::counter!("cms_api_streams_refused_total", "reason" => "user"),
            refused_total: metrics::counter!("cms_api_streams_refused_total", "reason" => "total"),
        };
        Arc::new(StreamSlots {
            limits,
            open: Mutex::new(Open::default()),
            metrics,
        })
    }

    pub fn limits(&self) -> StreamLimits {
        self.limits
    }

    /// A place for one more stream of `user`, held as long as the stream lives; or why not.
    pub fn take(self: &Arc<Self>, user: i64) -> Result<Slot, Refused> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let of_user = open.by_user.get(&user).copied().unwrap_or(0);
        // The user's own limit first: a user past it is told so even when the process is full.
        if of_user >= self.limits.per_user {
            self.metrics.refused_user.increment(1);
            return Err(Refused::User {
                per_user: self.limits.per_user,
            });
        }
        if open.total >= self.limits.total {
            self.metrics.refused_total.increment(1);
            return Err(Refused::Total);
        }
        open.total += 1;
        open.by_user.insert(user, of_user + 1);
        self.metrics.open.increment(1.0);
        Ok(Slot {
            slots: self.clone(),
            user,
        })
    }

    fn give_back(&self, user: i64) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.total -= 1;
        if let Some(n) = open.by_user.get_mut(&user) {
            *n -= 1;
            if *n == 0 {
                open.by_user.remove(&user);
            }
        }
        self.metrics.open.decrement(1.0);
    }
}

/// One stream's place: given back when dropped.
pub struct Slot {
    slots: Arc<StreamSlots>,
    user: i64,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.give_back(self.user);
    }
}
