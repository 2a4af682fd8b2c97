//! Secrets at rest: charger passwords and API tokens are stored only as salted SHA-256 digests.
//!
//! Why SHA-256 and not a slow password hash: both secrets are machine credentials checked on hot
//! paths (10,000 chargers reconnecting after a gateway restart each present their password), and
//! both are long and random: tokens are 40 random characters, and charger passwords must be 16
//! to 40 characters as the OCPP 1.6 security whitepaper asks of the `AuthorizationKey`. A slow
//! hash protects guessable human passwords; it buys nothing for these and costs a reconnect storm.
#![forbid(unsafe_code)]

mod password;

pub use password::{hash_password, verify_password};

use sha2::{Digest, Sha256};

/// Charger passwords, as the OCPP 1.6 security whitepaper bounds the basic-auth password.
pub const CHARGER_PASSWORD_LEN: std::ops::RangeInclusive<usize> = 16..=40;

/// Charger identities: the whitepaper's 48 characters at most.
pub const CHARGER_IDENTITY_LEN: std::ops::RangeInclusive<usize> = 1..=48;

/// The characters an identity may have besides ASCII letters and digits.
pub const CHARGER_IDENTITY_SYMBOLS: &str = "*-_=:+|@.";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    #[error("the password must be 16 to 40 characters long")]
    PasswordLength,
    #[error("the password must be printable ASCII without ':'")]
    PasswordCharacters,
    #[error("the identity must be 1 to 48 characters long")]
    IdentityLength,
    #[error("the identity must be characters of A-Z a-z 0-9 * - _ = : + | @ .")]
    IdentityCharacters,
    #[error("stored hash is malformed")]
    MalformedHash,
    /// Profile 0 takes no credentials, profile 3 a client certificate instead.
    #[error("a charger of security profile {0} takes no password")]
    PasswordNotUsed(u8),
    #[error("the security profile must be 0, 1, 2 or 3")]
    UnknownProfile,
}

/// How long a generated charger password is: 32 characters of 62 (about 190 bits), within the
/// whitepaper's 16 to 40.
pub const GENERATED_CHARGER_PASSWORD_LEN: usize = 32;

/// What registering a charger keeps of its credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChargerCredentials {
    /// The hash of its Basic-auth password; `None` for a charger that takes no credentials.
    pub password_hash: Option<String>,
    /// The password when it was generated here: to be shown once, never stored.
    pub generated_password: Option<String>,
}

/// A new charger's credentials for OCPP security profile `profile`: 1 (Basic auth, the default
/// everywhere a charger is registered) and 2 (Basic auth over TLS) use `password`, or generate a
/// strong one when none is given, so no charger is open by accident; 3 (a client certificate
/// over TLS) takes no password; 0 (no credentials, for test benches) must be asked for and
/// takes none either.
pub fn charger_credentials(
    profile: u8,
    password: Option<&str>,
) -> Result<ChargerCredentials, CredentialError> {
    match (profile, password) {
        (0 | 3, None) => Ok(ChargerCredentials {
            password_hash: None,
            generated_password: None,
        }),
        (0 | 3, Some(_)) => Err(CredentialError::PasswordNotUsed(profile)),
        (1 | 2, Some(password)) => {
            check_charger_password(password)?;
            Ok(ChargerCredentials {
                password_hash: Some(hash_secret(password)),
                generated_password: None,
            })
        }
        (1 | 2, None) => {
            let password = random_token(GENERATED_CHARGER_PASSWORD_LEN);
            Ok(ChargerCredentials {
                password_hash: Some(hash_secret(&password)),
                generated_password: Some(password),
            })
        }
        _ => Err(CredentialError::UnknownProfile),
    }
}

/// Checks a charger password against the whitepaper's rules.
pub fn check_charger_password(password: &str) -> Result<(), CredentialError> {
    if !CHARGER_PASSWORD_LEN.contains(&password.chars().count()) {
        return Err(CredentialError::PasswordLength);
    }
    // ':' separates identity from password in the Basic header; non-printables break it too.
    if !password.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
        return Err(CredentialError::PasswordCharacters);
    }
    Ok(())
}

