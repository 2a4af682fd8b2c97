//! How webhooks are delivered (`cms up`, `cms api`; docs/operations.md "Webhooks: delivery").

use crate::duration::{parse_duration, positive_duration};
use std::time::Duration;

#[derive(Debug, Clone, clap::Args)]
pub struct WebhookArgs {
    /// Lets webhook URLs use plain `http` and name loopback, private, link-local, unique-local,
    /// CGNAT or metadata addresses (docs/api.md "Webhooks"): for tests and closed networks.
    #[arg(long, env = "CMS_WEBHOOK_ALLOW_PRIVATE")]
    pub webhook_allow_private: bool,
    /// How long one delivery attempt may take (connect, send, answer) before it is given up
    /// and retried.
    #[arg(long, env = "CMS_WEBHOOK_TIMEOUT", default_value = "10s", value_parser = positive_duration)]
    pub webhook_timeout: Duration,
    /// The waits before each retry of a failed delivery, comma-separated; after the last the
    /// delivery is `failed`. Each is drawn ±20% at random.
    #[arg(long, env = "CMS_WEBHOOK_RETRY_DELAYS",
        default_value = "5s,5m,30m,2h,5h,10h,10h", value_parser = retry_delays)]
    pub webhook_retry_delays: RetryDelays,
}

/// The waits of `--webhook-retry-delays`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryDelays(pub Vec<Duration>);

fn retry_delays(text: &str) -> Result<RetryDelays, String> {
    let delays = (text.split(','))
        .map(parse_duration)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RetryDelays(delays))
}

impl WebhookArgs {
    /// The API's settings of them.
    pub fn delivery(&self) -> cms_api::WebhookDelivery {
        cms_api::WebhookDelivery {
            allow_private: self.webhook_allow_private,
            attempt_timeout: self.webhook_timeout,
            retry_delays: self.webhook_retry_delays.0.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_delays_are_read_as_a_list_of_durations() {
        let read = retry_delays("5s,5m,2h").unwrap();
        let secs = |s| Duration::from_secs(s);
        assert_eq!(read, RetryDelays(vec![secs(5), secs(300), secs(7200)]));
        assert!(retry_delays("5s,,2h").is_err());
        assert!(retry_delays("soon").is_err());
    }
}
