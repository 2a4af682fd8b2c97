//! How cms speaks OCPI with providers (`cms up`, `cms api`; docs/ocpi.md).

use crate::duration::{parse_duration, positive_duration};
use crate::webhook_args::RetryDelays;
use std::time::Duration;

#[derive(Debug, Clone, clap::Args)]
pub struct OcpiArgs {
    /// The address eMSPs reach cms's OCPI endpoints at (its versions and modules' URLs are
    /// made from it), e.g. `https://cms.example.com`; by default each request's own scheme and
    /// `Host`.
    #[arg(long, env = "CMS_OCPI_PUBLIC_URL")]
    pub ocpi_public_url: Option<String>,
    /// Lets parties' URLs use plain `http` and name loopback or private addresses: for tests
    /// and closed networks.
    #[arg(long, env = "CMS_OCPI_ALLOW_PRIVATE")]
    pub ocpi_allow_private: bool,
    /// How long one push to a party may take (connect, send, answer) before it is given up and
    /// retried.
    #[arg(long, env = "CMS_OCPI_PUSH_TIMEOUT", default_value = "10s", value_parser = positive_duration)]
    pub ocpi_push_timeout: Duration,
    /// The waits before each retry of a failed push, comma-separated; after the last the push
    /// is `failed` and the next push of its object goes. Each is drawn ±20% at random.
    #[arg(long, env = "CMS_OCPI_RETRY_DELAYS",
        default_value = "5s,5m,30m,2h,5h,10h,10h", value_parser = retry_delays)]
    pub ocpi_retry_delays: RetryDelays,
    /// How often a running session's update (kWh, cost) is pushed to its party.
    #[arg(long, env = "CMS_OCPI_SESSION_INTERVAL", default_value = "60s", value_parser = positive_duration)]
    pub ocpi_session_interval: Duration,
}

/// The waits of `--ocpi-retry-delays`.
fn retry_delays(text: &str) -> Result<RetryDelays, String> {
    let delays = (text.split(','))
        .map(parse_duration)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RetryDelays(delays))
}

impl OcpiArgs {
    /// The API's settings of them.
    pub fn settings(&self) -> cms_api::OcpiSettings {
        cms_api::OcpiSettings {
            public_url: self
                .ocpi_public_url
                .as_deref()
                .map(|url| url.trim_end_matches('/').to_string()),
            allow_private: self.ocpi_allow_private,
            push_timeout: self.ocpi_push_timeout,
            retry_delays: self.ocpi_retry_delays.0.clone(),
            session_interval: self.ocpi_session_interval,
        }
    }
}
