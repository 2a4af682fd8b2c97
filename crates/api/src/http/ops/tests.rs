//! Whom `/metrics` answers on the REST listener.

use super::*;
use axum::http::HeaderValue;
use axum::http::header::AUTHORIZATION;

const TOKEN: &str = "scrape-4f1c9a7e2b6d8035";

fn with_bearer(token: Option<&str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Some(token) = token {
        let value = HeaderValue::from_str(&format!("Bearer {token}")).unwrap();
        headers.insert(AUTHORIZATION, value);
    }
    headers
}

fn status(on_rest: &MetricsOnRest, token: Option<&str>) -> u16 {
    match on_rest.admits(&with_bearer(token)) {
        Ok(()) => 200,
        Err(refused) => refused.status_code().as_u16(),
    }
}

#[test]
fn on_a_single_listener_without_a_token_anyone_reads_the_metrics() {
    let on_rest = MetricsOnRest::new(false, None);
    assert_eq!(on_rest, MetricsOnRest::Anyone);
    assert_eq!(status(&on_rest, None), 200);
    assert_eq!(status(&on_rest, Some("whatever")), 200);
}

#[test]
fn beside_an_ops_listener_without_a_token_no_one_reads_them_on_the_rest_listener() {
    let on_rest = MetricsOnRest::new(true, None);
    assert_eq!(status(&on_rest, None), 404);
    assert_eq!(status(&on_rest, Some(TOKEN)), 404);
}

#[test]
fn with_a_token_only_that_token_reads_them_with_or_without_an_ops_listener() {
    for ops_listener in [false, true] {
        let on_rest = MetricsOnRest::new(ops_listener, Some(TOKEN.into()));
        assert_eq!(status(&on_rest, Some(TOKEN)), 200);
        assert_eq!(status(&on_rest, None), 401);
        assert_eq!(status(&on_rest, Some("scrape-4f1c9a7e2b6d8036")), 401);
        assert_eq!(status(&on_rest, Some(&TOKEN[..TOKEN.len() - 1])), 401);
        assert_eq!(status(&on_rest, Some(&format!("{TOKEN}0"))), 401);
    }
}
