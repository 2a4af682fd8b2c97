//! The official OCPP 2.0.1 JSON schemas (`schemas/v201/`, unmodified, © Open Charge Alliance,
//! CC BY-ND 4.0), embedded in the binary and compiled once, on first use.

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::Value;

use crate::json_schema::{Node, compile_draft06};

/// Declares [`VENDORED`]: each action's name with the text of its request and response schemas.
macro_rules! vendored {
    ($($action:literal),+ $(,)?) => {
        /// Every 2.0.1 action: its name, and the text of `<name>Request.json` and
        /// `<name>Response.json`.
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

/// The compiled request and response schemas of one action.
#[derive(Debug)]
pub(crate) struct ActionSchemas {
    pub(crate) request: Node,
    pub(crate) response: Node,
}

static COMPILED: LazyLock<HashMap<&'static str, ActionSchemas>> = LazyLock::new(|| {
    // The tests compile every vendored file, so these panics cannot reach a release.
    let node = |action: &str, suffix: &str, text: &str| {
        let file = format!("schemas/v201/{action}{suffix}.json");
        let schema: Value =
            serde_json::from_str(text).unwrap_or_else(|e| panic!("{file} is not JSON: {e}"));
        compile_draft06(&schema).unwrap_or_else(|e| panic!("{file}: {e}"))
    };
    VENDORED
        .iter()
        .map(|&(action, request, response)| {
            let schemas = ActionSchemas {
                request: node(action, "Request", request),
                response: node(action, "Response", response),
            };
            (action, schemas)
        })
        .collect()
});

/// The schemas of the 2.0.1 action with this name; every name of `Action` and `Command` is
/// vendored (a test holds it).
pub(crate) fn action_schemas(action: &str) -> &'static ActionSchemas {
    COMPILED
        .get(action)
        .unwrap_or_else(|| panic!("no vendored 2.0.1 schema for {action}"))
}

/// Whether `name` is a 2.0.1 action (any of the specification's 64).
pub(crate) fn is_vendored(name: &str) -> bool {
    VENDORED.iter().any(|&(action, _, _)| action == name)
}

/// The vendored text of a 2.0.1 action's request (or, with `response`, response) schema, as
/// the OCA publishes it; `None` for no 2.0.1 action. For documents that show what is checked.
pub fn schema_text(action: &str, response: bool) -> Option<&'static str> {
    VENDORED
        .iter()
        .find(|&&(name, _, _)| name == action)
        .map(|&(_, request, answer)| if response { answer } else { request })
}
