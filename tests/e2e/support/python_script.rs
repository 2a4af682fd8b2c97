//! A third-party test peer written in Python (tests/interop) that prints JSON lines and takes
//! commands on its stdin: the commanded charge point and the central system both run this way.
//! A [`Peer`] run by `python3`, whose `finish` waits a fixed time.

use super::peer::Peer;
use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::time::Duration;

/// How long the script may take to exit once its stdin is closed.
const EXIT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct PythonScript(Peer);

impl PythonScript {
    /// Runs `python3 script args...`; `needs` says what the test needs when python3 is missing.
    pub fn start(name: String, script: &Path, args: &[&str], needs: &str) -> PythonScript {
        let script = script.to_str().expect("a script path in UTF-8");
        let args: Vec<&str> = std::iter::once(script)
            .chain(args.iter().copied())
            .collect();
        let needs = format!(
            "{needs} need python3 with the packages of tests/interop/requirements.txt \
             (scripts/test installs them)"
        );
        PythonScript(Peer::start(name, "python3", Path::new("."), &args, &needs))
    }

    /// Closes its stdin and fails unless it exited 0 with nothing unexpected.
    pub async fn finish(&mut self) {
        self.0.finish(EXIT_TIMEOUT).await;
    }
}

impl Deref for PythonScript {
    type Target = Peer;

    fn deref(&self) -> &Peer {
        &self.0
    }
}

impl DerefMut for PythonScript {
    fn deref_mut(&mut self) -> &mut Peer {
        &mut self.0
    }
}
