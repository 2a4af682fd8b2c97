//! OCPP 2.0.1: a station's calls (actions, validated against the official JSON schemas in one
//! streaming pass, with what the gateway needs kept) and the calls cms makes (commands).

pub mod answer;
mod check;
mod enums;
mod schemas;

#[cfg(test)]
mod tests;

pub use check::{Checked, IdToken, TransactionEventCheck, check_request};
pub use enums::{
    AuthorizationStatus, BootReason, ConnectorStatus, RegistrationStatus, TransactionEventType,
};
pub use schemas::schema_text;

use std::fmt;

use serde_json::Value;

use crate::json_schema::SchemaViolations;

/// Declares an enumeration of 2.0.1 action names with `ALL`, `from_name`, `as_str`, `Display`,
/// and validation against the action's vendored schemas.
macro_rules! actions {
    ($(#[$doc:meta])* $name:ident { $($variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant),+
        }

        impl $name {
            pub const ALL: [$name; [$($name::$variant),+].len()] = [$($name::$variant),+];

            /// The one with exactly this name (case-sensitive, as on the wire): one `match`, so
            /// that a frame's action (MeterValues, TransactionEvent above all) costs no scan of
            /// the list, however many calls the list holds.
            pub fn from_name(name: &str) -> Option<$name> {
                match name {
                    $(stringify!($variant) => Some($name::$variant),)+
                    _ => None,
                }
            }

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => stringify!($variant)),+
                }
            }

            /// Checks a request payload against the official 2.0.1 schema and cms's two rules
            /// (32-bit integers, no NUL). Every violation, in document order.
            pub fn validate_request(self, payload: &Value) -> Result<(), SchemaViolations> {
                schemas::action_schemas(self.as_str()).request.validate(payload)
            }

            /// Checks a CALLRESULT payload answering this call against the official schema.
            pub fn validate_response(self, payload: &Value) -> Result<(), SchemaViolations> {
                schemas::action_schemas(self.as_str()).response.validate(payload)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

actions! {
    /// The calls a 2.0.1 station makes that cms handles: Core, the notifications of firmware,
    /// logs and security events, and those of smart charging (K), display messages (O),
    /// reservations (H) and certificates (A). ISO 15118 certificate calls, customer
    /// information and monitoring are not taken (NotSupported).
    Action {
        Authorize,
        BootNotification,
        ClearedChargingLimit,
        DataTransfer,
        FirmwareStatusNotification,
        Heartbeat,
        LogStatusNotification,
        MeterValues,
        NotifyChargingLimit,
        NotifyDisplayMessages,
        NotifyEVChargingNeeds,
        NotifyEVChargingSchedule,
        NotifyEvent,
        NotifyReport,
        ReportChargingProfiles,
        ReservationStatusUpdate,
        SecurityEventNotification,
        SignCertificate,
        StatusNotification,
        TransactionEvent,
    }
}

actions! {
    /// The calls cms makes to a 2.0.1 station: Core, and local lists (D), smart charging (K),
    /// tariff and cost (I), display messages (O), reservations (H), certificates (A, M),
    /// firmware (L) and logs (N).
    Command {
        CancelReservation,
        CertificateSigned,
        ChangeAvailability,
        ClearCache,
        ClearChargingProfile,
        ClearDisplayMessage,
        CostUpdated,
        DataTransfer,
        DeleteCertificate,
        GetBaseReport,
        GetChargingProfiles,
        GetCompositeSchedule,
        GetDisplayMessages,
        GetInstalledCertificateIds,
        GetLocalListVersion,
        GetLog,
        GetReport,
        GetTransactionStatus,
        GetVariables,
        InstallCertificate,
        RequestStartTransaction,
        RequestStopTransaction,
        ReserveNow,
        Reset,
        SendLocalList,
        SetChargingProfile,
        SetDisplayMessage,
        SetVariables,
        TriggerMessage,
        UnlockConnector,
        UpdateFirmware,
    }
}

/// Whether `name` is any 2.0.1 action of the specification (every vendored schema), handled
/// or not: a station's CALL of a known action cms does not handle is answered NotSupported; a
/// name that is no 2.0.1 action at all, NotImplemented.
pub fn is_known_action(name: &str) -> bool {
    schemas::is_vendored(name)
}
