//! A load balancer that terminates TLS in front of the gateway (`--trusted-proxies`): the client
//! certificate it forwards in `X-Forwarded-Client-Cert` admits a security profile 3 charger once
//! it verifies against the client CA and CRLs; only the nearest element counts (the one the
//! balancer appended), and from any other address the header counts for nothing.

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
    connect_with_lines(cms, identity, forwarded.as_slice()).await
}

/// As [`connect`], with `X-Forwarded-Client-Cert` sent once per value, in order.
async fn connect_with_lines(cms: &Cms, identity: &str, forwarded: &[&str]) -> Result<(), u16> {
    let mut request = cms
        .ocpp_url(identity)
        .into_client_request()
        .expect("a ws URL");
    let headers = request.headers_mut();
    headers.insert(
        "Sec-WebSocket-Protocol",
        HeaderValue::from_static("ocpp1.6"),
    );
    for value in forwarded {
        let value = HeaderValue::from_str(value).expect("a header value");
        headers.append("X-Forwarded-Client-Cert", value);
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
    let envoy = format!(r#"By=spiffe://lb;Cert="{own}""#);
    let api = Api::new(&cms, &cms.operator_token().await);
    let tls_required = async || {
        let metrics = api.metrics().await;
        let reason = [("reason", "tls_required")];
        let sum = metrics.sum("cms_gateway_handshake_rejections_total", &reason);
        sum.unwrap_or(0.0)
    };
    let before = tls_required().await;
    for header in [&own, &envoy] {
        assert_eq!(
            connect(&cms, "CP-PROXIED", Some(header)).await,
            Err(403),
            "plain ws from a stranger, whatever header it sends"
        );
    }
    // Refused for want of TLS: the header was not even looked at.
    assert_eq!(tls_required().await - before, 2.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_element_the_proxy_appended_counts_not_one_the_client_put_before_it() {
    let dir = tempfile::tempdir().expect("a directory");
    let pki = TestPki::create(dir.path());
    let ca = pki.ca_certificate().display().to_string();
    let cms = Cms::up_with(&["--tls-client-ca", &ca, "--trusted-proxy", "127.0.0.1"]).await;
    cms.add_charger_with("CP-VICTIM", &["--security-profile", "3"])
        .await;
    cms.add_charger_with("CP-INTRUDER", &["--security-profile", "3"])
        .await;
    // A certificate is no secret: the intruder has the victim's, not its key.
    let victims = escaped_pem(&pki.client("CP-VICTIM").certificate);
    let intruders = escaped_pem(&pki.client("CP-INTRUDER").certificate);
    let injected = format!(r#"By=spiffe://x;Cert="{victims}";Subject="CN=CP-VICTIM,O=Fleet""#);
    let appended = format!(r#"By=spiffe://lb;Cert="{intruders}";Subject="CN=CP-INTRUDER""#);

    let one_line = format!("{injected},{appended}");
    assert_eq!(
        connect(&cms, "CP-VICTIM", Some(&one_line)).await,
        Err(403),
        "an element the client put first is not the proxy's"
    );
    assert_eq!(
        connect_with_lines(&cms, "CP-VICTIM", &[&injected, &appended]).await,
        Err(403),
        "a header line the client sent before the proxy's"
    );
    assert_eq!(
        connect(&cms, "CP-INTRUDER", Some(&one_line)).await,
        Ok(()),
        "the nearest element names the intruder, who gets in as itself"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_certificate_on_the_crl_is_refused() {
    let dir = tempfile::tempdir().expect("a directory");
    let pki = TestPki::create(dir.path());
    let revoked = pki.client("CP-PROXIED-REVOKED");
    pki.revoke(&revoked);
    let (ca, crl) = (pki.ca_certificate(), pki.crl());
    let [ca, crl] = [ca.to_str(), crl.to_str()].map(|p| p.expect("utf-8"));
    let args = ["--tls-client-ca", ca, "--tls-client-crl", crl];
    let cms = Cms::up_with(&[&args[..], &["--trusted-proxies", "127.0.0.1"]].concat()).await;
    cms.add_charger_with("CP-PROXIED-REVOKED", &["--security-profile", "3"])
        .await;
    cms.add_charger_with("CP-PROXIED-FINE", &["--security-profile", "3"])
        .await;
    let fine = escaped_pem(&pki.client("CP-PROXIED-FINE").certificate);

    assert_eq!(
        connect(
            &cms,
            "CP-PROXIED-REVOKED",
            Some(&escaped_pem(&revoked.certificate))
        )
        .await,
        Err(403)
    );
    assert_eq!(connect(&cms, "CP-PROXIED-FINE", Some(&fine)).await, Ok(()));
}
