//! An EVSE's OCPI status (2.2.1 "Status") from its charger: the connection, the charger-wide
//! status (OCPP 1.6 connector 0) and each connector's status as cms keeps it (1.6's vocabulary;
//! a 2.0.1 station's connectorStatus is kept mapped into it: Occupied as Charging or
//! Preparing). cms's EVSE is a charger, and an OCPI EVSE charges one car at a time, so the
//! connectors decide together (docs/ocpi.md "Locations and tariffs", the status table).

use serde::{Deserialize, Serialize};

/// OCPI 2.2.1's EVSE status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EvseStatus {
    Available,
    Blocked,
    Charging,
    Inoperative,
    Outoforder,
    Planned,
    Removed,
    Reserved,
    Unknown,
}

impl EvseStatus {
    /// As OCPI writes it: `AVAILABLE`, `OUTOFORDER`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            EvseStatus::Available => "AVAILABLE",
            EvseStatus::Blocked => "BLOCKED",
            EvseStatus::Charging => "CHARGING",
            EvseStatus::Inoperative => "INOPERATIVE",
            EvseStatus::Outoforder => "OUTOFORDER",
            EvseStatus::Planned => "PLANNED",
            EvseStatus::Removed => "REMOVED",
            EvseStatus::Reserved => "RESERVED",
            EvseStatus::Unknown => "UNKNOWN",
        }
    }
}

/// One connector's status: OCPP 1.6's ChargePointStatus (as cms keeps 2.0.1's too).
pub fn of_connector(ocpp: &str) -> EvseStatus {
    match ocpp {
        "Available" => EvseStatus::Available,
        // A car is plugged in or the connector is taken for one: the EVSE is in use.
        "Preparing" | "Charging" | "SuspendedEV" | "SuspendedEVSE" | "Finishing" | "Occupied" => {
            EvseStatus::Charging
        }
        "Reserved" => EvseStatus::Reserved,
        "Unavailable" => EvseStatus::Inoperative,
        "Faulted" => EvseStatus::Outoforder,
        _ => EvseStatus::Unknown,
    }
}

/// The EVSE's status: `connection` is the charger's `connection_status` (`never_seen`,
/// `online`, `offline`), `charger` its charger-wide status (1.6 connector 0), `connectors`
/// its connectors' statuses.
///
/// - never connected: PLANNED; not online: UNKNOWN;
/// - the charger as a whole Faulted: OUTOFORDER, Unavailable: INOPERATIVE;
/// - else the connectors': CHARGING if any is in use, else RESERVED if any is reserved, else
///   AVAILABLE if any is available, else INOPERATIVE if any is unavailable, else OUTOFORDER if
///   any is faulted, else UNKNOWN;
/// - no connector known yet: AVAILABLE when the charger says so, else UNKNOWN.
pub fn of_charger(connection: &str, charger: Option<&str>, connectors: &[&str]) -> EvseStatus {
    match connection {
        "online" => {}
        "never_seen" => return EvseStatus::Planned,
        _ => return EvseStatus::Unknown,
    }
    match charger {
        Some("Faulted") => return EvseStatus::Outoforder,
        Some("Unavailable") => return EvseStatus::Inoperative,
        _ => {}
    }
    if connectors.is_empty() {
        return match charger {
            Some("Available") => EvseStatus::Available,
            _ => EvseStatus::Unknown,
        };
    }
    let statuses: Vec<EvseStatus> = connectors.iter().map(|s| of_connector(s)).collect();
    [
        EvseStatus::Charging,
        EvseStatus::Reserved,
        EvseStatus::Available,
        EvseStatus::Inoperative,
        EvseStatus::Outoforder,
    ]
    .into_iter()
    .find(|wanted| statuses.contains(wanted))
    .unwrap_or(EvseStatus::Unknown)
}
