//! The REST API over HTTPS (`--http-tls-cert`, `--http-tls-key`), as an operator's HTTP client
//! on OpenSSL sees it.

use super::TlsCms;
use super::python_client::{Presenting, attempt, shown_certificate};
use super::wss_charger::leaf_certificate;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rest_api_answers_over_https_with_the_configured_certificate_and_not_over_http() {
    let tls = TlsCms::up_serving_https().await;
    let base = tls.cms.http_url("");
    assert!(
        base.starts_with("https://127.0.0.1:"),
        "REST ready line: {base}"
    );
    let (uuid, _) = tls.add_charger("CP-TLS-HTTPS", 2).await;
    let token = tls.cms.operator_token().await;
    let pki = &tls.pki;

    let url = tls.cms.http_url(&format!("/api/v3/chargers/{uuid}"));
    let with_token = Presenting {
        bearer: Some(&token),
        ..Presenting::default()
    };
    let outcome = attempt(pki, &url, with_token).await;
    let body: Value =
        serde_json::from_str(outcome["body"].as_str().unwrap_or_default()).unwrap_or(Value::Null);
    assert!(
        outcome["outcome"] == "answered"
            && outcome["status"] == 200
            && body["data"]["identity"] == "CP-TLS-HTTPS"
            && body["data"]["security_profile"] == 2,
        "expected GET {url} to answer 200 with the profile 2 charger; saw {outcome}"
    );
    let leaf = leaf_certificate(&pki.server_chain());
    assert!(
        shown_certificate(&outcome) == leaf.as_ref(),
        "the HTTPS listener should serve server.pem; it served {}",
        outcome["server_certificate"]
    );

    // Over TLS, the API still asks who is calling.
    let outcome = attempt(pki, &url, Presenting::default()).await;
    assert!(
        outcome["outcome"] == "answered" && outcome["status"] == 401,
        "expected GET {url} without a token to answer 401; saw {outcome}"
    );

    // Plain HTTP on the HTTPS port gets no HTTP answer (a TLS alert, then the close).
    let plain = tls.cms.http_url("/healthz");
    let plain = plain.replacen("https://", "http://", 1);
    let outcome = attempt(pki, &plain, Presenting::default()).await;
    assert_eq!(
        outcome["outcome"], "failed",
        "expected plain HTTP to the HTTPS listener to get no HTTP answer; saw {outcome}"
    );
}
