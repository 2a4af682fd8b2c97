//! The flags of the probes and metrics listener (`--ops-addr`, on every serving subcommand), of
//! the metrics token and of the live streams' limits (`cms up`, `cms api`).

use crate::counts::at_least_one;
use crate::duration::positive_duration;
use cms_api::StreamLimits;
use std::net::SocketAddr;
use std::time::Duration;

#[derive(Debug, Clone, clap::Args)]
pub struct OpsArgs {
    /// A listener of its own for /healthz, /readyz and /metrics (plain HTTP, at most 32
    /// connections) that no load on the other listeners crowds out: bind it where only probes
    /// and Prometheus reach. With it, the REST API's listener keeps /healthz alone of the three
    /// (and /metrics for --metrics-token). Off by default.
    #[arg(long, env = "CMS_OPS_ADDR")]
    pub ops_addr: Option<SocketAddr>,
}

/// What the REST API's listener answers of the operational endpoints.
#[derive(Debug, Clone, clap::Args)]
pub struct RestOpsArgs {
    #[command(flatten)]
    pub ops: OpsArgs,
    /// /metrics on the REST listener answers only `Authorization: Bearer <TOKEN>` (16
    /// characters at least), others 401. Without it: no one (404) with --ops-addr, else anyone.
    #[arg(long, env = "CMS_METRICS_TOKEN", hide_env_values = true, value_parser = metrics_token)]
    pub metrics_token: Option<String>,
}

fn metrics_token(text: &str) -> Result<String, String> {
    match text.trim().len() {
        ..16 => Err("must be at least 16 characters".to_string()),
        _ => Ok(text.trim().to_string()),
    }
}

/// The live streams' limits (the API's `.../stream` endpoints).
#[derive(Debug, Clone, clap::Args)]
pub struct StreamArgs {
    /// Meter-value changes a live stream may fall behind before it is dropped: a slow client
    /// is dropped, never buffered without end.
    #[arg(long, env = "CMS_STREAM_BUFFER", value_parser = at_least_one,
        default_value_t = cms_api::DEFAULT_STREAM_BUFFER)]
    pub stream_buffer: usize,
    /// Live streams one user may hold open at once, over all their tokens; past it a new one
    /// is answered 429 with Retry-After.
    #[arg(long, env = "CMS_STREAM_MAX_PER_USER", value_parser = at_least_one,
        default_value_t = cms_api::DEFAULT_STREAMS_PER_USER)]
    pub stream_max_per_user: usize,
    /// Live streams of the process at once; past it a new one is answered 503 with
    /// Retry-After. Default: half of --http-max-connections; it must stay below that, so that
    /// streams always leave connections to other requests.
    #[arg(long, env = "CMS_STREAM_MAX_TOTAL", value_parser = at_least_one)]
    pub stream_max_total: Option<usize>,
    /// A live stream ends this long after it opened (less up to a tenth, drawn per stream),
    /// and its client reconnects with Last-Event-ID.
    #[arg(long, env = "CMS_STREAM_MAX_LIFE", default_value = "1h", value_parser = positive_duration)]
    pub stream_max_life: Duration,
}

impl StreamArgs {
    /// The limits beside an HTTP listener of `max_connections`, or why they do not fit in it.
    pub fn limits(&self, max_connections: usize) -> Result<StreamLimits, String> {
        let mut limits = StreamLimits::beside(max_connections);
        limits.per_user = self.stream_max_per_user;
        limits.max_life = self.stream_max_life;
        if let Some(total) = self.stream_max_total {
            if total >= max_connections {
                return Err(format!(
                    "--stream-max-total {total} must be below --http-max-connections \
                     {max_connections}: streams would leave no connection to other requests"
                ));
            }
            limits.total = total;
        }
        Ok(limits)
    }
}
