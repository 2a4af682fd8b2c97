//! Which calls a charger's leader proxy server may make it (docs/proxy.md, "The leader's
//! calls"): those of `--relay-leader-calls`, in the charger's OCPP version, and never a change
//! of a security setting (1.6's ChangeConfiguration of a whitepaper key, 2.0.1's SetVariables of
//! the SecurityCtrlr or of where the station connects). Everything else is answered
//! `SecurityError` and never reaches the charger: a leader is trusted to run the charger, not to
//! undo what keeps it cms's.

use cms_ocpp::{ErrorCode, OcppVersion, v16, v201};
use std::fmt;

/// The calls a leader may send, one bit each by their place in [`v16::Command::ALL`] and in
/// [`v201::Command::ALL`]. A name both versions have (Reset, ReserveNow, ...) is allowed or
/// not in both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaderCalls {
    v16: u64,
    v201: u64,
}

/// Left out by default, as they would undo what cms set up on the charger: its local
/// authorisation list (SendLocalList), the charging profiles by which smart charging keeps a
/// site under its grid limit (a SetChargingProfile can lift the limit as surely as a
/// ClearChargingProfile removes it), and the certificates the charger trusts and shows (a
/// leader's CA or certificate could take the charger's TLS away from cms). An operator may
/// still list them.
const NOT_BY_DEFAULT: [&str; 6] = [
    "SendLocalList",
    "SetChargingProfile",
    "ClearChargingProfile",
    "CertificateSigned",
    "InstallCertificate",
    "DeleteCertificate",
];

/// Configuration keys a leader may never change, whatever the list: those of the OCPP 1.6
/// security whitepaper. A leader that changed the AuthorizationKey would lock the charger out
/// of cms (cms checks the password it knows); one that changed the SecurityProfile, out of its
/// TLS. Told apart without regard to case, as the REST API's settings are and many chargers
/// read them.
pub const SECURITY_KEYS: [&str; 6] = [
    "AdditionalRootCertificateCheck",
    "AuthorizationKey",
    "CertificateSignedMaxChainSize",
    "CertificateStoreMaxLength",
    "CpoName",
    "SecurityProfile",
];

/// A 2.0.1 component a leader may never set a variable of: the SecurityCtrlr holds the
/// station's password, identity, organisation and certificate limits.
pub const SECURITY_COMPONENT: &str = "SecurityCtrlr";
/// And the variable that picks which network profile (so which central system) the station
/// connects to: set by a leader, the station could leave cms.
pub const CONNECTION_VARIABLE: (&str, &str) = ("OCPPCommCtrlr", "NetworkConfigurationPriority");

fn bit<T: PartialEq>(all: &[T], call: &T) -> u64 {
    all.iter()
        .position(|c| c == call)
        .map_or(0, |place| 1 << place)
}

fn v16_bit(command: v16::Command) -> u64 {
    bit(&v16::Command::ALL, &command)
}

fn v201_bit(command: v201::Command) -> u64 {
    bit(&v201::Command::ALL, &command)
}

impl Default for LeaderCalls {
    fn default() -> LeaderCalls {
        let v16 = v16::Command::ALL
            .into_iter()
            .filter(|c| !NOT_BY_DEFAULT.contains(&c.as_str()))
            .fold(0, |calls, c| calls | v16_bit(c));
        let v201 = v201::Command::ALL
            .into_iter()
            .filter(|c| !NOT_BY_DEFAULT.contains(&c.as_str()))
            .fold(0, |calls, c| calls | v201_bit(c));
        LeaderCalls { v16, v201 }
    }
}

impl LeaderCalls {
    /// No call at all.
    pub const NONE: LeaderCalls = LeaderCalls { v16: 0, v201: 0 };

    /// Reads the flag's value: names of the central system's calls of OCPP 1.6 or 2.0.1,
    /// comma-separated (spaces around them allowed), or `none`.
    pub fn parse(text: &str) -> Result<LeaderCalls, String> {
        let text = text.trim();
        if text.is_empty() || text.eq_ignore_ascii_case("none") {
            return Ok(LeaderCalls::NONE);
        }
        let mut calls = LeaderCalls::NONE;
        for name in text.split(',').map(str::trim) {
            let v16 = v16::Command::from_name(name);
            let v201 = v201::Command::from_name(name);
            if v16.is_none() && v201.is_none() {
                return Err(format!(
                    "{name:?} is not a call of a central system in OCPP 1.6 or 2.0.1; the calls \
                     are {}, or `none`",
                    all_names().join(",")
                ));
            }
            calls.v16 |= v16.map_or(0, v16_bit);
            calls.v201 |= v201.map_or(0, v201_bit);
        }
        Ok(calls)
    }

