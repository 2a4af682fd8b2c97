//! The 26 calls a central system makes to a charger in OCPP 1.6J (the core's 19 and the 7 of the
//! OCA's security extension), their names on the wire and in the REST API, and their requests
//! and answers checked against the official schemas.

#[cfg(test)]
mod tests;

use std::fmt;

use serde_json::Value;

use super::schemas::call_schemas;
use crate::json_schema::SchemaViolations;

/// A call the central system makes to a charger (OCPP 1.6, "Operations initiated by Central
/// System", and those of the security extension: CertificateSigned, DeleteCertificate,
/// ExtendedTriggerMessage, GetInstalledCertificateIds, GetLog, InstallCertificate and
/// SignedUpdateFirmware, plain 1.6 calls with schemas of their own). Named `Command` as on the
/// bus (`ocpp.commands`) and in the gateway's metrics (`cms_gateway_commands_total`), apart
/// from [`super::Action`], the calls a charger makes; the REST API calls both "actions".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    CancelReservation,
    CertificateSigned,
    ChangeAvailability,
    ChangeConfiguration,
    ClearCache,
    ClearChargingProfile,
    DataTransfer,
    DeleteCertificate,
    ExtendedTriggerMessage,
    GetCompositeSchedule,
    GetConfiguration,
    GetDiagnostics,
    GetInstalledCertificateIds,
    GetLocalListVersion,
    GetLog,
    InstallCertificate,
    RemoteStartTransaction,
    RemoteStopTransaction,
    ReserveNow,
    Reset,
    SendLocalList,
    SetChargingProfile,
    SignedUpdateFirmware,
    TriggerMessage,
    UnlockConnector,
    UpdateFirmware,
}

impl Command {
    /// Every command, in alphabetical order (as `docs/actions.md` lists them).
    pub const ALL: [Command; 26] = [
        Command::CancelReservation,
        Command::CertificateSigned,
        Command::ChangeAvailability,
        Command::ChangeConfiguration,
        Command::ClearCache,
        Command::ClearChargingProfile,
        Command::DataTransfer,
        Command::DeleteCertificate,
        Command::ExtendedTriggerMessage,
        Command::GetCompositeSchedule,
        Command::GetConfiguration,
        Command::GetDiagnostics,
        Command::GetInstalledCertificateIds,
        Command::GetLocalListVersion,
        Command::GetLog,
        Command::InstallCertificate,
        Command::RemoteStartTransaction,
        Command::RemoteStopTransaction,
        Command::ReserveNow,
        Command::Reset,
        Command::SendLocalList,
        Command::SetChargingProfile,
        Command::SignedUpdateFirmware,
        Command::TriggerMessage,
        Command::UnlockConnector,
        Command::UpdateFirmware,
    ];

    /// The OCPP action name, as in the CALL frame (`Reset`).
    pub fn as_str(self) -> &'static str {
        match self {
            Command::CancelReservation => "CancelReservation",
            Command::CertificateSigned => "CertificateSigned",
            Command::ChangeAvailability => "ChangeAvailability",
            Command::ChangeConfiguration => "ChangeConfiguration",
            Command::ClearCache => "ClearCache",
            Command::ClearChargingProfile => "ClearChargingProfile",
            Command::DataTransfer => "DataTransfer",
            Command::DeleteCertificate => "DeleteCertificate",
            Command::ExtendedTriggerMessage => "ExtendedTriggerMessage",
            Command::GetCompositeSchedule => "GetCompositeSchedule",
            Command::GetConfiguration => "GetConfiguration",
            Command::GetDiagnostics => "GetDiagnostics",
            Command::GetInstalledCertificateIds => "GetInstalledCertificateIds",
            Command::GetLocalListVersion => "GetLocalListVersion",
            Command::GetLog => "GetLog",
            Command::InstallCertificate => "InstallCertificate",
            Command::RemoteStartTransaction => "RemoteStartTransaction",
            Command::RemoteStopTransaction => "RemoteStopTransaction",
            Command::ReserveNow => "ReserveNow",
            Command::Reset => "Reset",
            Command::SendLocalList => "SendLocalList",
            Command::SetChargingProfile => "SetChargingProfile",
            Command::SignedUpdateFirmware => "SignedUpdateFirmware",
            Command::TriggerMessage => "TriggerMessage",
            Command::UnlockConnector => "UnlockConnector",
            Command::UpdateFirmware => "UpdateFirmware",
        }
    }

    /// The name in the REST API's path, the OCPP name in kebab case
    /// (`/actions/remote-start-transaction`).
    pub fn path_segment(self) -> &'static str {
        match self {
            Command::CancelReservation => "cancel-reservation",
            Command::CertificateSigned => "certificate-signed",
            Command::ChangeAvailability => "change-availability",
            Command::ChangeConfiguration => "change-configuration",
            Command::ClearCache => "clear-cache",
            Command::ClearChargingProfile => "clear-charging-profile",
            Command::DataTransfer => "data-transfer",
            Command::DeleteCertificate => "delete-certificate",
            Command::ExtendedTriggerMessage => "extended-trigger-message",
            Command::GetCompositeSchedule => "get-composite-schedule",
            Command::GetConfiguration => "get-configuration",
            Command::GetDiagnostics => "get-diagnostics",
            Command::GetInstalledCertificateIds => "get-installed-certificate-ids",
            Command::GetLocalListVersion => "get-local-list-version",
            Command::GetLog => "get-log",
            Command::InstallCertificate => "install-certificate",
            Command::RemoteStartTransaction => "remote-start-transaction",
            Command::RemoteStopTransaction => "remote-stop-transaction",
            Command::ReserveNow => "reserve-now",
            Command::Reset => "reset",
            Command::SendLocalList => "send-local-list",
            Command::SetChargingProfile => "set-charging-profile",
            Command::SignedUpdateFirmware => "signed-update-firmware",
            Command::TriggerMessage => "trigger-message",
            Command::UnlockConnector => "unlock-connector",
            Command::UpdateFirmware => "update-firmware",
        }
    }

    /// The command with exactly this OCPP name (case-sensitive, as on the wire).
    pub fn from_name(name: &str) -> Option<Command> {
        Command::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// The command with exactly this path segment (lower case, as in the API's paths).
    pub fn from_path_segment(segment: &str) -> Option<Command> {
        Command::ALL
            .into_iter()
            .find(|c| c.path_segment() == segment)
    }

    /// Checks a request before it is sent: the official schema of the call, plus cms's two
    /// rules (32-bit integers, no NUL). Every violation, in document order, each naming its
    /// field for a 422 and carrying the code a charger would have answered with.
    pub fn validate_request(self, payload: &Value) -> Result<(), SchemaViolations> {
        call_schemas(self.as_str()).request.validate_sent(payload)
    }

    /// Checks a charger's CALLRESULT payload against the official schema of the answer.
    pub fn validate_response(self, payload: &Value) -> Result<(), SchemaViolations> {
        call_schemas(self.as_str()).response.validate(payload)
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
