//! How long actions for chargers may wait and take: stamped on each action by the API that
//! takes it, and used by gateways for the calls they make of their own accord; and the key
//! that carries their secrets from the API to the gateways.

use crate::duration::parse_duration;
use std::time::Duration;

#[derive(Debug, Clone, clap::Args)]
pub struct ActionArgs {
    /// How long an action may wait to be sent (queued behind the charger's call in flight);
    /// past it, it is never sent and ends `expired`.
    #[arg(long, env = "CMS_ACTION_TTL", default_value = "60s", value_parser = parse_duration)]
    pub action_ttl: Duration,
    /// How long a charger has to answer a call once it is sent; past it, the action ends
    /// `timed_out`.
    #[arg(long, env = "CMS_ACTION_TIMEOUT", default_value = "30s", value_parser = parse_duration)]
    pub action_timeout: Duration,
    /// The key (64 hexadecimal digits, e.g. `openssl rand -hex 32`) the API seals the secret
    /// configuration values it sends chargers with on the bus, and the gateways open them
    /// with: the same on every `cms api` and `cms gateway` of a deployment. Without it, `cms
    /// api` refuses changes of secret keys; `cms up` makes one of its own at start.
    #[arg(long, env = "CMS_SECRETS_KEY", value_parser = cms_bus::SecretsKey::parse,
        hide_env_values = true)]
    pub secrets_key: Option<cms_bus::SecretsKey>,
}

impl ActionArgs {
    pub fn times(&self) -> cms_api::ActionTimes {
        cms_api::ActionTimes {
            ttl: self.action_ttl,
            timeout: self.action_timeout,
        }
    }
}
