//! The charger sessions first: in `cms up` the gateway's shards share the cores with the REST
//! API, the materialiser and the store's threads, and a frame that arrives while those hold
//! every core waits for them (the materialiser writes a batch of readings every 100 ms).
//! Once the gateway runs, those threads are given a lower priority (a higher nice value), and
//! threads they start later inherit it (tokio's blocking threads, sqlx's SQLite connection
//! threads). They are found by name, so a thread that is not one of them, or not named yet
//! (a shard just started), keeps the process's priority. Linux only: elsewhere nice applies to
//! the whole process and this does nothing (docs/decisions.md, "The charger sessions first").

/// The threads lowered first, by name prefix: the runtime's workers (HTTP, API, materialiser,
/// bus) and the metrics' upkeep; with them the main thread. Then the store's, which the first
/// start: one they start meanwhile inherits the lower priority, one started before is there
/// to be found.
const FIRST: [&str; 2] = ["tokio-r", "metrics-upkeep"];
const THEN: [&str; 1] = ["sqlx-sqlite"];

/// Lowers the API's, the materialiser's and the store's threads by `by` nice levels (up to
/// 19) below the calling thread, the one that started the sessions; how many it lowered.
#[cfg(target_os = "linux")]
pub fn sessions_first(by: u8) -> std::io::Result<usize> {
    use rustix::process::getpriority_process;
    if by == 0 {
        return Ok(0);
    }
    // With PRIO_PROCESS, Linux reads and sets one thread's nice value, not the process's.
    let nice = (getpriority_process(None)? + i32::from(by)).min(19);
    let main = std::process::id().to_string();
    let first = lower(nice, |tid, name| {
        tid == main || FIRST.iter().any(|p| name.starts_with(p))
    })?;
    let then = lower(nice, |_, name| THEN.iter().any(|p| name.starts_with(p)))?;
    Ok(first + then)
}

/// Sets `nice` on every thread of this process that `chosen(tid, name)` picks.
#[cfg(target_os = "linux")]
fn lower(nice: i32, chosen: impl Fn(&str, &str) -> bool) -> std::io::Result<usize> {
    use rustix::process::{Pid, setpriority_process};
    let mut lowered = 0;
    for task in std::fs::read_dir("/proc/self/task")? {
        let task = task?;
        let tid = task.file_name().to_string_lossy().into_owned();
        let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !chosen(&tid, &name) {
            continue;
        }
        let Some(pid) = tid.parse::<i32>().ok().and_then(Pid::from_raw) else {
            continue;
        };
        // A thread that ended meanwhile is no error.
        if setpriority_process(Some(pid), nice).is_ok() {
            lowered += 1;
        }
    }
    Ok(lowered)
}

#[cfg(not(target_os = "linux"))]
pub fn sessions_first(_by: u8) -> std::io::Result<usize> {
    Ok(0)
}
