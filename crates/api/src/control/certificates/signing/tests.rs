//! The external CA's command (`--station-ca-command`), run for real: a shell script around the
//! openssl command line signs; one that hangs is killed at its time-out; one that fails refuses.

use super::external;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn openssl(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl command line");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

const EC: [&str; 4] = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"];

#[tokio::test]
async fn the_external_ca_signs_the_csr_it_is_given_for_the_station_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut ca = vec![
        "req",
        "-x509",
        "-nodes",
        "-days",
        "30",
        "-subj",
        "/CN=External CA",
    ];
    ca.extend(EC);
    ca.extend(["-keyout", "ca.key", "-out", "ca.pem"]);
    openssl(dir.path(), &ca);
    let mut csr = vec!["req", "-new", "-nodes", "-subj", "/CN=CS-1/O=Example CPO"];
    csr.extend(EC);
    csr.extend(["-keyout", "station.key"]);
    let csr = openssl(dir.path(), &csr);
    // Refuses any other station than the one cms names.
    let ca = script(
        dir.path(),
        "ca.sh",
        &format!(
            "cd {} && [ \"$CMS_STATION_IDENTITY\" = CS-1 ] || exit 3\n\
             openssl x509 -req -CA ca.pem -CAkey ca.key -days 2 -out station.pem 2>/dev/null \
             && cat station.pem ca.pem",
            dir.path().display()
        ),
    );
    let second = Duration::from_secs(10);
    let signed = external(&ca, second, "CS-1", &csr).await.unwrap();
    let serial = openssl(
        dir.path(),
        &["x509", "-noout", "-serial", "-in", "station.pem"],
    );
    let serial = serial
        .trim()
        .strip_prefix("serial=")
        .unwrap()
        .to_ascii_lowercase();
    assert_eq!(signed.serial, serial);
    assert_eq!(signed.chain_pem.matches("BEGIN CERTIFICATE").count(), 2);
    let left = signed.not_after - chrono::Utc::now();
    assert!(left > chrono::Duration::hours(47) && left <= chrono::Duration::hours(48));
    let refused = external(&ca, second, "CS-2", &csr).await.err().unwrap();
    assert_eq!(refused, "the CA command ended with exit status: 3");
}

#[tokio::test]
async fn an_external_ca_that_hangs_or_prints_no_chain_refuses_the_csr() {
    let dir = tempfile::tempdir().unwrap();
    let hangs = script(dir.path(), "hangs.sh", "exec sleep 30");
    let started = std::time::Instant::now();
    let refused = external(&hangs, Duration::from_millis(300), "CS-1", "csr").await;
    assert_eq!(
        refused.err().unwrap(),
        "the CA command took longer than 300ms"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "killed, not awaited"
    );
    let nothing = script(dir.path(), "nothing.sh", "cat >/dev/null; echo no chain");
    let refused = external(&nothing, Duration::from_secs(10), "CS-1", "csr").await;
    let refused = refused.err().unwrap();
    assert!(refused.starts_with("the CA command's chain: "), "{refused}");
    let missing = dir.path().join("missing.sh");
    let refused = external(&missing, Duration::from_secs(10), "CS-1", "csr").await;
    assert!(refused.err().unwrap().starts_with("the CA command "));
}
