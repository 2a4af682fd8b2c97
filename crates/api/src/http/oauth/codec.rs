//! The encodings the OAuth endpoints speak besides JSON: `application/x-www-form-urlencoded`
//! (HTML forms, token requests, redirect query strings), base64 (HTTP Basic client
//! authentication, PKCE challenges) and HTML text escaping; thin wrappers over the crates that
//! do the work, in the forms these endpoints need.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use std::collections::HashMap;

/// Decodes a form body or query string into its pairs, in order (`+` is a space). Malformed
/// escapes are kept literally, as browsers do. A pair holding a NUL character is dropped: no
/// client id, code or token has one, and the store cannot compare text holding one.
pub fn parse_form(text: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(text.as_bytes())
        .into_owned()
        .filter(|(name, value)| !name.contains('\0') && !value.contains('\0'))
        .collect()
}

/// The parameters of an OAuth request, each given at most once (RFC 6749 §3.1, §3.2); empty
/// ones count as absent.
pub struct Params(HashMap<String, String>);

impl Params {
    /// The parameters of `pairs`; `Err` says which one is given more than once.
    pub fn unique(pairs: Vec<(String, String)>) -> Result<Params, String> {
        let mut params = HashMap::new();
        for (name, value) in pairs {
            if params.insert(name.clone(), value).is_some() {
                return Err(format!("The {name} parameter is given more than once."));
            }
        }
        Ok(Params(params))
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// A form body's fields (the login and approval pages'); absent ones read as empty.
pub struct Form(HashMap<String, String>);

impl Form {
    pub fn parse(body: &[u8]) -> Form {
        Form(
            parse_form(&String::from_utf8_lossy(body))
                .into_iter()
                .collect(),
        )
    }

    pub fn get(&self, name: &str) -> &str {
        self.0.get(name).map(String::as_str).unwrap_or("")
    }
}

/// `application/x-www-form-urlencoded` decoding of one name or value (as in HTTP Basic client
/// credentials, RFC 6749 section 2.3.1). A NUL character becomes U+FFFD, which the store can
/// hold and no credential contains (see [`parse_form`]).
pub fn form_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(&text.replace('+', " "))
        .decode_utf8_lossy()
        .replace('\0', "\u{fffd}")
}

/// `uri` with the query parameters appended (after its own query, if it has one).
pub fn with_query(uri: &str, params: &[(&str, &str)]) -> String {
    let query = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(params)
        .finish();
    let separator = if uri.contains('?') { '&' } else { '?' };
    format!("{uri}{separator}{query}")
}

/// Decodes base64 in either alphabet (standard `+/` or URL-safe `-_`), padding optional.
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    STANDARD_NO_PAD
        .decode(text)
        .or_else(|_| URL_SAFE_NO_PAD.decode(text))
        .ok()
}

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_decode_plus_and_escapes() {
        assert_eq!(
            parse_form("a=1&scope=chargers%3Aread+teams%3Aread&&e=%E2%82%AC&bad=%zz%4&flag"),
            [
                ("a".to_string(), "1".to_string()),
                ("scope".into(), "chargers:read teams:read".into()),
                ("e".into(), "€".into()),
                ("bad".into(), "%zz%4".into()),
                ("flag".into(), "".into()),
            ]
        );
    }

    #[test]
    fn pairs_holding_nul_are_dropped() {
        assert_eq!(
            parse_form("client_id=a%00b&code=c"),
            [("code".to_string(), "c".to_string())]
        );
        assert_eq!(form_decode("a%00b"), "a\u{fffd}b");
    }

    #[test]
    fn repeated_parameters_are_refused() {
        let unique = |query| Params::unique(parse_form(query));
        assert_eq!(
            unique("client_id=a&client_id=b").err().as_deref(),
            Some("The client_id parameter is given more than once.")
        );
        let params = unique("client_id=a&state=").unwrap();
        assert_eq!(
            (params.get("client_id"), params.get("state")),
            (Some("a"), None)
        );
    }

    #[test]
    fn query_values_round_trip() {
        let value = "a b&c=d/é~";
        let encoded: String = form_urlencoded::byte_serialize(value.as_bytes()).collect();
        assert_eq!(form_decode(&encoded), value);
        assert_eq!(
            with_query("https://app/cb?x=1", &[("code", "a.b"), ("state", "s t")]),
            "https://app/cb?x=1&code=a.b&state=s+t"
        );
        assert_eq!(
            with_query("https://app/cb", &[("e", "x")]),
            "https://app/cb?e=x"
        );
    }

    #[test]
    fn base64_in_both_alphabets() {
        assert_eq!(
            decode_base64("YWxhZGRpbjpvcGVuc2VzYW1l").unwrap(),
            b"aladdin:opensesame"
        );
        assert_eq!(
            decode_base64("Pz8-").unwrap(),
            decode_base64("Pz8+").unwrap()
        );
        assert_eq!(decode_base64("YQ==").unwrap(), b"a");
        assert_eq!(decode_base64("YQ").unwrap(), b"a");
        assert_eq!(decode_base64("Y"), None);
        assert_eq!(decode_base64("Y!Q="), None);
    }

    #[test]
    fn html_is_escaped() {
        assert_eq!(
            escape_html(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
