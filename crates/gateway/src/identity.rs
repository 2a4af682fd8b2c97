//! The charger identity of the connection URL, parsed once at the boundary.

use cms_credentials::{CHARGER_IDENTITY_LEN, CredentialError, check_charger_identity};
use percent_encoding::percent_decode_str;
use std::fmt;
use std::sync::Arc;

/// Longest identity a charger may have (OCPP security whitepaper: 48 characters).
pub const MAX_IDENTITY_LEN: usize = *CHARGER_IDENTITY_LEN.end();

/// A valid charger identity: 1 to 48 characters of `A-Z a-z 0-9 * - _ = : + | @ .`, the
/// character set OCPP 2.0.1 fixes for identities and 1.6 chargers keep to in practice.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChargerIdentity(Arc<str>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    #[error("the charger identity is empty")]
    Empty,
    #[error("the charger identity is longer than {MAX_IDENTITY_LEN} characters")]
    TooLong,
    #[error("the charger identity has a character outside A-Z a-z 0-9 * - _ = : + | @ .")]
    BadCharacter,
    #[error("the charger identity is not valid percent-encoded UTF-8")]
    BadEncoding,
}

impl ChargerIdentity {
    /// Parses an identity as a user or the command line writes it. The rule is the one the
    /// API registers identities by ([`check_charger_identity`]), so that every registered
    /// charger can connect.
    pub fn parse(text: &str) -> Result<Self, IdentityError> {
        if text.is_empty() {
            return Err(IdentityError::Empty);
        }
        match check_charger_identity(text) {
            Ok(()) => Ok(ChargerIdentity(text.into())),
            Err(CredentialError::IdentityLength) => Err(IdentityError::TooLong),
            // The only other refusal: IdentityCharacters.
            Err(_) => Err(IdentityError::BadCharacter),
        }
    }

    /// Parses the last segment of `/ocpp/{identity}`, percent-decoding it first.
    pub fn from_path_segment(segment: &str) -> Result<Self, IdentityError> {
        let decoded = percent_decode_str(segment)
            .decode_utf8()
            .map_err(|_| IdentityError::BadEncoding)?;
        Self::parse(&decoded)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ChargerIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_are_percent_decoded() {
        let id = ChargerIdentity::from_path_segment("CP%3A01").unwrap();
        assert_eq!(id.as_str(), "CP:01");
    }

    #[test]
    fn identities_have_at_most_48_characters() {
        assert!(ChargerIdentity::parse(&"A".repeat(48)).is_ok());
        assert_eq!(
            ChargerIdentity::parse(&"A".repeat(49)),
            Err(IdentityError::TooLong)
        );
        assert_eq!(ChargerIdentity::parse(""), Err(IdentityError::Empty));
    }

    #[test]
    fn identities_keep_to_the_ocpp_character_set() {
        assert!(ChargerIdentity::parse("ABB*Terra-54_x=1+y|z@site.nl").is_ok());
        for bad in ["CP 1", "CP/1", "CP%1", "CPé", "CP\n1"] {
            assert_eq!(
                ChargerIdentity::parse(bad),
                Err(IdentityError::BadCharacter),
                "{bad:?}"
            );
        }
        assert_eq!(
            ChargerIdentity::from_path_segment("CP%FF"),
            Err(IdentityError::BadEncoding)
        );
    }
}
