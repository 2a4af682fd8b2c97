//! The independent OCPI 2.2.1 eMSP (tests/interop/ocpi_emsp: an app on the PyPI `extrawest-ocpi`
//! framework, in its own venv made by scripts/lib/ocpi_emsp.sh) as a child process, with typed
//! calls of its control API (README.md beside it lists them). Killed when dropped; its log (the
//! library's, on stderr) is shown when a test fails.

use super::eventually_within;
use super::process::stdout_lines;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;
use tempfile::TempDir;

/// How long Python may take to import the framework and listen.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a control call may take: one that goes on to cms (a pull of many pages, a
/// handshake) waits for cms's answers, each bounded by the eMSP's own 10 s.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a push from cms may take to arrive: the outbox's dispatcher, a retry or two.
pub const ARRIVES: Duration = Duration::from_secs(30);

pub struct Emsp {
    child: Child,
    /// Held open: the eMSP exits when it closes (should the test process die without dropping).
    _stdin: ChildStdin,
    base: String,
    client: reqwest::Client,
    log: TempDir,
}

/// `$CMS_OCPI_EMSP_VENV`, else `$HOME/.cache/cms-ocpi-emsp-venv`: where scripts/lib/ocpi_emsp.sh
/// makes the venv.
fn venv() -> PathBuf {
    match std::env::var_os("CMS_OCPI_EMSP_VENV") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
            .join(".cache/cms-ocpi-emsp-venv"),
    }
}

impl Emsp {
    /// An eMSP of country `NL`, party `EMP`.
    pub async fn start() -> Emsp {
        Emsp::start_as("NL", "EMP").await
    }

    /// An eMSP of the given country code and party id, on a free loopback port.
    pub async fn start_as(country_code: &str, party_id: &str) -> Emsp {
        let python = venv().join("bin/python");
        assert!(
            python.exists(),
            "{} is missing: the OCPI tests need the eMSP's venv; make it with \
             `bash -c '. scripts/lib/ocpi_emsp.sh && ensure_ocpi_emsp'` (scripts/test does)",
            python.display()
        );
        let log = TempDir::new().expect("a temporary directory");
        let stderr = std::fs::File::create(log.path().join("emsp.log")).expect("the eMSP's log");
        let interop = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop");
        let mut child = Command::new(&python)
            .args(["-m", "ocpi_emsp", "--port", "0", "--exit-with-stdin"])
            .args(["--country-code", country_code, "--party-id", party_id])
            .current_dir(interop)
            // No __pycache__ left in the source tree.
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .unwrap_or_else(|e| panic!("run {}: {e}", python.display()));
        let stdin = child.stdin.take().expect("piped stdin");
        let mut lines = stdout_lines(&mut child);
        let first = tokio::time::timeout(STARTUP_TIMEOUT, lines.recv()).await;
        let client = reqwest::Client::builder()
            .no_proxy()
            .timeout(CONTROL_TIMEOUT)
            .build()
            .expect("an HTTP client");
        let mut emsp = Emsp {
            child,
            _stdin: stdin,
            base: String::new(),
            client,
            log,
        };
        let port = match first {
            Ok(Some(ref line)) => line.strip_prefix("listening ").map(str::to_string),
            _ => None,
        };
        let Some(port) = port else {
            panic!(
                "the eMSP did not start within {STARTUP_TIMEOUT:?} ({first:?}); its log:\n{}",
                emsp.log_text()
            );
        };
        emsp.base = format!("http://127.0.0.1:{}", port.trim());
        emsp
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(self.log.path().join("emsp.log")).unwrap_or_default()
    }

    /// `http://127.0.0.1:PORT/ocpi/versions`, what cms registers with.
    pub fn versions_url(&self) -> String {
        format!("{}/ocpi/versions", self.base)
    }

    async fn control(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
        let mut request = (self.client).request(method.clone(), format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(body);
        }
        let response =
            (request.send().await).unwrap_or_else(|e| panic!("the eMSP's {method} {path}: {e}"));
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        assert!(
            status.is_success(),
            "the eMSP's {method} {path} answered {status}: {text}"
        );
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
    }

    /// Registers with cms (versions, details, POST credentials with `token_a`). The outcome:
    /// `{"ok": true, "token_b", "token_c", "credentials", "endpoints"}`, or `{"ok": false,
    /// "step", "error", "status", "answer"}` (`step`: versions, details or credentials).
    pub async fn register_with(&self, versions_url: &str, token_a: &str) -> Value {
        let body = json!({"versions_url": versions_url, "token": token_a});
        self.control("POST", "/control/register", Some(&body)).await
    }

    /// Issues a token A for cms to register with the eMSP; returns it.
    pub async fn issue_token_a(&self) -> String {
        let answer = self.control("POST", "/control/token-a", None).await;
        answer["token"].as_str().expect("a token").to_string()
    }

    /// `{"country_code", "party_id", "versions_url", "tokens_a", "tokens_c", "peer"}`, `peer`
    /// being cms as the handshake left it (`versions_url`, `token`, `endpoints`, `roles`).
    pub async fn state(&self) -> Value {
        self.control("GET", "/control/state", None).await
    }

    /// Every request cms made to the eMSP, in order: `{"method", "path", "query", "module",
    /// "headers" (lower-case names), "token" (of `Authorization: Token <base64>`, decoded),
    /// "body", "status", "answer"}` (`status` null while the eMSP has not answered yet).
    pub async fn received(&self) -> Vec<Value> {
        let all = self.control("GET", "/control/received", None).await;
        all["requests"].as_array().cloned().unwrap_or_default()
    }

