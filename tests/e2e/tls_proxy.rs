//! A load balancer that terminates TLS in front of the gateway (`--trusted-proxies`): the client
//! certificate it forwards in `X-Forwarded-Client-Cert` admits a security profile 3 charger once
//! it verifies against the client CA; from any other address the header counts for nothing.

use crate::support::{Api, Cms};
use cms_tls::test_pki::TestPki;
use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

/// The certificate file as the proxy forwards it: its PEM, URL-encoded (nginx's
/// `$ssl_client_escaped_cert`).
fn escaped_pem(path: &std::path::Path) -> String {
    let pem = std::fs::read_to_string(path).expect("a PEM file");
    percent_encoding::utf8_percent_encode(&pem, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// The upgrade's answer: Ok when the charger got in and a Heartbeat was answered, else the
/// HTTP status it was refused with.
async fn connect(cms: &Cms, identity: &str, forwarded: Option<&str>) -> Result<(), u16> {
    let mut request = cms
        .ocpp_url(identity)
        .into_client_request()
        .expect("a ws URL");
    let headers = request.headers_mut();
    headers.insert(
        "Sec-WebSocket-Protocol",
        HeaderValue::from_static("ocpp1.6"),
    );
    if let Some(value) = forwarded {
        let value = HeaderValue::from_str(value).expect("a header value");
        headers.insert("X-Forwarded-Client-Cert", value);
    }
    let authority = request.uri().authority().expect("a host").to_string();
    let tcp = tokio::net::TcpStream::connect(authority)
        .await
        .expect("the gateway listens");
    match tokio_tungstenite::client_async(request, tcp).await {
        Ok((mut ws, _)) => {
            ws.send(Message::text(r#"[2,"1","Heartbeat",{}]"#))
                .await
                .expect("send");
            let answer = ws.next().await.expect("an answer").expect("a frame");
            assert!(
                answer.to_text().unwrap_or_default().starts_with("[3,\"1\""),
                "{answer:?}"
            );
            Ok(())
        }
        Err(WsError::Http(response)) => Err(response.status().as_u16()),
        Err(other) => panic!("expected an answer to the upgrade, got {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_proxy_forwards_the_certificate_of_a_profile_3_charger() {
    let dir = tempfile::tempdir().expect("a directory");
    let pki = TestPki::create(dir.path());
    let ca = pki.ca_certificate().display().to_string();
    // The test's connections come from 127.0.0.1: here, the proxy.
    let cms = Cms::up_with(&["--tls-client-ca", &ca, "--trusted-proxies", "127.0.0.1"]).await;
    cms.add_charger_with("CP-PROXIED", &["--security-profile", "3"])
        .await;
    let own = escaped_pem(&pki.client("CP-PROXIED").certificate);
    let envoy = format!(r#"By=spiffe://lb;Hash=00;Cert="{own}";Subject="CN=CP-PROXIED""#);
    let someone_else = escaped_pem(&pki.client("CP-OTHER").certificate);
    let foreign = escaped_pem(&pki.foreign_client("CP-PROXIED").certificate);
    let expired = escaped_pem(&pki.expired_client("CP-PROXIED").certificate);

    let api = Api::new(&cms, &cms.operator_token().await);
    let refusals = async |reason| {
        let metrics = api.metrics().await;
        let reason = [("reason", reason)];
        metrics
            .sum("cms_gateway_handshake_rejections_total", &reason)
            .unwrap_or(0.0)
    };
    // Registering waited for the gateway to know the charger by probing it, without a header.
    let required_before = refusals("client_certificate_required").await;

    assert_eq!(connect(&cms, "CP-PROXIED", Some(&own)).await, Ok(()));
    assert_eq!(connect(&cms, "CP-PROXIED", Some(&envoy)).await, Ok(()));
    assert_eq!(
        connect(&cms, "CP-PROXIED", Some(&someone_else)).await,
        Err(403)
    );
    assert_eq!(connect(&cms, "CP-PROXIED", Some(&foreign)).await, Err(403));
    assert_eq!(connect(&cms, "CP-PROXIED", Some(&expired)).await, Err(403));
    assert_eq!(connect(&cms, "CP-PROXIED", None).await, Err(403));
    assert_eq!(refusals("client_certificate_mismatch").await, 1.0);
    assert_eq!(refusals("client_certificate_invalid").await, 2.0);
    assert_eq!(
        refusals("client_certificate_required").await - required_before,
        1.0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_certificate_from_an_untrusted_address_counts_for_nothing() {
    let dir = tempfile::tempdir().expect("a directory");
    let pki = TestPki::create(dir.path());
    let ca = pki.ca_certificate().display().to_string();
    // Another address is the proxy: the test's own connections are strangers.
    let cms = Cms::up_with(&["--tls-client-ca", &ca, "--trusted-proxies", "127.0.0.42"]).await;
    cms.add_charger_with("CP-PROXIED", &["--security-profile", "3"])
        .await;
    let own = escaped_pem(&pki.client("CP-PROXIED").certificate);
    assert_eq!(
        connect(&cms, "CP-PROXIED", Some(&own)).await,
        Err(403),
        "plain ws from a stranger, whatever header it sends"
    );
}
