//! The charger sessions first: in `cms up` the gateway's shards share the cores with the REST
//! API, the materialiser and the store's threads, and a frame that arrives while those hold
//! every core waits for them (the materialiser writes a batch of readings every 100 ms).
//! Once the gateway runs, those threads are given a lower priority (a higher nice value), and
//! threads they start later inherit it (tokio's blocking threads, sqlx's SQLite connection
//! threads). With them go the command and registry followers, which run on the same runtime:
//! under full ingest, commands, registrations and id-tag changes reach the shards later. They
//! are found by name, so a thread that is not one of them, or not named yet (a shard just
//! started), keeps the process's priority. Linux only: elsewhere nice applies to the whole
//! process and this does nothing (docs/decisions.md, "The charger sessions first").

/// The threads lowered, by name prefix: the runtime's workers and blocking threads (HTTP, the
/// API, the materialiser, the bus, the command and registry followers), the metrics' upkeep,
/// the store's SQLite connection threads; with them the main thread. The shards' threads
/// (`ocpp-shard-*`, their blocking threads too) and the TLS handshakes' (`ocpp-tls*`) are not
/// among them.
const LOWERED: [&str; 3] = ["tokio-r", "metrics-upkeep", "sqlx-sqlite"];

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
    // Again until a pass finds nothing left: a thread started meanwhile by one not lowered
    // yet has the higher priority, and the next pass finds it.
    let mut lowered = 0;
    for _ in 0..5 {
        let now = lower(nice, |tid, name| {
            tid == main || LOWERED.iter().any(|p| name.starts_with(p))
        })?;
        if now == 0 {
            break;
        }
        lowered += now;
    }
    Ok(lowered)
}

/// Sets `nice` on every thread of this process that `chosen(tid, name)` picks and that does not
/// have it already; how many it set.
#[cfg(target_os = "linux")]
fn lower(nice: i32, chosen: impl Fn(&str, &str) -> bool) -> std::io::Result<usize> {
    use rustix::process::{Pid, getpriority_process, setpriority_process};
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
        if getpriority_process(Some(pid)).is_ok_and(|now| now != nice)
            && setpriority_process(Some(pid), nice).is_ok()
        {
            lowered += 1;
        }
    }
    Ok(lowered)
}

#[cfg(not(target_os = "linux"))]
pub fn sessions_first(by: u8) -> std::io::Result<usize> {
    if by > 0 {
        tracing::info!("--api-nice is for Linux: every thread runs alike here");
    }
    Ok(0)
}

/// Runs the calling thread (a shard's, before its runtime starts) under SCHED_BATCH: the
/// kernel then never lets it preempt a running thread when it wakes, so a shard woken by one
/// frame waits for the running thread's turn to end, by which time more frames have come, and
/// reads them together. Under full load on shared cores a shard that preempted whatever sent it
/// a frame fell into reading them one wake-up each (a command path's wake-ups were enough to
/// start it: docs/performance.md, "Commands in flight"). Threads it starts later inherit it.
/// Failing, it logs and leaves the thread as it was.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn shard_in_batches() {
    // SAFETY: an all-zero sched_param is valid (plain integers; musl's has more of them than
    // glibc's, hence no struct literal) and means priority 0, the only one SCHED_BATCH takes,
    // needing no privilege; it outlives the call, which only reads it; pid 0 is the calling
    // thread.
    let set = unsafe {
        let param: libc::sched_param = std::mem::zeroed();
        libc::sched_setscheduler(0, libc::SCHED_BATCH, &param)
    };
    if set != 0 {
        let error = std::io::Error::last_os_error();
        tracing::warn!(%error, "could not run the shard under SCHED_BATCH");
    }
}

#[cfg(not(target_os = "linux"))]
pub fn shard_in_batches() {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[allow(unsafe_code)]
    fn policy_of_this_thread() -> i32 {
        // SAFETY: no argument but the calling thread's pid 0.
        unsafe { libc::sched_getscheduler(0) }
    }

    #[test]
    fn a_shard_thread_and_the_threads_it_starts_run_in_batches() {
        let (shard, started) = std::thread::spawn(|| {
            super::shard_in_batches();
            let started = std::thread::spawn(policy_of_this_thread).join().unwrap();
            (policy_of_this_thread(), started)
        })
        .join()
        .unwrap();
        assert_eq!((shard, started), (libc::SCHED_BATCH, libc::SCHED_BATCH));
    }
}
