//! One CSR of a station: checked, signed (cms's CA or the external CA's command), kept, and
//! sent back as CertificateSigned. A refused CSR is logged (target `cms::security`) and counted;
//! the station is sent nothing and asks again by its own rules.

use super::{CertificateRequest, StationSigner};
use crate::control::actions::{Dispatch, charger_version};
use cms_bus::{ActionName, RequestedBy};
use cms_ocpp::OcppVersion;
use cms_store::format_record_time;
use cms_store::security::SignedCertificate;
use cms_tls::station_ca::{Signed, check_csr, describe_chain};
use serde_json::json;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// 2.0.1's type of the station's own certificate (the one cms signs; V2G ones are not).
const STATION_CERTIFICATE: &str = "ChargingStationCertificate";
/// The longest `certificateChain` each version's CertificateSigned schema takes.
const LONGEST_CHAIN_V201: usize = 5500;
const LONGEST_CHAIN_V16: usize = 10_000;

pub(super) async fn sign(
    dispatch: &Dispatch,
    signer: Option<&StationSigner>,
    request: &CertificateRequest,
) {
    let identity = request.identity.as_str();
    match signed(dispatch, signer, request).await {
        Ok(()) => metrics::counter!("cms_station_certificates_signed_total").increment(1),
        Err(reason) => {
            metrics::counter!("cms_station_csrs_refused_total").increment(1);
            tracing::warn!(target: "cms::security", %identity, %reason,
                "a station's certificate signing request was refused; nothing was sent");
        }
    }
}

async fn signed(
    dispatch: &Dispatch,
    signer: Option<&StationSigner>,
    request: &CertificateRequest,
) -> Result<(), String> {
    let identity = request.identity.as_str();
    let signer = signer.ok_or("cms signs no station certificates (no --station-ca-cert)")?;
    let kind = request.certificate_type.as_deref();
    if let Some(kind) = kind.filter(|k| *k != STATION_CERTIFICATE) {
        return Err(format!("a {kind} is not signed here"));
    }
    let checked = check_csr(&request.csr, identity).map_err(|e| format!("the CSR: {e}"))?;
    let store = &dispatch.store;
    let (charger_id, _) = (store.charger_by_identity(identity).await)
        .map_err(|e| e.to_string())?
        .ok_or("no such station")?;
    let signed = match signer {
        StationSigner::Ca(ca) => ca.sign(&checked)?,
        StationSigner::Command { path, timeout } => {
            external(path, *timeout, identity, &request.csr).await?
        }
    };
    let version = store.charger_ocpp_version(charger_id).await;
    let version = charger_version(version.map_err(|e| e.to_string())?.as_deref());
    let longest = match version {
        OcppVersion::V201 => LONGEST_CHAIN_V201,
        OcppVersion::V16 => LONGEST_CHAIN_V16,
    };
    if signed.chain_pem.len() > longest {
        let length = signed.chain_pem.len();
        return Err(format!(
            "the chain has {length} characters, past the {longest} the station's CertificateSigned takes"
        ));
    }
    // 1.6's security extension has no certificateType.
    let body = match version {
        OcppVersion::V201 => json!({
            "certificateChain": signed.chain_pem,
            "certificateType": STATION_CERTIFICATE,
        }),
        OcppVersion::V16 => json!({"certificateChain": signed.chain_pem}),
    };
    let action = ActionName::new("CertificateSigned", version);
    let taken = dispatch
        .take_live(charger_id, identity, action, body, RequestedBy::system())
        .await
        .map_err(|e| e.to_string())?;
    if taken.is_none() {
        return Err("signed, but the station is no longer connected".into());
    }
    // Kept once sent: a station's newest certificate is the one it was last sent.
    store
        .insert_station_certificate(&SignedCertificate {
            charger_id,
            serial: signed.serial.clone(),
            not_after: format_record_time(signed.not_after),
            fingerprint: signed.fingerprint.clone(),
            signed_at: format_record_time(chrono::Utc::now()),
        })
        .await
        .map_err(|e| e.to_string())?;
    tracing::info!(target: "cms::security", %identity, serial = %signed.serial,
        not_after = %signed.not_after, "a station's certificate was signed and sent");
    Ok(())
}

/// Runs the external CA's command: the CSR on its stdin, the station's identity in
/// `CMS_STATION_IDENTITY`; its stdout is the chain, read as PEM. Killed past `timeout`.
async fn external(
    path: &Path,
    timeout: Duration,
    identity: &str,
    csr: &str,
) -> Result<Signed, String> {
    let (path, identity, csr) = (path.to_path_buf(), identity.to_string(), csr.to_string());
    let chain = tokio::task::spawn_blocking(move || run_command(&path, timeout, &identity, &csr))
        .await
        .map_err(|e| format!("the CA command: {e}"))??;
    describe_chain(&chain).map_err(|e| format!("the CA command's chain: {e}"))
}

/// [`external`]'s command, on a blocking thread: its stdout once it exits 0 within `timeout`.
fn run_command(
    path: &Path,
    timeout: Duration,
    identity: &str,
    csr: &str,
) -> Result<String, String> {
    use std::io::{Read, Write};
    let mut child = std::process::Command::new(path)
        .env("CMS_STATION_IDENTITY", identity)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("the CA command {}: {e}", path.display()))?;
    let mut stdin = child.stdin.take().ok_or("the CA command's stdin")?;
    let csr = csr.to_string();
    // Fed and read beside the wait, so that neither pipe fills up and stalls it.
    let feeder = std::thread::spawn(move || stdin.write_all(csr.as_bytes()));
    let mut stdout = child.stdout.take().ok_or("the CA command's stdout")?;
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        stdout.read_to_string(&mut out).map(|_| out)
    });
    let deadline = std::time::Instant::now() + timeout;
    let status = loop {
        match child
            .try_wait()
            .map_err(|e| format!("the CA command: {e}"))?
        {
            Some(status) => break status,
            None if std::time::Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("the CA command took longer than {timeout:?}"));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let _ = feeder.join();
    let out = reader.join().map_err(|_| "the CA command's output")?;
    if !status.success() {
        return Err(format!("the CA command ended with {status}"));
    }
    out.map_err(|e| format!("the CA command's output: {e}"))
}

#[cfg(test)]
mod tests;
