//! The README's first example, run as written: the shell block that registers a charger and
//! makes a token (its `cms` alias pointed at this build and this test's store), the Python
//! charger with the password printed, and the REST reads, against a `cms up` on its own ports.
//! Each must show what the README says it shows.

use crate::support::python::python3;
use crate::support::{Cms, eventually_within};
use serde_json::json;
use std::time::Duration;

const SECTION: &str = "## Connect a charger and read its values";
const READ_BOUND: Duration = Duration::from_secs(5);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_example_registers_a_charger_sends_a_reading_and_reads_it_back() {
    let cms = Cms::up().await;
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let section = &readme[readme.find(SECTION).expect("the README's example section")..];
    let [setup, charger, reads] = [
        code_block(section, "sh", 0),
        code_block(section, "python", 0),
        code_block(section, "sh", 1),
    ];
    let http = cms.http_url("").trim_end_matches('/').to_string();
    let here = |text: &str| {
        text.replace("http://127.0.0.1:8080", &http)
            .replace("127.0.0.1:9000", cms.ocpp_addr())
    };

    // The alias runs `cargo run`: here the binary under test, on this instance's store.
    let alias = setup
        .lines()
        .find(|l| l.starts_with("alias cms="))
        .expect("the README's alias");
    let function = format!(
        "cms() {{ {:?} \"$@\" {}; }}",
        env!("CARGO_BIN_EXE_cms"),
        cms.store_args().join(" ")
    );
    let setup = setup.replace(alias, &function);
    let setup = run(
        "bash",
        &format!("set -euo pipefail\n{setup}\necho \"TOKEN=$TOKEN\""),
    )
    .await;
    let password = setup
        .split("shown only once: ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("`cms charger add` printed no password:\n{setup}"));
    let token = setup
        .lines()
        .find_map(|l| l.strip_prefix("TOKEN="))
        .expect("the token");
    let uuid = setup
        .lines()
        .find(|l| crate::support::is_uuid(l.trim()))
        .expect("the charger's uuid")
        .trim();

    let script = here(&charger).replace("<the password printed>", password);
    let answers = python3(&["-c", &script], Duration::from_secs(20))
        .await
        .expect("python3 runs the README's charger");
    assert!(answers.status.success(), "{}", answers.stderr);
    // Printed as Python prints a list (or as the frame's own JSON): read either as JSON.
    let frames: Vec<serde_json::Value> = answers
        .stdout
        .lines()
        .map(|l| serde_json::from_str(&l.replace('\'', "\"")).expect("a frame printed"))
        .collect();
    assert_eq!(frames.len(), 2, "two answers: {}", answers.stdout);
    assert_eq!(
        (&frames[0][0], &frames[0][1], &frames[0][2]["status"]),
        (&json!(3), &json!("1"), &json!("Accepted")),
        "the boot is accepted: {}",
        frames[0]
    );
    assert_eq!(frames[1], json!([3, "2", {}]), "the reading is taken");

    // The read model follows the bus: what the charger sent is readable a moment after its
    // answer (milliseconds; a person typing the reads never sees the gap), so the reads are
    // run again until they show it, within a bound.
    let reads = here(&reads).replace("<charger_uuid>", uuid);
    let script = format!("set -euo pipefail\nTOKEN='{token}'\n{reads}");
    let shown = eventually_within(
        READ_BOUND,
        "the README's reads show the reading",
        async || {
            let shown = run("bash", &script).await;
            let seen = !shown.contains("\"connection_status\":\"never_seen\"");
            match shown.contains("\"identity\":\"CP-1\"") && seen && shown.contains("1234") {
                true => Ok(shown),
                false => Err(shown),
            }
        },
    )
    .await;
    assert!(shown.contains("Energy.Active.Import.Register"), "{shown}");
}

/// The `n`th code block of `language` in `text`.
fn code_block(text: &str, language: &str, n: usize) -> String {
    let fence = format!("```{language}\n");
    let start = text
        .match_indices(&fence)
        .nth(n)
        .unwrap_or_else(|| panic!("no {language} block #{n}"))
        .0
        + fence.len();
    let end = start + text[start..].find("```").expect("a closing fence");
    text[start..end].to_string()
}

/// Runs `script` with `shell`, bounded in time (coreutils' `timeout`); its stdout, or a panic
/// with what it printed.
async fn run(shell: &str, script: &str) -> String {
    let (shell, script) = (shell.to_string(), script.to_string());
    let output = tokio::task::spawn_blocking(move || {
        let output = std::process::Command::new("timeout")
            .args(["30", &shell, "-c", &script])
            .output()
            .expect("the shell runs");
        (shell, script, output)
    });
    let (shell, script, output) = output.await.expect("the shell's thread");
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        output.status.success(),
        "{shell} failed ({}):\n{script}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}
