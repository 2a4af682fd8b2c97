//! Human passwords (the OAuth login page): unlike the machine secrets of this crate they are
//! guessable, so they are stretched with PBKDF2-HMAC-SHA256 at the iteration count OWASP
//! recommends (600,000), which makes each guess against a stolen table cost as much.

use crate::{CredentialError, constant_time_eq, fill_random, hex, unhex};
use sha2::Sha256;

const ITERATIONS: u32 = 600_000;
const SCHEME: &str = "pbkdf2-sha256";

/// `pbkdf2-sha256$<iterations>$<salt hex>$<key hex>`, with a fresh random salt.
pub fn hash_password(password: &str) -> String {
    let mut salt = [0u8; 16];
    fill_random(&mut salt);
    let key = derive(password, &salt, ITERATIONS);
    format!("{SCHEME}${ITERATIONS}${}${}", hex(&salt), hex(&key))
}

/// Whether `password` matches a value made by [`hash_password`] (with whatever iteration count
/// it was made with), compared in constant time.
pub fn verify_password(password: &str, stored: &str) -> Result<bool, CredentialError> {
    let mut parts = stored.split('$');
    let (Some(SCHEME), Some(iterations), Some(salt), Some(expected), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return Err(CredentialError::MalformedHash);
    };
    let iterations: u32 = iterations
        .parse()
        .ok()
        .filter(|n| (1..=10_000_000).contains(n))
        .ok_or(CredentialError::MalformedHash)?;
    let salt = unhex(salt).ok_or(CredentialError::MalformedHash)?;
    let actual = hex(&derive(password, &salt, iterations));
    Ok(constant_time_eq(actual.as_bytes(), expected.as_bytes()))
}

fn derive(password: &str, salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut key = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), salt, iterations, &mut key);
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_verifies_and_a_wrong_one_does_not() {
        let stored = hash_password("correct horse battery staple");
        assert!(stored.starts_with("pbkdf2-sha256$600000$"));
        assert!(!stored.contains("correct"));
        assert_eq!(
            verify_password("correct horse battery staple", &stored),
            Ok(true)
        );
        assert_eq!(
            verify_password("correct horse battery stapler", &stored),
            Ok(false)
        );
        assert_ne!(stored, hash_password("correct horse battery staple"));
    }

    #[test]
    fn the_derivation_is_pbkdf2_hmac_sha256() {
        // RFC 7914 section 11: PBKDF2-HMAC-SHA256("passwd", "salt", 1, 64), first 32 bytes.
        assert_eq!(
            hex(&derive("passwd", b"salt", 1)),
            "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
        );
    }

    #[test]
    fn malformed_hashes_are_reported() {
        for bad in [
            "",
            "sha256$00$00",
            "pbkdf2-sha256$0$00$00",
            "pbkdf2-sha256$x$00$00",
        ] {
            assert_eq!(
                verify_password("x", bad),
                Err(CredentialError::MalformedHash),
                "{bad}"
            );
        }
    }
}
