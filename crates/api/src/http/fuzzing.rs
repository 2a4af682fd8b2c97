//! Doors for the fuzz targets in `fuzz/` (docs/fuzzing.md) into the request readers of the
//! REST API, which are otherwise reached only through a router and a store. Not an API.

use crate::http::actions::payload_of;
use crate::http::chargers::proxy::proxy_servers;
use crate::http::error::ApiError;
use crate::http::id_tag_input::read_id_tag;
use crate::http::input::{Input, Rules};
use crate::http::oauth::codec::parse_form;
use crate::http::oauth::token::json_pairs;
use crate::http::settings::settings_of;
use crate::http::sites::read_site;
use crate::http::transactions::{query_input, read_filter};

/// The readers [`read_body`] can run, the first byte of a fuzz input choosing one.
pub const READERS: [&str; 9] = [
    "id tag (create)",
    "id tag (update)",
    "site (create)",
    "site (update)",
    "charger settings",
    "proxy servers",
    "transactions filter (body)",
    "transactions filter (query string)",
    "action payload, OAuth token parameters",
];

/// Reads `body` as the request body (or query string) of the REST endpoint `reader` names, the
/// way its handler does up to the store: `Input::from_json` (400 for a body that is not a JSON
/// object), the endpoint's field rules, then `finish` (422 with every field refused). Whatever
/// the bytes, the answer is one of those two errors or success, never a panic.
pub fn read_body(reader: u8, body: &[u8]) -> Result<(), ApiError> {
    let reader = usize::from(reader) % READERS.len();
    match reader {
        7 => return read_query(body),
        8 => return read_payloads(body),
        _ => {}
    }
    let mut input = Input::from_json(body)?;
    match reader {
        0 => drop(read_id_tag(&mut input, None)),
        1 => drop(read_id_tag(&mut input, Some("TAG-1"))),
        2 => drop(read_site(&mut input, true)),
        3 => drop(read_site(&mut input, false)),
        4 => drop(settings_of(
            &mut input,
            &["AuthorizationKey".to_string()],
            true,
        )),
        5 => {
            if let Some(Some(items)) = input.array("servers", Rules::optional().nullable()) {
                let stored = ["wss://user:secret@proxy.example.com/ocpp"];
                drop(proxy_servers(&mut input, items, &stored));
            }
        }
        _ => read_transactions_filter(&mut input),
    }
    input.finish()
}

/// `GET .../transactions?limit=...&filter[status]=...` with `body` as its query string.
fn read_query(body: &[u8]) -> Result<(), ApiError> {
    let pairs = parse_form(&String::from_utf8_lossy(body));
    let mut input = query_input(pairs);
    read_transactions_filter(&mut input);
    input.finish()
}

fn read_transactions_filter(input: &mut Input) {
    let _ = input.integer("limit", Rules::optional().nullable().between(1.0, 10_000.0));
    if let Some(Some(fields)) = input.object("filter", Rules::optional().nullable()) {
        drop(read_filter(input, fields));
    }
}

/// An action's request payload (the body of `POST .../actions/{action}`) and an OAuth token
/// request's parameters, JSON or form-encoded.
fn read_payloads(body: &[u8]) -> Result<(), ApiError> {
    let _ = json_pairs(body);
    let _ = parse_form(&String::from_utf8_lossy(body));
    payload_of(body).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fuzz target's door leads to the real readers: a good body passes, a bad one gets
    /// the 400 or 422 its endpoint answers.
    #[test]
    fn the_fuzzing_readers_answer_as_their_endpoints() {
        let site = br#"{"name":"Depot","address":"1 Main St","city":"Oslo","postal_code":"0150","country":"NO"}"#;
        assert!(matches!(read_body(3, b"{}"), Ok(())));
        assert!(matches!(read_body(2, b"{}"), Err(ApiError::Validation(_))));
        assert!(matches!(read_body(2, b"[1]"), Err(ApiError::BadRequest(_))));
        assert!(matches!(read_body(3, site), Ok(())));
        let settings = br#"{"settings":{"AuthorizationKey":"x"}}"#;
        assert!(
            matches!(read_body(4, settings), Err(ApiError::Validation(e)) if e.contains_key("settings.AuthorizationKey"))
        );
        assert!(matches!(
            read_body(7, b"filter[status]=nope"),
            Err(ApiError::Validation(_))
        ));
        assert!(matches!(
            read_body(7, b"filter[status]=active&limit=5"),
            Ok(())
        ));
        assert!(matches!(
            read_body(8, b"not json"),
            Err(ApiError::BadRequest(_))
        ));
    }
}
