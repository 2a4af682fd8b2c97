//! The configuration read after a boot: the GetConfiguration (all keys) a gateway sends of its
//! own accord after a 1.6 charger's BootNotification, and the GetBaseReport (FullInventory)
//! after a 2.0.1 station's (its device model comes back in NotifyReport calls, on the messages
//! topic), so that cms knows every charger's configuration. Turned off with `--read-configuration-at-boot false`; spaced at
//! `--configuration-reads-per-second` ([`pacing`]); skipped, until the gateway restarts, for a
//! charger whose whole configuration proved larger than `--max-frame-size`.

mod pacing;

use crate::GatewayConfig;
use crate::record_time::record_time;
use chrono::Utc;
use cms_bus::{ActionError, ActionName, ActionRequest, RequestedBy};
use cms_ocpp::v16::Command;
use cms_ocpp::{OcppVersion, v201};
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

/// The read itself, addressed to `identity`'s session `session` of `version`.
pub fn read_configuration(
    config: &GatewayConfig,
    identity: &str,
    session: &[u8],
    version: OcppVersion,
) -> ActionRequest {
    let now = Utc::now();
    let expires = now + chrono::Duration::from_std(config.command_ttl).unwrap_or_default();
    let uuid = uuid::Uuid::new_v4();
    let (action, request) = match version {
        OcppVersion::V16 => (Command::GetConfiguration.into(), serde_json::json!({})),
        // A fresh requestId, which the station's NotifyReport calls answer with: from the
        // action's uuid (random), so that no two reads of one station are told apart by luck.
        OcppVersion::V201 => (
            v201::Command::GetBaseReport.into(),
            serde_json::json!({"requestId": request_id(&uuid), "reportBase": "FullInventory"}),
        ),
    };
    ActionRequest {
        uuid: uuid.to_string(),
        identity: identity.to_string(),
        session: String::from_utf8_lossy(session).into_owned(),
        action,
        ocpp_version: version,
        request,
        requested_by: RequestedBy::system(),
        created_at: record_time(now),
        expires_at: record_time(expires),
        timeout_ms: config.command_timeout.as_millis() as u64,
        sealed_request: None,
    }
}

/// A 2.0.1 `requestId` (a non-negative 32-bit integer) from an action's uuid.
fn request_id(uuid: &uuid::Uuid) -> i64 {
    let bytes = uuid.as_bytes();
    i64::from(u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) >> 1)
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
