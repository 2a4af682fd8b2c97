//! How long actions for chargers may wait and take: stamped on each action by the API that
//! takes it, and used by gateways for the calls they make of their own accord.

use crate::duration::parse_duration;
use std::time::Duration;

#[derive(Debug, Clone, Copy, clap::Args)]
pub struct ActionArgs {
    /// How long an action may wait to be sent (queued behind the charger's call in flight);
    /// past it, it is never sent and ends `expired`.
    #[arg(long, env = "CMS_ACTION_TTL", default_value = "60s", value_parser = parse_duration)]
    pub action_ttl: Duration,
    /// How long a charger has to answer a call once it is sent; past it, the action ends
    /// `timed_out`.
    #[arg(long, env = "CMS_ACTION_TIMEOUT", default_value = "30s", value_parser = parse_duration)]
    pub action_timeout: Duration,
}

impl ActionArgs {
    pub fn times(&self) -> cms_api::ActionTimes {
        cms_api::ActionTimes {
            ttl: self.action_ttl,
            timeout: self.action_timeout,
        }
    }
}
