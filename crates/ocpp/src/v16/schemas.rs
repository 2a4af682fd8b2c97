//! The official OCPP 1.6 JSON schemas (`schemas/v16/`, unmodified), embedded in the binary and
//! compiled once, on first use: the core's (draft-04) and the security extension's (draft-06,
//! compiled as 2.0.1's are).

#[cfg(test)]
mod cross_check;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::Value;

use super::Action;
use crate::json_schema::{Node, SchemaViolations, compile, compile_draft06};

/// Declares [`VENDORED`]: each call's name with the text of its request and response schemas.
macro_rules! vendored {
    ($($call:literal),+ $(,)?) => {
        /// Every vendored call: its name, and the text of `<name>.json` and `<name>Response.json`.
        pub(crate) const VENDORED: &[(&str, &str, &str)] = &[$((
            $call,
            include_str!(concat!("../../schemas/v16/", $call, ".json")),
            include_str!(concat!("../../schemas/v16/", $call, "Response.json")),
        )),+];
    };
}

vendored![
    // Made by the central system.
    "CancelReservation",
    "ChangeAvailability",
    "ChangeConfiguration",
    "ClearCache",
    "ClearChargingProfile",
    "DataTransfer",
    "GetCompositeSchedule",
    "GetConfiguration",
    "GetDiagnostics",
    "GetLocalListVersion",
    "RemoteStartTransaction",
    "RemoteStopTransaction",
    "ReserveNow",
    "Reset",
    "SendLocalList",
    "SetChargingProfile",
    "TriggerMessage",
    "UnlockConnector",
    "UpdateFirmware",
    // Made by the central system: the security extension ("Improved security for OCPP 1.6-J").
    "CertificateSigned",
    "DeleteCertificate",
    "ExtendedTriggerMessage",
    "GetInstalledCertificateIds",
    "GetLog",
    "InstallCertificate",
    "SignedUpdateFirmware",
    // Made by the charger (DataTransfer goes both ways).
    "Authorize",
    "BootNotification",
    "DiagnosticsStatusNotification",
    "FirmwareStatusNotification",
    "Heartbeat",
    "MeterValues",
    "StartTransaction",
    "StatusNotification",
    "StopTransaction",
    // Made by the charger: the security extension.
    "LogStatusNotification",
    "SecurityEventNotification",
    "SignCertificate",
    "SignedFirmwareStatusNotification",
];

/// The compiled request and response schemas of one call.
#[derive(Debug)]
pub(crate) struct CallSchemas {
    pub(crate) request: Node,
    pub(crate) response: Node,
}

static COMPILED: LazyLock<HashMap<&'static str, CallSchemas>> = LazyLock::new(|| {
    // The tests compile every vendored file, so these panics cannot reach a release.
    let node = |call: &str, suffix: &str, text: &str| {
        let file = format!("schemas/v16/{call}{suffix}.json");
        let schema: Value =
            serde_json::from_str(text).unwrap_or_else(|e| panic!("{file} is not JSON: {e}"));
        let compiled = match is_draft06(&schema) {
            true => compile_draft06(&schema),
            false => compile(&schema),
        };
        compiled.unwrap_or_else(|e| panic!("{file}: {e}"))
    };
    VENDORED
        .iter()
        .map(|&(call, request, response)| {
            let schemas = CallSchemas {
                request: node(call, "", request),
                response: node(call, "Response", response),
            };
            (call, schemas)
        })
        .collect()
});

/// Whether a schema says it is draft-06, as the security extension's files do (the OCA wrote
/// them with 2.0.1's generator: `$ref`s to `#/definitions/...`, `$id`); the core's say draft-04.
fn is_draft06(schema: &Value) -> bool {
    schema["$schema"] == "http://json-schema.org/draft-06/schema#"
}

/// The schemas of the call with this OCPP name; every name of [`Action`] and `Command` is
/// vendored (a test holds it).
pub(crate) fn call_schemas(call: &str) -> &'static CallSchemas {
    COMPILED
        .get(call)
        .unwrap_or_else(|| panic!("no vendored schema for {call}"))
}

impl Action {
    /// Checks a charger's CALL payload against the official schema and cms's two rules only
    /// (32-bit integers, no NUL), without cms's own bounds such as [`super::MAX_CONNECTOR_ID`];
    /// [`super::parse_request`] is what the gateway uses. Every violation, in document order.
    pub fn validate_request(self, payload: &Value) -> Result<(), SchemaViolations> {
        call_schemas(self.as_str()).request.validate(payload)
    }

    /// Checks a CALLRESULT payload answering this action against the official schema.
    pub fn validate_response(self, payload: &Value) -> Result<(), SchemaViolations> {
        call_schemas(self.as_str()).response.validate(payload)
    }
}

/// The official schema text of `call`'s request (`response`: of its answer), as vendored: for
/// documents that show it, such as the REST API's OpenAPI document.
pub fn schema_text(call: &str, response: bool) -> Option<&'static str> {
    VENDORED
        .iter()
        .find(|(name, _, _)| *name == call)
        .map(|&(_, request, answer)| if response { answer } else { request })
}
