//! Configuration keys that carry secrets: write-only everywhere cms shows or publishes a
//! charger's configuration (settings, the action log, the bus, logs), as the OCPP 1.6 security
//! whitepaper makes `AuthorizationKey`.
//!
//! A key is secret when its name ends (ASCII case-insensitively) in one of [`SECRET_SUFFIXES`]:
//! the whitepaper's `AuthorizationKey` (also as a vendor's `BackOfficeAuthorizationKey`), OCPP
//! 2.0.1's `BasicAuthPassword` that some 1.6 firmwares use, and vendors' credentials such as
//! `WifiPassword`, `MqttPasswd`, `ModemPassphrase`, `ProxySecret`, `TlsPrivateKey`, `WlanPsk`.
//! A name is matched whole-suffix, not by substring: `PasswordPolicy` or `SecretLength` are not
//! secret, nor is a `PublicKey`.

use serde_json::Value;

/// What cms shows in place of a secret value.
pub const MASK: &str = "***";

/// The name endings that make a configuration key secret.
pub const SECRET_SUFFIXES: [&str; 7] = [
    "authorizationkey",
    "password",
    "passwd",
    "passphrase",
    "secret",
    "privatekey",
    "psk",
];

/// The whitepaper's key for the charger's Basic-auth password (its HTTP credential in cms).
pub const AUTHORIZATION_KEY: &str = "AuthorizationKey";

/// Whether configuration key `key` carries a secret.
pub fn is_secret_key(key: &str) -> bool {
    let key = key.as_bytes();
    SECRET_SUFFIXES.iter().any(|suffix| {
        key.len() >= suffix.len()
            && key[key.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    })
}

/// Whether `request` of central-system action `action` carries a secret value: a
/// ChangeConfiguration of a secret key.
pub fn carries_secret(action: &str, request: &Value) -> bool {
    action == "ChangeConfiguration" && request["key"].as_str().is_some_and(is_secret_key)
}

/// Hides the secret in `request` of `action` (a ChangeConfiguration's value of a secret key);
/// whether there was one.
pub fn mask_request(action: &str, request: &mut Value) -> bool {
    if !carries_secret(action, request) {
        return false;
    }
    if let Some(value) = request.get_mut("value") {
        *value = Value::String(MASK.into());
    }
    true
}

/// Hides the secrets in `response` of `action`: the values of the secret keys a
/// GetConfiguration answer reports (a key reported without a value stays so).
pub fn mask_response(action: &str, response: &mut Value) {
    if action != "GetConfiguration" {
        return;
    }
    let Some(keys) = response
        .get_mut("configurationKey")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for entry in keys {
        let secret = entry["key"].as_str().is_some_and(is_secret_key);
        if let (true, Some(value)) = (secret, entry.get_mut("value"))
            && !value.is_null()
        {
            *value = Value::String(MASK.into());
        }
    }
}

#[cfg(test)]
mod tests;
