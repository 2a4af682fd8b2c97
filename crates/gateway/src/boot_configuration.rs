//! The configuration read after a boot: the GetConfiguration (all keys) a gateway sends of its
//! own accord after a charger's BootNotification, so that cms knows every charger's
//! configuration. Turned off with `--read-configuration-at-boot false`; spaced at
//! `--configuration-reads-per-second` ([`pacing`]); skipped, until the gateway restarts, for a
//! charger whose whole configuration proved larger than `--max-frame-size`.

mod pacing;

use crate::GatewayConfig;
use crate::record_time::record_time;
use chrono::Utc;
use cms_bus::{ActionError, ActionName, ActionRequest, RequestedBy};
use cms_ocpp::v16::Command;
use dashmap::DashSet;
use std::time::Instant;

/// What a gateway knows of its configuration reads after boots, for all its sessions.
pub struct BootConfigurationReads {
    enabled: bool,
    /// Spaces the reads.
    pacer: pacing::Pacer,
    /// Chargers whose whole configuration was larger than `--max-frame-size`: the read after
    /// their boot closed their connection (1009), and would at every boot, so it is not made
    /// again while this process runs. In memory: one entry per charger that hit it, and a
    /// restart with a larger limit reads them again.
    oversized: DashSet<Box<str>>,
}

impl BootConfigurationReads {
    pub fn new(config: &GatewayConfig) -> Self {
        BootConfigurationReads {
            enabled: config.read_configuration_at_boot,
            pacer: pacing::Pacer::new(config.configuration_reads_per_second),
            oversized: DashSet::new(),
        }
    }

    /// Whether a boot of `identity` is followed by the read: unless turned off, or its
    /// configuration proved larger than the frame limit (then `skipped` is counted).
    pub fn wanted(&self, identity: &str, skipped: &metrics::Counter) -> bool {
        if !self.enabled {
            return false;
        }
        let oversized = self.oversized.contains(identity);
        if oversized {
            skipped.increment(1);
        }
        !oversized
    }

    /// When a read asked for at `now` may be queued (`now` itself when the rate allows it).
    pub fn turn(&self, now: Instant) -> Instant {
        self.pacer.slot(now)
    }

    /// Remembers that `identity`'s configuration is larger than the frame limit; `true` the
    /// first time.
    pub fn oversized(&self, identity: &str) -> bool {
        self.oversized.insert(identity.into())
    }
}

/// The read itself, addressed to `identity`'s session `session`.
pub fn read_configuration(config: &GatewayConfig, identity: &str, session: &[u8]) -> ActionRequest {
    let now = Utc::now();
    let expires = now + chrono::Duration::from_std(config.command_ttl).unwrap_or_default();
    ActionRequest {
        uuid: uuid::Uuid::new_v4().to_string(),
        identity: identity.to_string(),
        session: String::from_utf8_lossy(session).into_owned(),
        action: Command::GetConfiguration.into(),
        ocpp_version: cms_ocpp::OcppVersion::V16,
        request: serde_json::json!({}),
        requested_by: RequestedBy::system(),
        created_at: record_time(now),
        expires_at: record_time(expires),
        timeout_ms: config.command_timeout.as_millis() as u64,
        sealed_request: None,
    }
}

/// Whether `command` is the configuration read a gateway makes after a boot
/// ([`read_configuration`]): cms's own GetConfiguration of every key. An operator's
/// GetConfiguration (REST, CLI) is not, even of every key: it is sent whatever came before.
pub fn is_configuration_read(command: &ActionRequest) -> bool {
    command.requested_by == RequestedBy::system()
        && command.action == ActionName::V16(Command::GetConfiguration)
        && command.request.as_object().is_some_and(|r| r.is_empty())
}

/// Why the configuration read after a boot failed when the charger's answer closed the
/// connection for its size: what the operator can do about it, in the audit log.
pub fn configuration_too_large(max_frame_size: usize) -> ActionError {
    ActionError::new(
        "FrameTooLarge",
        format!(
            "the charger's answer was larger than the gateway's frame limit of \
             {max_frame_size} bytes (--max-frame-size); raising it lets the configuration be \
             read (until then the gateway does not read it after a boot again)"
        ),
    )
}

#[cfg(test)]
mod tests;
