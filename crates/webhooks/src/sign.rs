//! Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over
//! `{id}.{timestamp}.{body}`, keyed by the base64-decoded secret (`whsec_<base64>`), sent as
//! `webhook-signature: v1,<base64>`, several space-separated during a secret's rotation.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The `webhook-id` header.
pub const ID_HEADER: &str = "webhook-id";
/// The `webhook-timestamp` header: unix seconds of the attempt.
pub const TIMESTAMP_HEADER: &str = "webhook-timestamp";
/// The `webhook-signature` header.
pub const SIGNATURE_HEADER: &str = "webhook-signature";

/// The key a secret stands for: the base64 after `whsec_` (the raw text of a secret that is
/// not base64, as the reference libraries take it).
fn key(secret: &str) -> Vec<u8> {
    let encoded = secret.strip_prefix("whsec_").unwrap_or(secret);
    STANDARD
        .decode(encoded)
        .unwrap_or_else(|_| encoded.as_bytes().to_vec())
}

fn mac(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Hmac<Sha256> {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(&key(secret)).expect("HMAC takes a key of any length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// One signature, `v1,<base64>`.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    let tag = mac(secret, id, timestamp, body).finalize().into_bytes();
    format!("v1,{}", STANDARD.encode(tag))
}

/// The `webhook-signature` header: a signature with each secret, space-separated, in the order
/// given (the current secret first during a rotation).
pub fn signature_header(secrets: &[String], id: &str, timestamp: i64, body: &[u8]) -> String {
    let signatures: Vec<String> = secrets
        .iter()
        .map(|secret| sign(secret, id, timestamp, body))
        .collect();
    signatures.join(" ")
}

/// Whether any `v1` signature of a `webhook-signature` header is `secret`'s over the message
/// (compared in constant time), as a receiver checks.
pub fn verify(secret: &str, id: &str, timestamp: i64, body: &[u8], header: &str) -> bool {
    header.split(' ').any(|signature| {
        let Some(encoded) = signature.strip_prefix("v1,") else {
            return false;
        };
        let Ok(tag) = STANDARD.decode(encoded) else {
            return false;
        };
        mac(secret, id, timestamp, body).verify_slice(&tag).is_ok()
    })
}

#[cfg(test)]
mod tests;
