//! The OCPP action a command is for, typed once where it is read off the bus: the gateway
//! matches on it and never parses the name again. A name means a call of one OCPP version
//! ("Reset" is a call of both), so it is decided from the name and the version it was taken for.

use cms_ocpp::{OcppVersion, v16, v201};
use serde::{Serialize, Serializer};
use std::fmt;

/// One of the 26 central-system calls of OCPP 1.6 (its security extension's included), one of the 31 calls cms makes to an
/// OCPP 2.0.1 station, or a name the version it was taken for does not know (from an API of
/// another version, or another producer): kept as written, so that the gateway can end the
/// action `failed` (`NotImplemented`) with a report that still names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionName {
    V16(v16::Command),
    V201(v201::Command),
    Unknown(String),
}

impl ActionName {
    /// The call `name` names in `version`, or an unknown name kept as written.
    pub fn new(name: &str, version: OcppVersion) -> ActionName {
        let known = match version {
            OcppVersion::V16 => v16::Command::from_name(name).map(ActionName::V16),
            OcppVersion::V201 => v201::Command::from_name(name).map(ActionName::V201),
        };
        known.unwrap_or_else(|| ActionName::Unknown(name.to_string()))
    }

    /// The name as on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            ActionName::V16(command) => command.as_str(),
            ActionName::V201(command) => command.as_str(),
            ActionName::Unknown(name) => name,
        }
    }

    /// The OCPP 1.6 call, when it is one.
    pub fn command(&self) -> Option<v16::Command> {
        match self {
            ActionName::V16(command) => Some(*command),
            _ => None,
        }
    }

    /// The OCPP 2.0.1 call, when it is one.
    pub fn command_v201(&self) -> Option<v201::Command> {
        match self {
            ActionName::V201(command) => Some(*command),
            _ => None,
        }
    }

    /// The version whose call it is; `None` for an unknown name.
    pub fn version(&self) -> Option<OcppVersion> {
        match self {
            ActionName::V16(_) => Some(OcppVersion::V16),
            ActionName::V201(_) => Some(OcppVersion::V201),
            ActionName::Unknown(_) => None,
        }
    }
}

impl From<v16::Command> for ActionName {
    fn from(command: v16::Command) -> Self {
        ActionName::V16(command)
    }
}

impl From<v201::Command> for ActionName {
    fn from(command: v201::Command) -> Self {
        ActionName::V201(command)
    }
}

/// A name of OCPP 1.6 (the version every action had before 2.0.1).
impl From<&str> for ActionName {
    fn from(name: &str) -> Self {
        ActionName::new(name, OcppVersion::V16)
    }
}

impl From<String> for ActionName {
    fn from(name: String) -> Self {
        match v16::Command::from_name(&name) {
            Some(command) => ActionName::V16(command),
            None => ActionName::Unknown(name),
        }
    }
}

impl fmt::Display for ActionName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Written as the bare name; read back only with its version (`ActionRequest`).
impl Serialize for ActionName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_name_is_kept_as_written() {
        let unknown = ActionName::new("SetNetworkProfile", OcppVersion::V201);
        assert_eq!(unknown, ActionName::Unknown("SetNetworkProfile".into()));
        assert_eq!(unknown.command(), None);
        assert_eq!(unknown.command_v201(), None);
        assert_eq!(unknown.version(), None);
        assert_eq!(
            serde_json::to_string(&unknown).unwrap(),
            r#""SetNetworkProfile""#
        );
    }

    #[test]
    fn a_name_is_the_call_of_the_version_it_was_taken_for() {
        // Reset is a call of both versions, and a different one in each (Hard/Soft against
        // Immediate/OnIdle): the version decides.
        let reset_16 = ActionName::new("Reset", OcppVersion::V16);
        let reset_201 = ActionName::new("Reset", OcppVersion::V201);
        assert_eq!(reset_16, ActionName::V16(v16::Command::Reset));
        assert_eq!(reset_201, ActionName::V201(v201::Command::Reset));
        assert_ne!(reset_16, reset_201);
        assert_eq!(reset_201.command(), None, "no 1.6 call");
        assert_eq!(reset_201.command_v201(), Some(v201::Command::Reset));
        assert_eq!(reset_201.version(), Some(OcppVersion::V201));
        assert_eq!(reset_201.as_str(), "Reset");

        // A call of one version only is unknown in the other.
        let start = ActionName::new("RequestStartTransaction", OcppVersion::V201);
        assert_eq!(
            start,
            ActionName::V201(v201::Command::RequestStartTransaction)
        );
        assert_eq!(
            ActionName::new("RequestStartTransaction", OcppVersion::V16),
            ActionName::Unknown("RequestStartTransaction".into())
        );
        assert_eq!(
            ActionName::new("RemoteStartTransaction", OcppVersion::V201),
            ActionName::Unknown("RemoteStartTransaction".into())
        );
        for command in v201::Command::ALL {
            let name = ActionName::new(command.as_str(), OcppVersion::V201);
            assert_eq!(name, ActionName::V201(command));
        }
    }
}
