//! OCPP security profiles over real TLS, and HTTPS for the REST API: `cms up` serves wss with
//! the certificates of a throwaway CA (`cms_tls::test_pki`), and clients that are not cms
//! connect: a Python charge point on OpenSSL with the `ocpp` package
//! (tests/interop/tls_charger.py, one run per attempt) and a rustls charger that stays
//! connected while others come and go.

mod flood;
mod https;
mod ocpp201;
mod profiles;
mod python_client;
mod reload;
mod revocation;
mod upgrade;
mod wss_charger;

use crate::support::{Api, Cms, Metrics, eventually};
use cms_tls::test_pki::TestPki;
use std::path::Path;
use tempfile::TempDir;

/// `cms up` serving OCPP on ws and on wss, chargers' client certificates from the PKI's CA.
struct TlsCms {
    cms: Cms,
    pki: TestPki,
    _dir: TempDir,
}

impl TlsCms {
    async fn up() -> TlsCms {
        TlsCms::start(false).await
    }

    /// The REST API too over TLS, with the same certificate (`--http-tls-cert/--http-tls-key`).
    async fn up_serving_https() -> TlsCms {
        TlsCms::start(true).await
    }

    async fn start(https: bool) -> TlsCms {
        let client_ca = |pki: &TestPki, _: &Path| {
            let ca = pki.ca_certificate().display().to_string();
            vec!["--tls-client-ca".to_string(), ca]
        };
        TlsCms::start_with(https, client_ca).await
    }

    /// As [`TlsCms::up`], with the options `client_trust` gives (the client CA's and the
    /// CRLs', say) instead of `--tls-client-ca ca.pem`; it is handed the PKI and its directory.
    async fn up_with_client_trust(
        client_trust: impl FnOnce(&TestPki, &Path) -> Vec<String>,
    ) -> TlsCms {
        TlsCms::start_with(false, client_trust).await
    }

    async fn start_with(
        https: bool,
        client_trust: impl FnOnce(&TestPki, &Path) -> Vec<String>,
    ) -> TlsCms {
        let dir = TempDir::new().expect("a temp dir for the PKI");
        let pki = TestPki::create(dir.path());
        let trust = client_trust(&pki, dir.path());
        let (chain, key) = (pki.server_chain(), pki.server_key());
        let [chain, key] = [chain.to_str(), key.to_str()].map(|p| p.expect("utf-8"));
        let mut args = vec!["--ocpp-tls-addr", "127.0.0.1:0"];
        args.extend(["--tls-cert", chain, "--tls-key", key]);
        args.extend(trust.iter().map(String::as_str));
        if https {
            args.extend(["--http-tls-cert", chain, "--http-tls-key", key]);
        }
        let cms = Cms::up_with(&args).await;
        TlsCms {
            cms,
            pki,
            _dir: dir,
        }
    }

    /// `cms charger add --identity ID --security-profile N` without a password: profiles 1
    /// and 2 get a generated one, printed once. Returns the uuid and that password.
    async fn add_charger(&self, identity: &str, profile: u8) -> (String, Option<String>) {
        let profile = profile.to_string();
        let args = [
            "charger",
            "add",
            "--identity",
            identity,
            "--security-profile",
            &profile,
        ];
        let out = self.cms.cli(&args).await;
        assert!(
            out.status.success(),
            "`cms {}` failed: {}",
            args.join(" "),
            out.stderr
        );
        let password = out.stdout.lines().find_map(|line| {
            let (_, password) = line.split_once("shown only once: ")?;
            Some(password.trim().to_string())
        });
        if let Some(password) = &password {
            // What the URLs below rely on.
            assert!(
                password.len() >= 16 && password.chars().all(|c| c.is_ascii_alphanumeric()),
                "a generated password should be 16+ alphanumerics, got {password:?}"
            );
        }
        self.cms.wait_until_known(identity).await;
        (out.last_line().to_string(), password)
    }

    /// `wss://IDENTITY:PASSWORD@127.0.0.1:PORT/ocpp/IDENTITY`: credentials where a charger's
    /// configuration puts them. Generated passwords are alphanumeric: nothing to escape.
    fn wss_url_with_password(&self, identity: &str, password: &str) -> String {
        let url = self.cms.wss_url(identity);
        url.replacen("wss://", &format!("wss://{identity}:{password}@"), 1)
    }

    /// `127.0.0.1:PORT` of the wss listener.
    fn wss_authority(&self) -> String {
        let url = self.cms.wss_url("");
        let authority = url
            .strip_prefix("wss://")
            .and_then(|a| a.strip_suffix("/ocpp/"));
        authority.expect("wss://ADDR/ocpp/").to_string()
    }

    fn ws_url_with_password(&self, identity: &str, password: &str) -> String {
        let url = self.cms.ocpp_url(identity);
        url.replacen("ws://", &format!("ws://{identity}:{password}@"), 1)
    }
}

/// The reasons the gateway counts a refused handshake under, in
/// `cms_gateway_handshake_rejections_total{reason}`.
const REASONS: [&str; 7] = [
    "unauthorized",
    "tls_required",
    "client_certificate_required",
    "client_certificate_mismatch",
    "client_certificate_invalid",
    "tls_handshake_failed",
    "client_certificate_organization_mismatch",
];

/// The handshake rejections counted so far, per reason in [`REASONS`].
async fn rejections(api: &Api) -> [f64; 7] {
    let metrics: Metrics = api.metrics().await;
    REASONS.map(|reason| {
        let labels = [("reason", reason)];
        metrics
            .sum("cms_gateway_handshake_rejections_total", &labels)
            .unwrap_or(0.0)
    })
}

/// Waits until exactly one more rejection than `before` is counted, under `reason`, and no
/// other; returns the new counts.
async fn expect_one_rejection(api: &Api, before: [f64; 7], reason: &str) -> [f64; 7] {
    let index = REASONS
        .iter()
        .position(|r| *r == reason)
        .expect("a known reason");
    let mut expected = before;
    expected[index] += 1.0;
    let what = format!("one more handshake rejection, counted as {reason} ({REASONS:?})");
    eventually(&what, async || {
        let now = rejections(api).await;
        match now == expected {
            true => Ok(now),
            false => Err(format!("{now:?}, expected {expected:?}")),
        }
    })
    .await
}