/// Checks a charger identity against the gateway's rule for the last segment of
/// `/ocpp/{identity}`: the character set OCPP 2.0.1 fixes for identities, which 1.6 chargers
/// keep to in practice. Registering an identity the gateway would refuse makes a charger that
/// can never connect.
pub fn check_charger_identity(identity: &str) -> Result<(), CredentialError> {
    if !CHARGER_IDENTITY_LEN.contains(&identity.chars().count()) {
        return Err(CredentialError::IdentityLength);
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || CHARGER_IDENTITY_SYMBOLS.contains(c);
    if !identity.chars().all(allowed) {
        return Err(CredentialError::IdentityCharacters);
    }
    Ok(())
}

/// Hashes a secret with a fresh random salt; the result is `sha256$<salt hex>$<digest hex>`.
pub fn hash_secret(secret: &str) -> String {
    let mut salt = [0u8; 16];
    fill_random(&mut salt);
    format!("sha256${}${}", hex(&salt), hex(&digest(&salt, secret)))
}

/// Whether `secret` matches a value made by [`hash_secret`], compared in constant time.
pub fn verify_secret(secret: &str, stored: &str) -> Result<bool, CredentialError> {
    let mut parts = stored.split('$');
    let (Some("sha256"), Some(salt), Some(expected), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(CredentialError::MalformedHash);
    };
    let salt = unhex(salt).ok_or(CredentialError::MalformedHash)?;
    let actual = hex(&digest(&salt, secret));
    Ok(constant_time_eq(actual.as_bytes(), expected.as_bytes()))
}

/// A random token of `len` characters from [A-Za-z0-9].
pub fn random_token(len: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut out = String::with_capacity(len);
    let mut buf = [0u8; 64];
    while out.len() < len {
        fill_random(&mut buf);
        // Rejection sampling keeps every character equally likely (248 = 4 * 62).
        for b in buf.iter().filter(|b| **b < 248) {
            if out.len() == len {
                break;
            }
            out.push(ALPHABET[(*b % 62) as usize] as char);
        }
    }
    out
}

pub(crate) fn fill_random(buf: &mut [u8]) {
    getrandom::fill(buf).expect("the operating system's random source failed");
}

fn digest(salt: &[u8], secret: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(salt);
    hasher.update(secret.as_bytes());
    hasher.finalize().into()
}

/// Equal, in a time that does not tell how much of `a` matched `b`.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hashed_secret_verifies_and_a_wrong_one_does_not() {
        let stored = hash_secret("correct horse battery");
        assert!(stored.starts_with("sha256$"));
        assert!(!stored.contains("correct"));
        assert_eq!(verify_secret("correct horse battery", &stored), Ok(true));
        assert_eq!(verify_secret("correct horse batterx", &stored), Ok(false));
    }

    #[test]
    fn the_same_secret_hashes_differently_each_time() {
        assert_ne!(hash_secret("same secret"), hash_secret("same secret"));
    }

    #[test]
    fn malformed_stored_hashes_are_reported() {
        for bad in [
            "",
            "sha256$zz$00",
            "md5$00$00",
            "sha256$00",
            "sha256$0$00$x",
        ] {
            assert_eq!(
                verify_secret("x", bad),
                Err(CredentialError::MalformedHash),
                "{bad}"
            );
        }
    }

    #[test]
    fn charger_passwords_follow_the_whitepaper_bounds() {
        assert_eq!(
            check_charger_password("short"),
            Err(CredentialError::PasswordLength)
        );
        assert!(check_charger_password(&"a".repeat(16)).is_ok());
        assert!(check_charger_password(&"a".repeat(40)).is_ok());
        assert_eq!(
            check_charger_password(&"a".repeat(41)),
            Err(CredentialError::PasswordLength)
        );
        assert_eq!(
            check_charger_password("with:colon-and-long-enough"),
            Err(CredentialError::PasswordCharacters)
        );
    }

    #[test]
    fn charger_identities_follow_the_gateways_rule() {
        assert!(check_charger_identity("ABB*Terra-54_x=1+y|z@site.nl:2").is_ok());
        assert!(check_charger_identity(&"A".repeat(48)).is_ok());
        for (bad, expected) in [
            ("", CredentialError::IdentityLength),
            ("A".repeat(49).as_str(), CredentialError::IdentityLength),
            ("CP 1", CredentialError::IdentityCharacters),
            ("CP/1", CredentialError::IdentityCharacters),
            ("CP%1", CredentialError::IdentityCharacters),
            ("CPé", CredentialError::IdentityCharacters),
        ] {
            assert_eq!(check_charger_identity(bad), Err(expected), "{bad:?}");
        }
    }

    #[test]
    fn a_charger_without_a_password_gets_a_generated_one_unless_profile_0_is_asked_for() {
        let generated = charger_credentials(1, None).unwrap();
        let password = generated.generated_password.expect("generated");
        assert!(check_charger_password(&password).is_ok());
        let hash = generated.password_hash.expect("kept hashed");
        assert_eq!(verify_secret(&password, &hash), Ok(true));

        let given = charger_credentials(1, Some("sixteen-chars-ok")).unwrap();
        assert_eq!(given.generated_password, None);
        assert_eq!(
            verify_secret("sixteen-chars-ok", &given.password_hash.unwrap()),
            Ok(true)
        );
        assert_eq!(
            charger_credentials(1, Some("short")),
            Err(CredentialError::PasswordLength)
        );

        let open = charger_credentials(0, None).unwrap();
        assert_eq!((open.password_hash, open.generated_password), (None, None));
        assert_eq!(
            charger_credentials(0, Some("sixteen-chars-ok")),
            Err(CredentialError::PasswordNotUsed(0))
        );
        let tls = charger_credentials(2, None).unwrap();
        assert!(
            tls.generated_password.is_some(),
            "profile 2 is Basic auth too"
        );
        let certificate = charger_credentials(3, None).unwrap();
        assert_eq!(certificate.password_hash, None);
        assert_eq!(
            charger_credentials(3, Some("sixteen-chars-ok")),
            Err(CredentialError::PasswordNotUsed(3))
        );
        assert_eq!(
            charger_credentials(4, None),
            Err(CredentialError::UnknownProfile)
        );
    }

    #[test]
    fn random_tokens_have_the_asked_length_and_alphabet() {
        let token = random_token(40);
        assert_eq!(token.len(), 40);
        assert!(token.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_ne!(token, random_token(40));
    }
}
