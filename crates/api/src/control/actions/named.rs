//! An action as an operator names it (the REST path's kebab-case, `reset`, or the command
//! line's OCPP name, `Reset`) for a charger of one OCPP version: the call of that version, an
//! action of the other version only (refused, naming the charger's), or no action at all.

use cms_bus::{ActionName, version_number};
use cms_ocpp::v16::SchemaViolations;
use cms_ocpp::{OcppVersion, v16, v201};

/// What a name means for a charger that speaks one version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// A call of the charger's version.
    Call(ActionName),
    /// An action of the other version only: the message that says so.
    OtherVersion(String),
    /// No action of either version.
    Unknown,
}

/// The call `name` (kebab-case or as OCPP spells it) names for a charger speaking `speaks`.
pub fn named(name: &str, speaks: OcppVersion) -> Named {
    let v16 = v16::Command::from_name(name)
        .or_else(|| v16::Command::from_path_segment(name))
        .map(ActionName::V16);
    let v201 = v201::Command::ALL
        .into_iter()
        .find(|c| c.as_str() == name || path_segment_v201(*c) == name)
        .map(ActionName::V201);
    let (mine, other) = match speaks {
        OcppVersion::V16 => (v16, v201),
        OcppVersion::V201 => (v201, v16),
    };
    match (mine, other) {
        (Some(call), _) => Named::Call(call),
        (None, Some(other)) => Named::OtherVersion(format!(
            "{name} is an OCPP {} action; this charger speaks OCPP {}",
            other.version().map_or("", version_number),
            version_number(speaks)
        )),
        (None, None) => Named::Unknown,
    }
}

/// The version a charger's row names (`chargers.ocpp_version`); one never connected, or of a
/// version this API does not know, is taken as 1.6, as every charger was before 2.0.1.
pub fn charger_version(ocpp_version: Option<&str>) -> OcppVersion {
    ocpp_version
        .and_then(cms_bus::version_of_number)
        .unwrap_or(OcppVersion::V16)
}

/// A 2.0.1 call in the REST path's kebab-case: `GetBaseReport` is `get-base-report`.
pub fn path_segment_v201(command: v201::Command) -> String {
    let mut segment = String::new();
    for (i, c) in command.as_str().char_indices() {
        if c.is_ascii_uppercase() && i > 0 {
            segment.push('-');
        }
        segment.push(c.to_ascii_lowercase());
    }
    segment
}

/// Checks a request against the call's official request schema of its version. An unknown
/// name has no schema (and is never taken).
pub fn validate_request(
    action: &ActionName,
    request: &serde_json::Value,
) -> Result<(), SchemaViolations> {
    match action {
        ActionName::V16(command) => command.validate_request(request),
        ActionName::V201(command) => command.validate_request(request),
        ActionName::Unknown(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_a_call_of_the_chargers_version_or_refused_naming_it() {
        let v201 = OcppVersion::V201;
        let v16 = OcppVersion::V16;
        assert_eq!(
            named("reset", v201),
            Named::Call(ActionName::V201(v201::Command::Reset))
        );
        assert_eq!(
            named("reset", v16),
            Named::Call(ActionName::V16(v16::Command::Reset))
        );
        assert_eq!(
            named("GetBaseReport", v201),
            Named::Call(ActionName::V201(v201::Command::GetBaseReport))
        );
        assert_eq!(
            named("request-start-transaction", v16),
            Named::OtherVersion(
                "request-start-transaction is an OCPP 2.0.1 action; this charger speaks OCPP 1.6"
                    .into()
            )
        );
        assert_eq!(
            named("remote-start-transaction", v201),
            Named::OtherVersion(
                "remote-start-transaction is an OCPP 1.6 action; this charger speaks OCPP 2.0.1"
                    .into()
            )
        );
        // The 1.6 security extension: names 2.0.1 shares are each version's own call; the
        // extension's own are 1.6 only.
        assert_eq!(
            named("get-log", v16),
            Named::Call(ActionName::V16(v16::Command::GetLog))
        );
        assert_eq!(
            named("get-log", v201),
            Named::Call(ActionName::V201(v201::Command::GetLog))
        );
        assert_eq!(
            named("ExtendedTriggerMessage", v16),
            Named::Call(ActionName::V16(v16::Command::ExtendedTriggerMessage))
        );
        assert_eq!(
            named("signed-update-firmware", v201),
            Named::OtherVersion(
                "signed-update-firmware is an OCPP 1.6 action; this charger speaks OCPP 2.0.1"
                    .into()
            )
        );
        assert_eq!(named("set-network-profile", v201), Named::Unknown);
        assert_eq!(named("nope", v16), Named::Unknown);
        let segments: Vec<String> = v201::Command::ALL
            .into_iter()
            .map(path_segment_v201)
            .collect();
        assert_eq!(
            segments,
            [
                "cancel-reservation",
                "certificate-signed",
                "change-availability",
                "clear-cache",
                "clear-charging-profile",
                "clear-display-message",
                "cost-updated",
                "data-transfer",
                "delete-certificate",
                "get-base-report",
                "get-charging-profiles",
                "get-composite-schedule",
                "get-display-messages",
                "get-installed-certificate-ids",
                "get-local-list-version",
                "get-log",
                "get-report",
                "get-transaction-status",
                "get-variables",
                "install-certificate",
                "request-start-transaction",
                "request-stop-transaction",
                "reserve-now",
                "reset",
                "send-local-list",
                "set-charging-profile",
                "set-display-message",
                "set-variables",
                "trigger-message",
                "unlock-connector",
                "update-firmware",
            ]
        );
        assert_eq!(charger_version(None), v16);
        assert_eq!(charger_version(Some("2.0.1")), v201);
    }
}
