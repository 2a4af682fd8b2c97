//! OCPI 2.2.1 in the CPO role (docs/ocpi.md): providers as OCPI parties, what is published to
//! them, the tokens they push, their commands, and the outbox of what cms pushes to them.

pub mod cdrs;
pub mod commands;
pub mod cpo;
pub mod dispatcher;
pub mod locations;
pub mod parties;
pub mod pushes;
pub mod sessions;
pub mod tokens;

use sha2::{Digest, Sha256};

/// How a credentials token is kept: its SHA-256, hex. The token itself is shown once, when
/// made, and never stored.
pub fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests;
