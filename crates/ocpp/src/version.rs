//! The OCPP versions cms speaks, named as the websocket subprotocol names them.

/// An OCPP version: 1.6 (OCPP-J 1.6) or 2.0.1.
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

    /// The version of a websocket subprotocol name, exactly as [`OcppVersion::subprotocol`]
    /// spells it.
    pub fn from_subprotocol(name: &str) -> Option<OcppVersion> {
        OcppVersion::ALL
            .into_iter()
            .find(|v| v.subprotocol() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subprotocols_round_trip_and_nothing_else_is_a_version() {
        assert_eq!(OcppVersion::V16.subprotocol(), "ocpp1.6");
        assert_eq!(OcppVersion::V201.subprotocol(), "ocpp2.0.1");
        for version in OcppVersion::ALL {
            assert_eq!(
                OcppVersion::from_subprotocol(version.subprotocol()),
                Some(version)
            );
        }
        for other in ["ocpp2.0", "ocpp2.1", "OCPP1.6", "ocpp1.6 ", ""] {
            assert_eq!(OcppVersion::from_subprotocol(other), None, "{other:?}");
        }
    }
}
