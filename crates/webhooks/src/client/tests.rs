use super::*;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::post;

#[test]
fn private_and_special_addresses_are_refused() {
    for refused in [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "224.0.0.1",
        "255.255.255.255",
        "0.0.0.0",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "fd00:ec2::254",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
    ] {
        let ip: IpAddr = refused.parse().unwrap();
        assert!(refused_address(ip).is_some(), "{refused} is refused");
    }
    for allowed in [
        "93.184.216.34",
        "100.128.0.1",
        "2606:2800:220:1::1",
        "::ffff:8.8.8.8",
    ] {
        let ip: IpAddr = allowed.parse().unwrap();
        assert_eq!(refused_address(ip), None, "{allowed} is allowed");
    }
    assert_eq!(
        refused_address("169.254.169.254".parse().unwrap()),
        Some("a cloud metadata address")
    );
}

#[tokio::test]
async fn urls_are_checked_on_their_literal_or_resolved_addresses() {
    assert!(
        check_url("https://127.0.0.1/hook", false)
            .await
            .unwrap_err()
            .contains("loopback")
    );
    assert!(
        check_url("https://[::1]:8443/hook", false)
            .await
            .unwrap_err()
            .contains("loopback")
    );
    assert!(
        check_url("http://localhost/hook", false)
            .await
            .unwrap_err()
            .contains("loopback")
    );
    assert!(
        check_url("https://169.254.169.254/", false)
            .await
            .unwrap_err()
            .contains("metadata")
    );
    assert!(check_url("ftp://93.184.216.34/", false).await.is_err());
    assert!(check_url("not a url", true).await.is_err());
    assert_eq!(check_url("https://93.184.216.34/hook", false).await, Ok(()));
    assert_eq!(check_url("http://127.0.0.1:9/hook", true).await, Ok(()));
}

/// A receiver on 127.0.0.1: `/big` answers 500 with 64 KiB, `/moved` redirects to `/big`.
async fn receiver() -> String {
    let app = Router::new()
        .route(
            "/big",
            post(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "x".repeat(65536)) }),
        )
        .route(
            "/moved",
            post(|| async { Redirect::temporary("/big").into_response() }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{address}")
}

#[tokio::test]
async fn a_private_receiver_is_not_reached_without_allow_private() {
    let base = receiver().await;
    let guarded = Client::new(false, Duration::from_secs(5));
    let error = guarded
        .post(&format!("{base}/big"), &[], "{}".into())
        .await
        .unwrap_err();
    assert!(error.contains("loopback"), "{error}");
    let port = base.rsplit(':').next().unwrap();
    let error = guarded
        .post(&format!("http://localhost:{port}/big"), &[], "{}".into())
        .await
        .unwrap_err();
    assert!(
        error.contains("loopback"),
        "resolved names are checked too: {error}"
    );
    let open = Client::new(true, Duration::from_secs(5));
    assert_eq!(
        open.post(&format!("{base}/big"), &[], "{}".into())
            .await
            .unwrap()
            .status,
        500
    );
}

#[tokio::test]
async fn answers_are_read_at_most_4_kib_and_redirects_not_followed() {
    let base = receiver().await;
    let client = Client::new(true, Duration::from_secs(5));
    let answer = client
        .post(&format!("{base}/big"), &[], "{}".into())
        .await
        .unwrap();
    assert_eq!(answer.body.len(), BODY_LIMIT);
    let answer = client
        .post(&format!("{base}/moved"), &[], "{}".into())
        .await
        .unwrap();
    assert_eq!(answer.status, 307, "not followed");
}

// Each refused range and the public addresses just beside it (moved here from the API's
// validation of a webhook's URL, which asks the same function).
#[test]
fn the_operators_networks_and_the_metadata_service_are_refused() {
    for (address, expected) in [
        ("127.0.0.1", "a loopback address"),
        ("127.255.0.9", "a loopback address"),
        ("0.0.0.0", "an unspecified address"),
        ("0.1.2.3", "an unspecified address"),
        ("10.1.2.3", "a private address"),
        ("172.16.0.1", "a private address"),
        ("172.31.255.255", "a private address"),
        ("192.168.1.1", "a private address"),
        ("169.254.1.1", "a link-local address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("100.64.0.1", "a carrier-grade NAT address"),
        ("100.127.255.255", "a carrier-grade NAT address"),
        ("224.0.0.1", "a multicast or broadcast address"),
        ("255.255.255.255", "a multicast or broadcast address"),
        ("::1", "a loopback address"),
        ("::", "an unspecified address"),
        ("fe80::1", "a link-local address"),
        ("febf::1", "a link-local address"),
        ("fc00::1", "a unique-local address"),
        ("fd12:3456::1", "a unique-local address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("ff02::1", "a multicast address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        ("::ffff:10.0.0.1", "a private address"),
        ("::ffff:169.254.169.254", "a cloud metadata address"),
    ] {
        assert_eq!(
            refused_address(address.parse().unwrap()),
            Some(expected),
            "{address}"
        );
    }
}

#[test]
fn public_addresses_next_to_the_refused_ranges_are_allowed() {
    for address in [
        "1.1.1.1",
        "9.255.255.255",
        "11.0.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "192.167.255.255",
        "169.253.255.255",
        "100.63.255.255",
        "100.128.0.0",
        "223.255.255.255",
        "2001:db8::1",
        "2606:4700::1111",
        "fec0::1",
        "fbff::1",
        "::ffff:8.8.8.8",
    ] {
        assert_eq!(refused_address(address.parse().unwrap()), None, "{address}");
    }
}
