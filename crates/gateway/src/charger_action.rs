//! The action of a charger's CALL in either OCPP version: what a session, its metrics and its
//! records name a call by.

use crate::charger_calls_v201::V201_ACTIONS;
use cms_ocpp::v16;

/// A CALL's action, in the version of the session it came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChargerAction {
    V16(v16::Action),
    /// One of [`V201_ACTIONS`] (`cms_ocpp::v201::Action` once that is there).
    V201(&'static str),
}

impl ChargerAction {
    /// The action's name, as the CALL and the record's `action` header spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            ChargerAction::V16(action) => action.as_str(),
            ChargerAction::V201(name) => name,
        }
    }

    /// Whether its record carries data (answered only once the bus has it, unless
    /// `--ack-after receive`): all but a heartbeat and a tag's authorisation, in both versions.
    pub fn carries_data(self) -> bool {
        match self {
            ChargerAction::V16(action) => action.carries_data(),
            ChargerAction::V201(name) => !matches!(name, "Heartbeat" | "Authorize"),
        }
    }

    /// Its place among every action of both versions, 1.6's first ([`Self::all`]'s order).
    pub fn index(self) -> usize {
        match self {
            ChargerAction::V16(action) => v16::Action::ALL
                .iter()
                .position(|a| *a == action)
                .unwrap_or(0),
            ChargerAction::V201(name) => {
                let place = V201_ACTIONS.iter().position(|a| *a == name).unwrap_or(0);
                v16::Action::ALL.len() + place
            }
        }
    }

    /// Every action of both versions, in [`Self::index`] order.
    pub fn all() -> impl Iterator<Item = ChargerAction> {
        let v16 = v16::Action::ALL.into_iter().map(ChargerAction::V16);
        v16.chain(V201_ACTIONS.into_iter().map(ChargerAction::V201))
    }
}
