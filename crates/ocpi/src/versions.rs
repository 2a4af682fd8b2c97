//! The versions module's objects (2.2.1 part "versions"): what versions a party speaks, and
//! where each of its modules is in one of them.

use serde::{Deserialize, Serialize};

/// One version a party speaks, and where its details are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Version {
    pub version: String,
    pub url: String,
}

/// A version's modules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionDetails {
    pub version: String,
    pub endpoints: Vec<Endpoint>,
}

/// Where a module is, and in which role the party implements it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    /// The module: `credentials`, `locations`, `tokens`, ...
    pub identifier: String,
    /// `SENDER` or `RECEIVER`.
    pub role: String,
    pub url: String,
}

pub const SENDER: &str = "SENDER";
pub const RECEIVER: &str = "RECEIVER";

/// The modules cms implements as a CPO, and its role in each. Credentials is listed in both
/// roles: clients look it up by either.
pub const CPO_MODULES: &[(&str, &str)] = &[
    ("credentials", SENDER),
    ("credentials", RECEIVER),
    ("locations", SENDER),
    ("tariffs", SENDER),
    ("sessions", SENDER),
    ("cdrs", SENDER),
    ("tokens", RECEIVER),
    ("commands", RECEIVER),
];

/// cms's version details, its modules under `base` (`{public url}/ocpi/2.2.1`).
pub fn cpo_details(base: &str) -> VersionDetails {
    VersionDetails {
        version: crate::VERSION.into(),
        endpoints: CPO_MODULES
            .iter()
            .map(|(identifier, role)| Endpoint {
                identifier: identifier.to_string(),
                role: role.to_string(),
                url: format!("{base}/{identifier}"),
            })
            .collect(),
    }
}
