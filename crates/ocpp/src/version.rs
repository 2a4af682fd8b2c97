//! The OCPP versions cms speaks, and their websocket subprotocol names.

/// An OCPP version a charger and cms agree on in the websocket handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OcppVersion {
    V16,
    V201,
}

impl OcppVersion {
    pub const ALL: [OcppVersion; 2] = [OcppVersion::V16, OcppVersion::V201];

    /// "ocpp1.6" / "ocpp2.0.1": the websocket subprotocol, and the bus's `ocpp_version` text.
    pub const fn subprotocol(self) -> &'static str {
        match self {
            OcppVersion::V16 => "ocpp1.6",
            OcppVersion::V201 => "ocpp2.0.1",
        }
    }

    /// The version whose subprotocol is exactly `name`.
    pub fn from_subprotocol(name: &str) -> Option<OcppVersion> {
        OcppVersion::ALL
            .into_iter()
            .find(|version| version.subprotocol() == name)
    }
}