    pub fn allows(self, command: v16::Command) -> bool {
        self.v16 & v16_bit(command) != 0
    }

    pub fn allows_v201(self, command: v201::Command) -> bool {
        self.v201 & v201_bit(command) != 0
    }

    /// Why cms refuses the leader's call of `action` with `request` to a charger speaking
    /// `version`, as the CALLERROR to answer it with; `None` when it may go to the charger.
    pub fn refusal(
        self,
        version: OcppVersion,
        action: &str,
        request: &serde_json::Value,
    ) -> Option<(ErrorCode, String)> {
        let allowed = match version {
            OcppVersion::V16 => v16::Command::from_name(action).map(|c| self.allows(c)),
            OcppVersion::V201 => v201::Command::from_name(action).map(|c| self.allows_v201(c)),
        };
        let number = version_number(version);
        match allowed {
            None if version == OcppVersion::V201 && v201::is_known_action(action) => {
                let why = format!("cms does not relay {action} from a leader proxy server");
                return Some((ErrorCode::SecurityError, why));
            }
            None => {
                let why = format!("{action} is not a call of a central system in OCPP {number}");
                return Some((ErrorCode::NotImplemented, why));
            }
            Some(false) => {
                let why = format!(
                    "cms does not relay {action} from a leader proxy server to this charger \
                     (--relay-leader-calls)"
                );
                return Some((ErrorCode::SecurityError, why));
            }
            Some(true) => {}
        }
        let setting = match (version, action) {
            (OcppVersion::V16, "ChangeConfiguration") => security_key(request),
            (OcppVersion::V201, "SetVariables") => security_variable(request),
            _ => None,
        };
        setting.map(|setting| {
            let why = format!(
                "cms never relays a change of {setting} from a leader proxy server: it is a \
                 security setting of the charger"
            );
            (ErrorCode::SecurityError, why)
        })
    }
}

/// The 1.6 security key a ChangeConfiguration would change, as the whitepaper spells it.
fn security_key(request: &serde_json::Value) -> Option<String> {
    let key = request["key"].as_str().map(str::trim).unwrap_or_default();
    SECURITY_KEYS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(key))
        .map(|k| k.to_string())
}

/// The first security variable a SetVariables would set, as `Component.Variable`. Component
/// and variable names are case-insensitive in 2.0.1.
fn security_variable(request: &serde_json::Value) -> Option<String> {
    let data = request["setVariableData"].as_array()?;
    data.iter().find_map(|entry| {
        let component = entry["component"]["name"].as_str().unwrap_or_default();
        let variable = entry["variable"]["name"].as_str().unwrap_or_default();
        let (connection_component, connection_variable) = CONNECTION_VARIABLE;
        let security = component.eq_ignore_ascii_case(SECURITY_COMPONENT)
            || (component.eq_ignore_ascii_case(connection_component)
                && variable.eq_ignore_ascii_case(connection_variable));
        security.then(|| format!("{component}.{variable}"))
    })
}

fn version_number(version: OcppVersion) -> &'static str {
    match version {
        OcppVersion::V16 => "1.6",
        OcppVersion::V201 => "2.0.1",
    }
}

/// Every name the flag takes: 1.6's calls, then 2.0.1's that 1.6 does not have.
fn all_names() -> Vec<&'static str> {
    let v16 = v16::Command::ALL.map(|c| c.as_str());
    let v201 = v201::Command::ALL
        .into_iter()
        .map(|c| c.as_str())
        .filter(|name| !v16.contains(name));
    v16.into_iter().chain(v201).collect()
}

/// The flag's form: the names allowed, comma-separated, 1.6's first then 2.0.1's own; `none`.
impl fmt::Display for LeaderCalls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = all_names()
            .into_iter()
            .filter(|name| {
                v16::Command::from_name(name).is_some_and(|c| self.allows(c))
                    || v201::Command::from_name(name).is_some_and(|c| self.allows_v201(c))
            })
            .collect();
        match names.is_empty() {
            true => f.write_str("none"),
            false => f.write_str(&names.join(",")),
        }
    }
}

#[cfg(test)]
mod tests;
