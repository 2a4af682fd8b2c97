//! The encodings the OAuth endpoints speak besides JSON: `application/x-www-form-urlencoded`
//! (HTML forms, token requests, redirect query strings), base64 (HTTP Basic client
//! authentication, PKCE challenges) and HTML text escaping. Small enough to keep here rather
//! than add crates for.

/// Decodes a form body or query string into its pairs, in order (`+` is a space).
/// Malformed escapes are kept literally, as browsers do.
pub fn parse_form(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (form_decode(name), form_decode(value))
        })
        .collect()
}

/// `application/x-www-form-urlencoded` decoding of one name or value.
pub fn form_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match (hex_value(bytes[i + 1]), hex_value(bytes[i + 2])) {
                    (Some(high), Some(low)) => {
                        out.push(high << 4 | low);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex_value(digit: u8) -> Option<u8> {
    (digit as char).to_digit(16).map(|d| d as u8)
}

/// Percent-encodes a query parameter's name or value: everything but RFC 3986's unreserved
/// characters.
pub fn query_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `uri` with the query parameters appended (after its own query, if it has one).
pub fn with_query(uri: &str, params: &[(&str, &str)]) -> String {
    let mut out = uri.to_string();
    let mut separator = if uri.contains('?') { '&' } else { '?' };
    for (name, value) in params {
        out.push(separator);
        out.push_str(&query_encode(name));
        out.push('=');
        out.push_str(&query_encode(value));
        separator = '&';
    }
    out
}

/// Decodes base64 in either alphabet (standard `+/` or URL-safe `-_`), padding optional.
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buffer = 0u32;
    let mut bits = 0;
    for byte in text.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        buffer = buffer << 6 | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    // A lone trailing character carries no whole byte: not base64.
    (bits < 6).then_some(out)
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
    fn query_values_round_trip() {
        let value = "a b&c=d/é~";
        assert_eq!(form_decode(&query_encode(value)), value);
        assert_eq!(
            with_query("https://app/cb?x=1", &[("code", "a.b"), ("state", "s t")]),
            "https://app/cb?x=1&code=a.b&state=s%20t"
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
