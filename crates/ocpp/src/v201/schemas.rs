//! The official OCPP 2.0.1 JSON schemas (`schemas/v201/`, unmodified, © Open Charge Alliance,
//! CC BY-ND 4.0), embedded in the binary.

#[cfg(test)]
mod tests;

/// Declares [`VENDORED`]: each action's name with the text of its request and response schemas.
macro_rules! vendored {
    ($($action:literal),+ $(,)?) => {
        /// Every 2.0.1 action: its name, and the text of `<name>Request.json` and
        /// `<name>Response.json`.
        #[allow(dead_code)] // Compiled from the next commit on.
        pub(crate) const VENDORED: &[(&str, &str, &str)] = &[$((
            $action,
            include_str!(concat!("../../schemas/v201/", $action, "Request.json")),
            include_str!(concat!("../../schemas/v201/", $action, "Response.json")),
        )),+];
    };
}

vendored![
    "Authorize",
    "BootNotification",
    "CancelReservation",
    "CertificateSigned",
    "ChangeAvailability",
    "ClearCache",
    "ClearChargingProfile",
    "ClearDisplayMessage",
    "ClearVariableMonitoring",
    "ClearedChargingLimit",
    "CostUpdated",
    "CustomerInformation",
    "DataTransfer",
    "DeleteCertificate",
    "FirmwareStatusNotification",
    "Get15118EVCertificate",
    "GetBaseReport",
    "GetCertificateStatus",
    "GetChargingProfiles",
    "GetCompositeSchedule",
    "GetDisplayMessages",
    "GetInstalledCertificateIds",
    "GetLocalListVersion",
    "GetLog",
    "GetMonitoringReport",
    "GetReport",
    "GetTransactionStatus",
    "GetVariables",
    "Heartbeat",
    "InstallCertificate",
    "LogStatusNotification",
    "MeterValues",
    "NotifyChargingLimit",
    "NotifyCustomerInformation",
    "NotifyDisplayMessages",
    "NotifyEVChargingNeeds",
    "NotifyEVChargingSchedule",
    "NotifyEvent",
    "NotifyMonitoringReport",
    "NotifyReport",
    "PublishFirmware",
    "PublishFirmwareStatusNotification",
    "ReportChargingProfiles",
    "RequestStartTransaction",
    "RequestStopTransaction",
    "ReservationStatusUpdate",
    "ReserveNow",
    "Reset",
    "SecurityEventNotification",
    "SendLocalList",
    "SetChargingProfile",
    "SetDisplayMessage",
    "SetMonitoringBase",
    "SetMonitoringLevel",
    "SetNetworkProfile",
    "SetVariableMonitoring",
    "SetVariables",
    "SignCertificate",
    "StatusNotification",
    "TransactionEvent",
    "TriggerMessage",
    "UnlockConnector",
    "UnpublishFirmware",
    "UpdateFirmware",
];
