//! OAuth 2.0 authorization code grant (RFC 6749 §4.1) with PKCE (RFC 7636) and rotating refresh
//! tokens: registered clients, the authorization requests users log in to and decide on, the
//! single-use codes they yield, and the access and refresh tokens those are exchanged for.
//!
//! Every secret is stored only as a salted digest. The opaque ones (request, code, access and
//! refresh tokens) are `<selector>.<verifier>`: the random selector finds the row, the verifier
//! is checked against its digest, so no secret is ever looked up by its own value. They never
//! contain `|`, which tells them from personal access tokens (`<id>|<secret>`).
//!
//! PKCE with `S256` is required of every client (RFC 9700 §2.1.1). Pending requests are bounded
//! (per client address and in all, [`PendingLimits`]) and end after
//! [`MAX_FAILED_LOGINS_PER_REQUEST`] wrong passwords; clients and grants can be revoked, which
//! ends every token they issued at once.
//!
//! Operations take `now` so that expiry is tested without waiting.

mod authorization;
mod clients;
mod grants;
mod password;
#[cfg(test)]
mod pending_tests;
mod revocation;
#[cfg(test)]
mod revocation_tests;
#[cfg(test)]
mod tests;
mod token_revocation;

pub use authorization::{
    AuthorizationRequest, BeginError, Decision, PendingAuthorization, PendingLimits,
};
pub use clients::{OAuthClient, check_redirect_uri};
pub use grants::{GrantError, IssuedTokens};
pub(crate) use password::password_matches;
pub use revocation::{ClientListing, OAuthGrant};
pub use token_revocation::TokenRevocation;

use cms_credentials::{hash_secret, random_token, verify_secret};
use std::time::Duration;

/// The `client_id` of the operator console's client, which every store has (migration 0031):
/// public (it has no secret, so only what needs none takes it: PKCE codes and refresh tokens),
/// and sent back only to `/console/` on the origin its authorization request came to (checked
/// by the API, which sees that origin). It cannot be revoked: the console would be locked out
/// until someone wrote the row back by hand; users revoke their grants of it instead.
pub const CONSOLE_CLIENT_ID: &str = "cms-console";

/// How long a user has between opening the authorization page and deciding, per step.
pub const AUTHORIZATION_REQUEST_TTL: Duration = Duration::from_secs(10 * 60);
/// How long an authorization code may wait to be exchanged.
pub const AUTH_CODE_TTL: Duration = Duration::from_secs(10 * 60);
/// An access token's lifetime (the token response's `expires_in`).
pub const ACCESS_TOKEN_TTL: Duration = Duration::from_secs(60 * 60);
/// A refresh token's lifetime; each refresh replaces it with a new one.
pub const REFRESH_TOKEN_TTL: Duration = Duration::from_secs(30 * 24 * 60 * 60);
/// Wrong passwords a pending authorization request survives: the last one deletes it, so that
/// guessing on one request stops there even across API replicas (whose login limiters each
/// count on their own).
pub const MAX_FAILED_LOGINS_PER_REQUEST: i64 = 5;

/// An opaque secret `<selector>.<verifier>`.
pub(crate) struct OpaqueSecret {
    pub(crate) selector: String,
    verifier: String,
}

impl OpaqueSecret {
    fn generate() -> OpaqueSecret {
        OpaqueSecret {
            selector: random_token(16),
            verifier: random_token(40),
        }
    }

    /// `None` for anything not of the form: it cannot be one of ours.
    pub(crate) fn parse(text: &str) -> Option<OpaqueSecret> {
        let (selector, verifier) = text.trim().split_once('.')?;
        let alphanumeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric());
        (alphanumeric(selector) && alphanumeric(verifier)).then(|| OpaqueSecret {
            selector: selector.to_string(),
            verifier: verifier.to_string(),
        })
    }

    fn plain(&self) -> String {
        format!("{}.{}", self.selector, self.verifier)
    }

    fn verifier_hash(&self) -> String {
        hash_secret(&self.verifier)
    }

    fn matches(&self, verifier_hash: &str) -> bool {
        verify_secret(&self.verifier, verifier_hash).unwrap_or(false)
    }
}

/// A PKCE code challenge (RFC 7636 §4.2), as the code verifier will be checked against it.
/// Only `S256`: `plain` would show the verifier to whoever sees the authorization request
/// (RFC 9700 §2.1.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeChallenge {
    /// `S256`: the SHA-256 of the verifier (the challenge, base64url-decoded).
    S256([u8; 32]),
}

impl CodeChallenge {
    /// As stored: a digest in cms_credentials' form that only the verifier matches: the
    /// challenge itself with an empty salt (`sha256$$<hex>`), as it already is the verifier's
    /// SHA-256.
    fn digest(&self) -> String {
        let CodeChallenge::S256(sha256) = self;
        let hex: String = sha256.iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256$${hex}")
    }
}

/// `now + ttl` as a record time.
fn expiry(now: chrono::DateTime<chrono::Utc>, ttl: Duration) -> String {
    let ttl = chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::zero());
    crate::format_record_time(now + ttl)
}
