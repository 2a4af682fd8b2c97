//! Trust withdrawn holds: once a charger's CA leaves `--tls-client-ca`, or a CRL of
//! `--tls-client-crl` revokes its certificate (a reload, on SIGHUP here), it is refused, even
//! on the TLS session it saved and resumes, while other chargers carry on.

use super::wss_charger::{WssCharger, profile_3_client};
use super::{TlsCms, rejections};
use crate::support::{Api, eventually};
use std::path::Path;

/// Writes `contents` over `path` by a rename, as a certificate manager would.
fn replace_file(path: &Path, contents: &[u8]) {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, contents).expect("write beside");
    std::fs::rename(&partial, path).expect("rename into place");
}

/// Waits for `cms_tls_reloads_total{listener="ocpp",result="ok"}` to reach `count`.
async fn wait_for_reloads(api: &Api, count: f64) {
    eventually("the wss listener to reload its files", async || {
        let metrics = api.metrics().await;
        let labels = [("listener", "ocpp"), ("result", "ok")];
        match metrics.sum("cms_tls_reloads_total", &labels) {
            Some(seen) if seen >= count => Ok(()),
            seen => Err(format!("{seen:?} reloads")),
        }
    })
    .await;
}

/// The rejections counted under `reason` so far.
async fn counted(api: &Api, reason: &str) -> f64 {
    let metrics = api.metrics().await;
    let labels = [("reason", reason)];
    let sum = metrics.sum("cms_gateway_handshake_rejections_total", &labels);
    sum.unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_3_charger_whose_ca_was_removed_cannot_get_back_in_on_its_saved_session() {
    let tls = TlsCms::up_with_client_trust(|pki, dir| {
        let client_ca = dir.join("client-ca.pem");
        std::fs::copy(pki.ca_certificate(), &client_ca).expect("copy the CA");
        vec!["--tls-client-ca".into(), client_ca.display().to_string()]
    })
    .await;
    let identity = "CP-TLS-RESUMER";
    tls.add_charger(identity, 3).await;
    let bystander = "CP-TLS-P0-BYSTANDER";
    tls.add_charger(bystander, 0).await;
    let api = Api::new(&tls.cms, &tls.cms.operator_token().await);
    let pki = &tls.pki;
    let url = tls.cms.wss_url(identity);
    let client = profile_3_client(pki, &pki.client(identity));
    let mut first = WssCharger::connect_with(&client, &url, None).await.unwrap();
    first.heartbeat().await;
    drop(first);
    let mut again = WssCharger::connect_with(&client, &url, None).await.unwrap();
    again.heartbeat().await;
    assert!(
        again.resumed,
        "the charger should resume its session: the test relies on it"
    );
    drop(again);
    let mut other = WssCharger::connect(pki, &tls.cms.wss_url(bystander), None).await;

    let other_ca = std::fs::read(pki.other_ca_certificate()).expect("the other CA");
    replace_file(&pki.dir().join("client-ca.pem"), &other_ca);
    tls.cms.hang_up();
    wait_for_reloads(&api, 1.0).await;

    let before = rejections(&api).await;
    let refused = WssCharger::connect_with(&client, &url, None).await;
    assert!(
        refused.is_err(),
        "a charger whose CA was removed got in on its saved session"
    );
    eventually("the refusal counted", async || {
        let now = rejections(&api).await;
        match now[4] > before[4] {
            true => Ok(()),
            false => Err(format!("client_certificate_invalid still {}", now[4])),
        }
    })
    .await;
    other.heartbeat().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charger_certificate_revoked_by_the_crl_is_refused_resumed_or_not_and_counted() {
    let tls = TlsCms::up_with_client_trust(|pki, _| {
        let ca = pki.ca_certificate().display().to_string();
        let crl = pki.crl().display().to_string();
        vec!["--tls-client-ca".into(), ca, "--tls-client-crl".into(), crl]
    })
    .await;
    let identity = "CP-TLS-REVOKED";
    tls.add_charger(identity, 3).await;
    let kept = "CP-TLS-KEPT";
    tls.add_charger(kept, 3).await;
    let api = Api::new(&tls.cms, &tls.cms.operator_token().await);
    let pki = &tls.pki;
    let url = tls.cms.wss_url(identity);
    let certificate = pki.client(identity);
    let saved_session = profile_3_client(pki, &certificate);
    let mut before = WssCharger::connect_with(&saved_session, &url, None)
        .await
        .unwrap();
    before.heartbeat().await;
    drop(before);
    let kept_client = profile_3_client(pki, &pki.client(kept));
    let mut other = WssCharger::connect_with(&kept_client, &tls.cms.wss_url(kept), None)
        .await
        .unwrap();

    pki.revoke(&certificate);
    tls.cms.hang_up();
    wait_for_reloads(&api, 1.0).await;

    let revoked_before = counted(&api, "client_certificate_revoked").await;
    let resumed = WssCharger::connect_with(&saved_session, &url, None).await;
    assert!(
        resumed.is_err(),
        "a revoked charger got in on its saved session"
    );
    let fresh = profile_3_client(pki, &certificate);
    let full = WssCharger::connect_with(&fresh, &url, None).await;
    assert!(
        full.is_err(),
        "a revoked charger got in with a full handshake"
    );
    eventually("both refusals counted as revoked", async || {
        match counted(&api, "client_certificate_revoked").await - revoked_before {
            2.0 => Ok(()),
            seen => Err(format!("{seen} more")),
        }
    })
    .await;
    other.heartbeat().await;
    let mut again = WssCharger::connect_with(&kept_client, &tls.cms.wss_url(kept), None)
        .await
        .unwrap();
    again.heartbeat().await;
}
