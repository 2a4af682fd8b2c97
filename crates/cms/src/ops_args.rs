//! The flags of the probes and metrics listener (`--ops-addr`, on every serving subcommand) and
//! of the metrics token (`cms up`, `cms api`).

use std::net::SocketAddr;

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