    /// The requests cms made to one module (`locations`, `sessions`, `versions`, ...).
    pub async fn received_of(&self, module: &str) -> Vec<Value> {
        let path = format!("/control/received?module={module}");
        let all = self.control("GET", &path, None).await;
        all["requests"].as_array().cloned().unwrap_or_default()
    }

    /// Waits until cms made a request to `module` that `wanted` accepts (and the eMSP
    /// answered); returns it.
    pub async fn wait_received(
        &self,
        module: &str,
        what: &str,
        wanted: impl Fn(&Value) -> bool,
    ) -> Value {
        eventually_within(ARRIVES, what, async || {
            let got = self.received_of(module).await;
            let found = got.iter().find(|r| !r["status"].is_null() && wanted(r));
            found.cloned().ok_or_else(|| format!("{got:#?}"))
        })
        .await
    }

    /// As [`Emsp::wait_received`], for a request that may never be answered (one cms gave up
    /// waiting for): seen on arrival.
    pub async fn wait_arrived(
        &self,
        module: &str,
        what: &str,
        wanted: impl Fn(&Value) -> bool,
    ) -> Value {
        eventually_within(ARRIVES, what, async || {
            let got = self.received_of(module).await;
            let found = got.iter().find(|r| wanted(r));
            found.cloned().ok_or_else(|| format!("{got:#?}"))
        })
        .await
    }

    /// What the library keeps of a module's objects after cms's PUTs and PATCHes (CiStrings in
    /// capitals, as it parsed them).
    pub async fn objects(&self, module: &str) -> Vec<Value> {
        let all = self
            .control("GET", &format!("/control/objects/{module}"), None)
            .await;
        all["objects"].as_array().cloned().unwrap_or_default()
    }

    /// Every request the eMSP made to cms: `{"method", "url", "params", "headers", "body",
    /// "status", "response_headers", "answer", "links"}`.
    pub async fn sent(&self) -> Vec<Value> {
        let all = self.control("GET", "/control/sent", None).await;
        all["requests"].as_array().cloned().unwrap_or_default()
    }

    /// Pulls cms's `module` (locations, tariffs, sessions, cdrs), following the Link header:
    /// `{"ok", "items", "errors", "pages": [{"url", "status", "total", "limit", "link",
    /// "request_id", "correlation_id", "count"}]}`; `ok` is false when an object does not
    /// parse with the library's schema (`errors` says where).
    pub async fn pull(&self, module: &str) -> Value {
        self.pull_with(module, json!({})).await
    }

    /// [`Emsp::pull`] with query parameters for the first page (`offset`, `limit`,
    /// `date_from`, `date_to`).
    pub async fn pull_with(&self, module: &str, params: Value) -> Value {
        let body = json!({"module": module, "params": params});
        self.control("POST", "/control/pull", Some(&body)).await
    }

    /// GETs one object: `path` follows the module's URL (`/{cc}/{pid}/{id}[/{evse}[/{conn}]]`).
    pub async fn pull_one(&self, module: &str, path: &str) -> Value {
        let body = json!({"module": module, "path": path});
        self.control("POST", "/control/pull", Some(&body)).await
    }

    /// PUTs a Token to cms: `fields` (`uid` at least) over the defaults (the eMSP's country and
    /// party, RFID, contract_id = uid, valid, whitelist ALLOWED, last_updated now). `{"ok",
    /// "status", "answer", "sent"}`.
    pub async fn push_token(&self, fields: Value) -> Value {
        self.control("PUT", "/control/tokens", Some(&fields)).await
    }

    /// PATCHes a Token at cms with `fields` (`uid` says which) and last_updated.
    pub async fn patch_token(&self, fields: Value) -> Value {
        self.control("PATCH", "/control/tokens", Some(&fields))
            .await
    }

    /// POSTs the command (`START_SESSION`, `STOP_SESSION`, ...) to cms, `fields` its object but
    /// `response_url` (the eMSP's own; `token_uid` stands for the token pushed with that uid).
    /// `{"ok", "uid", "status", "answer", "errors", "sent"}`.
    pub async fn command(&self, command: &str, fields: Value) -> Value {
        let path = format!("/control/commands/{command}");
        self.control("POST", &path, Some(&fields)).await
    }

    /// The CommandResults cms posted for the command `uid`, in order.
    pub async fn command_results(&self, uid: &str) -> Vec<Value> {
        let all = self.control("GET", "/control/commands", None).await;
        all["commands"][uid]["results"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Waits for the first CommandResult of the command `uid`.
    pub async fn wait_command_result(&self, uid: &str) -> Value {
        eventually_within(
            ARRIVES,
            &format!("the result of command {uid}"),
            async || {
                let results = self.command_results(uid).await;
                results
                    .first()
                    .cloned()
                    .ok_or_else(|| "none yet".to_string())
            },
        )
        .await
    }

    /// How the eMSP answers cms's real-time authorisation of the token `uid`: `allowed`
    /// (ALLOWED, BLOCKED, EXPIRED, NO_CREDIT, NOT_ALLOWED) after `delay` seconds.
    pub async fn set_authorize(&self, uid: &str, allowed: &str, delay: f64) {
        let body = json!({"allowed": allowed, "delay": delay});
        self.control("PUT", &format!("/control/authorize/{uid}"), Some(&body))
            .await;
    }

    /// Any request to cms, answered as it came (no envelope check): `{"method", "url" |
    /// "module" (and "path"), "body", "params", "token"}` (the token cms gave, by default).
    pub async fn call(&self, request: Value) -> Value {
        self.control("POST", "/control/call", Some(&request)).await
    }
}

impl Drop for Emsp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = self.log_text();
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines[lines.len().saturating_sub(40)..].join("\n");
            eprintln!("---- the eMSP's log (tail) ----\n{tail}");
        }
    }
}
