//! Conditional reads for pollers: a strong `ETag` on a read's body, and `If-None-Match` naming
//! it answered `304 Not Modified` without a body. The tag is a hash of the body, so every API
//! replica gives the same one for the same state, and nothing has to be kept to answer.

use axum::http::header::{CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use std::hash::{Hash, Hasher};

/// The body's tag: 64 bits of SipHash with fixed keys (the same in every process), quoted.
pub fn etag_of(body: &[u8]) -> String {
    #[allow(deprecated)] // SipHasher: fixed keys are the point, unlike RandomState's.
    let mut hasher = std::hash::SipHasher::new();
    body.hash(&mut hasher);
    format!("\"{:016x}\"", hasher.finish())
}

/// Whether `If-None-Match` names `etag` (or `*`), comparing weakly as RFC 9110 asks.
fn matches(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .any(|tag| tag == "*" || tag == etag)
}

/// A JSON body with its `ETag`, or 304 when the client has it already.
pub fn json_read(request_headers: &HeaderMap, body: Vec<u8>) -> Response {
    let etag = etag_of(&body);
    let value = HeaderValue::from_str(&etag).expect("a hex tag is a header value");
    if matches(request_headers, &etag) {
        return (StatusCode::NOT_MODIFIED, [(ETAG, value)]).into_response();
    }
    let json = HeaderValue::from_static("application/json");
    ([(CONTENT_TYPE, json), (ETAG, value)], body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asking(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(IF_NONE_MATCH, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn a_body_is_tagged_by_its_bytes_and_a_known_tag_is_not_sent_again() {
        let body = br#"{"connectorId":1,"meterValue":[]}"#.to_vec();
        let etag = etag_of(&body);
        assert_eq!(etag, etag_of(&body.clone()), "the same body, the same tag");
        assert_ne!(etag, etag_of(br#"{"connectorId":2,"meterValue":[]}"#));
        let fresh = json_read(&HeaderMap::new(), body.clone());
        assert_eq!(fresh.status(), StatusCode::OK);
        assert_eq!(fresh.headers()[ETAG], etag.as_str());
        let listed_weak = format!("\"other\", W/{etag}");
        for known in [etag.as_str(), listed_weak.as_str(), "*"] {
            let answer = json_read(&asking(&[known]), body.clone());
            assert_eq!(answer.status(), StatusCode::NOT_MODIFIED, "{known:?}");
        }
        let stale = json_read(&asking(&["\"0000000000000000\""]), body);
        assert_eq!(stale.status(), StatusCode::OK);
    }
}
