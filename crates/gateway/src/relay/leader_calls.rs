//! Which calls a charger's leader proxy server may make it (docs/proxy.md, "The leader's
//! calls"): those of `--relay-leader-calls`, and never a ChangeConfiguration of a security key.
//! Everything else is answered `SecurityError` and never reaches the charger: a leader is
//! trusted to run the charger, not to undo what keeps it cms's.

use cms_ocpp::ErrorCode;
use cms_ocpp::v16::Command;
use std::fmt;

/// The calls of [`Command::ALL`] a leader may send, one bit each (by their place in it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaderCalls(u32);

/// Left out by default, as they would undo what cms set up on the charger: its local
/// authorisation list (SendLocalList), the charging profiles by which smart charging keeps
/// a site under its grid limit (a SetChargingProfile can lift the limit as surely as a
/// ClearChargingProfile removes it), and its certificates (the security extension's: whom the
/// charger trusts, and the client certificate it shows cms). An operator may still list them.
const NOT_BY_DEFAULT: [Command; 6] = [
    Command::SendLocalList,
    Command::SetChargingProfile,
    Command::ClearChargingProfile,
    Command::CertificateSigned,
    Command::DeleteCertificate,
    Command::InstallCertificate,
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

fn bit(command: Command) -> u32 {
    let place = Command::ALL.iter().position(|c| *c == command);
    1 << place.unwrap_or_default()
}

impl Default for LeaderCalls {
    fn default() -> LeaderCalls {
        let all = Command::ALL.iter().fold(0, |calls, c| calls | bit(*c));
        let left_out = NOT_BY_DEFAULT.iter().fold(0, |calls, c| calls | bit(*c));
        LeaderCalls(all & !left_out)
    }
}

impl LeaderCalls {
    /// No call at all.
    pub const NONE: LeaderCalls = LeaderCalls(0);

    /// Reads the flag's value: OCPP 1.6 names of the central system's calls, comma-separated
    /// (spaces around them allowed), or `none`.
    pub fn parse(text: &str) -> Result<LeaderCalls, String> {
        let text = text.trim();
        if text.is_empty() || text.eq_ignore_ascii_case("none") {
            return Ok(LeaderCalls::NONE);
        }
        let mut calls = LeaderCalls::NONE;
        for name in text.split(',').map(str::trim) {
            let Some(command) = Command::from_name(name) else {
                let known: Vec<&str> = Command::ALL.iter().map(|c| c.as_str()).collect();
                return Err(format!(
                    "{name:?} is not a call of a central system in OCPP 1.6; the calls are \
                     {}, or `none`",
                    known.join(",")
                ));
            };
            calls.0 |= bit(command);
        }
        Ok(calls)
    }

    pub fn allows(self, command: Command) -> bool {
        self.0 & bit(command) != 0
    }

    /// Why cms refuses the leader's call of `action` with `request`, as the CALLERROR to
    /// answer it with; `None` when it may go to the charger.
    pub fn refusal(self, action: &str, request: &serde_json::Value) -> Option<(ErrorCode, String)> {
        let Some(command) = Command::from_name(action) else {
            let why = format!("{action} is not a call of a central system in OCPP 1.6");
            return Some((ErrorCode::NotImplemented, why));
        };
        if !self.allows(command) {
            let why = format!(
                "cms does not relay {action} from a leader proxy server to this charger \
                 (--relay-leader-calls)"
            );
            return Some((ErrorCode::SecurityError, why));
        }
        if command == Command::ChangeConfiguration {
            let key = request["key"].as_str().map(str::trim).unwrap_or_default();
            if let Some(key) = SECURITY_KEYS.iter().find(|k| k.eq_ignore_ascii_case(key)) {
                let why = format!(
                    "cms never relays a change of {key} from a leader proxy server: it is a \
                     security key of the charger"
                );
                return Some((ErrorCode::SecurityError, why));
            }
        }
        None
    }
}

/// The flag's form: the names, comma-separated, in [`Command::ALL`]'s order; `none`.
impl fmt::Display for LeaderCalls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Command::ALL
            .iter()
            .filter(|c| self.allows(**c))
            .map(|c| c.as_str())
            .collect();
        match names.is_empty() {
            true => f.write_str("none"),
            false => f.write_str(&names.join(",")),
        }
    }
}

#[cfg(test)]
mod tests;
