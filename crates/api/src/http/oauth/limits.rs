//! Length limits of an authorization request (`GET /oauth/authorize`). Anyone may send one and
//! what passes is kept in the store until it expires, so every parameter is bounded: far above
//! what a real client sends, far below what would let a stranger fill the store.
//!
//! Past a limit the answer is a 400 page, never a redirect: the redirect would carry the
//! oversized `state` back to the client.

use super::codec::Params;

/// The whole query string, as sent (percent-encoded).
pub const MAX_QUERY_BYTES: usize = 8 * 1024;

/// Each parameter's value, decoded, in bytes. Others are ignored (RFC 6749 §3.1), bounded by
/// [`MAX_QUERY_BYTES`].
pub const MAX_PARAMETER_BYTES: [(&str, usize); 7] = [
    ("client_id", 2048),
    ("redirect_uri", 2048),
    ("state", 1024),
    ("scope", 1024),
    ("response_type", 64),
    // RFC 7636 §4.2: 43 to 128 characters.
    ("code_challenge", 128),
    ("code_challenge_method", 32),
];

/// What is wrong with a query string's length, for the error page.
pub fn oversized_query(query: &str) -> Option<String> {
    (query.len() > MAX_QUERY_BYTES).then(|| {
        format!("The authorization request is too long: at most {MAX_QUERY_BYTES} bytes of query.")
    })
}

/// Which parameter is too long, for the error page.
pub fn oversized_parameter(params: &Params) -> Option<String> {
    MAX_PARAMETER_BYTES.iter().find_map(|(name, max)| {
        let value = params.get(name)?;
        (value.len() > *max)
            .then(|| format!("The {name} parameter is too long: at most {max} bytes."))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::oauth::codec::parse_form;

    #[test]
    fn each_parameter_has_a_length_limit() {
        let within = format!("state={}&client_id=abc", "s".repeat(1024));
        let params = Params::unique(parse_form(&within)).unwrap();
        assert_eq!(oversized_parameter(&params), None);
        let over = format!("state={}&client_id=abc", "s".repeat(1025));
        let params = Params::unique(parse_form(&over)).unwrap();
        assert_eq!(
            oversized_parameter(&params).as_deref(),
            Some("The state parameter is too long: at most 1024 bytes.")
        );
        // Counted decoded: each six-byte escape `%C3%A9` is the two bytes of é.
        let encoded = format!("scope={}", "%C3%A9".repeat(512));
        let params = Params::unique(parse_form(&encoded)).unwrap();
        assert_eq!(oversized_parameter(&params), None);
    }

    #[test]
    fn the_whole_query_string_is_bounded() {
        assert_eq!(oversized_query(&"a".repeat(MAX_QUERY_BYTES)), None);
        assert!(oversized_query(&"a".repeat(MAX_QUERY_BYTES + 1)).is_some());
    }
}
