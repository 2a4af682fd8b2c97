//! Secrets on the bus: a change of a secret configuration key (a charger's password, a vendor's
//! Wi-Fi password) must reach the gateway that sends it, yet the commands topic is read by
//! consumer teams too. So the command carries its request masked, and the request as it is to
//! be sent sealed (ChaCha20-Poly1305, bound to the action's uuid) with a key the API and its
//! gateways share (`--secrets-key`; `cms up` makes one at start).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

/// The key secrets are sealed with on the bus: 32 bytes.
#[derive(Clone)]
pub struct SecretsKey([u8; 32]);

impl std::fmt::Debug for SecretsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretsKey(***)")
    }
}

impl SecretsKey {
    /// A key from its 64 hexadecimal digits (`openssl rand -hex 32`).
    pub fn parse(text: &str) -> Result<SecretsKey, String> {
        let text = text.trim();
        let bytes: Option<Vec<u8>> = (text.len() == 64)
            .then(|| {
                (0..64)
                    .step_by(2)
                    .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
                    .collect()
            })
            .flatten();
        let bytes = bytes.ok_or("a secrets key is 64 hexadecimal digits (32 bytes)")?;
        let mut key = [0u8; 32];
        key.copy_from_slice(&bytes);
        Ok(SecretsKey(key))
    }

    /// A fresh random key (for a process that is its own API and gateway: `cms up`).
    pub fn random() -> SecretsKey {
        let mut key = [0u8; 32];
        SystemRandom::new()
            .fill(&mut key)
            .expect("the operating system's random source failed");
        SecretsKey(key)
    }

    fn aead(&self) -> LessSafeKey {
        LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &self.0).expect("a 32-byte key"))
    }

    /// `plain` sealed for action `uuid`: base64 of a random nonce, the ciphertext and its tag.
    pub fn seal(&self, uuid: &str, plain: &[u8]) -> String {
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new()
            .fill(&mut nonce)
            .expect("the operating system's random source failed");
        let mut sealed = plain.to_vec();
        self.aead()
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(uuid.as_bytes()),
                &mut sealed,
            )
            .expect("sealing a small request");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        STANDARD.encode(out)
    }

    /// What [`SecretsKey::seal`] sealed for `uuid`; `None` when it was sealed with another key,
    /// for another action, or altered.
    pub fn open(&self, uuid: &str, sealed: &str) -> Option<Vec<u8>> {
        let bytes = STANDARD.decode(sealed).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut buffer = ciphertext.to_vec();
        let plain = self
            .aead()
            .open_in_place(nonce, Aad::from(uuid.as_bytes()), &mut buffer)
            .ok()?;
        Some(plain.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_request_opens_only_with_its_key_and_for_its_action() {
        let key = SecretsKey::random();
        let sealed = key.seal("action-1", b"{\"value\":\"s3cret\"}");
        assert!(!sealed.contains("s3cret"));
        assert_eq!(
            key.open("action-1", &sealed).as_deref(),
            Some(&b"{\"value\":\"s3cret\"}"[..])
        );
        assert_eq!(key.open("action-2", &sealed), None, "another action's");
        assert_eq!(
            SecretsKey::random().open("action-1", &sealed),
            None,
            "another key"
        );
        assert_eq!(key.open("action-1", "not base64!"), None);
    }

    #[test]
    fn a_key_is_64_hex_digits_and_never_shown() {
        let key = SecretsKey::parse(&"ab".repeat(32)).unwrap();
        assert_eq!(format!("{key:?}"), "SecretsKey(***)");
        assert!(SecretsKey::parse("abcd").is_err());
        assert!(SecretsKey::parse(&"zz".repeat(32)).is_err());
    }
}
