//! The action of a charger's CALL in either OCPP version: what a session, its metrics and its
//! records name a call by.

use cms_ocpp::{v16, v201};

/// A CALL's action, in the version of the session it came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChargerAction {
    V16(v16::Action),
    V201(v201::Action),
}

impl ChargerAction {
    /// The action's name, as the CALL and the record's `action` header spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            ChargerAction::V16(action) => action.as_str(),
            ChargerAction::V201(action) => action.as_str(),
        }
    }

    /// Whether its record carries data (answered only once the bus has it, unless
    /// `--ack-after receive`): all but a heartbeat and a tag's authorisation, in both versions.
    pub fn carries_data(self) -> bool {
        match self {
            ChargerAction::V16(action) => action.carries_data(),
            ChargerAction::V201(action) => {
                !matches!(action, v201::Action::Heartbeat | v201::Action::Authorize)
            }
        }
    }

    /// Its place among every action of both versions, 1.6's first ([`Self::all`]'s order).
    pub fn index(self) -> usize {
        match self {
            ChargerAction::V16(action) => v16::Action::ALL
                .iter()
                .position(|a| *a == action)
                .unwrap_or(0),
            ChargerAction::V201(action) => {
                let place = v201::Action::ALL.iter().position(|a| *a == action);
                v16::Action::ALL.len() + place.unwrap_or(0)
            }
        }
    }

    /// Every action of both versions, in [`Self::index`] order.
    pub fn all() -> impl Iterator<Item = ChargerAction> {
        let v16 = v16::Action::ALL.into_iter().map(ChargerAction::V16);
        v16.chain(v201::Action::ALL.into_iter().map(ChargerAction::V201))
    }
}
