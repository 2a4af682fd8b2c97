//! The `Authorization: Token ...` header. OCPI 2.2.1 sends the credentials token base64-encoded;
//! 2.1.1 and many 2.2 implementations sent it as is. cms always sends base64, and reads both: a
//! value that is valid base64 of UTF-8 text is taken decoded, anything else as written
//! (docs/ocpi.md "Decisions"). A token of cms's own making is URL-safe alphanumerics, which is
//! also valid base64 only by accident of length, so cms's tokens never look encoded: see
//! [`new_token`]'s length.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// The header's value for `token`, as cms sends it.
pub fn header_value(token: &str) -> String {
    format!("Token {}", STANDARD.encode(token))
}

/// The credentials token in an `Authorization` header's value, or `None` when it is not a
/// `Token` header or is empty.
pub fn token_of(value: &str) -> Option<String> {
    let (scheme, rest) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("token") {
        return None;
    }
    let raw = rest.trim();
    if raw.is_empty() {
        return None;
    }
    let decoded = STANDARD
        .decode(raw)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .filter(|text| !text.is_empty() && text.chars().all(|c| c.is_ascii_graphic()));
    Some(decoded.unwrap_or_else(|| raw.to_string()))
}

/// A new credentials token: 43 characters of `[A-Za-z0-9]` drawn from `random` (32 bytes or
/// more, from the OS). 43 is not a multiple of 4, so the token is never read as base64 itself.
pub fn new_token(random: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    random
        .iter()
        .take(43)
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_sent_base64_is_read_back_and_a_plain_one_as_written() {
        let token = new_token(&[7u8; 43]);
        assert_eq!(token.len(), 43);
        assert_eq!(token_of(&header_value(&token)), Some(token.clone()));
        assert_eq!(token_of(&format!("Token {token}")), Some(token));
        assert_eq!(token_of("Token ZXhhbXBsZQ=="), Some("example".into()));
        assert_eq!(token_of("Bearer abc"), None);
        assert_eq!(token_of("Token "), None);
    }
}
