//! The OCPP action a command is for, typed once where it is read off the bus: the gateway
//! matches on it and never parses the name again.

use cms_ocpp::v16::Command;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// One of the 19 central-system calls of OCPP 1.6, or a name this version does not know (from
/// an API of another version, or another producer): kept as written, so that the gateway can
/// end the action `failed` (`NotImplemented`) with a report that still names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionName {
    Known(Command),
    Unknown(String),
}

impl ActionName {
    /// The name as on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            ActionName::Known(command) => command.as_str(),
            ActionName::Unknown(name) => name,
        }
    }

    /// The call, when it is one this version knows.
    pub fn command(&self) -> Option<Command> {
        match self {
            ActionName::Known(command) => Some(*command),
            ActionName::Unknown(_) => None,
        }
    }
}

impl From<Command> for ActionName {
    fn from(command: Command) -> Self {
        ActionName::Known(command)
    }
}

impl From<&str> for ActionName {
    fn from(name: &str) -> Self {
        match Command::from_name(name) {
            Some(command) => ActionName::Known(command),
            None => ActionName::Unknown(name.to_string()),
        }
    }
}

impl From<String> for ActionName {
    fn from(name: String) -> Self {
        match Command::from_name(&name) {
            Some(command) => ActionName::Known(command),
            None => ActionName::Unknown(name),
        }
    }
}

impl fmt::Display for ActionName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ActionName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ActionName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(ActionName::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_name_is_kept_as_written() {
        let known: ActionName = serde_json::from_str(r#""Reset""#).unwrap();
        assert_eq!(known, ActionName::Known(Command::Reset));
        let unknown: ActionName = serde_json::from_str(r#""SetVariables""#).unwrap();
        assert_eq!(unknown, ActionName::Unknown("SetVariables".into()));
        assert_eq!(unknown.command(), None);
        assert_eq!(
            serde_json::to_string(&unknown).unwrap(),
            r#""SetVariables""#
        );
    }
}
