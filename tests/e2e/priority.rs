//! `cms up` answers chargers first: the REST API's, the materialiser's and the store's threads
//! run `--api-nice` levels below the gateway's shards (docs/decisions.md, "The charger sessions
//! first"); the shards run under SCHED_BATCH unless `--shard-scheduling normal` (docs/decisions.md,
//! "The shards in batches").

use crate::support::{Api, Charger, Cms};

/// Each thread of process `pid`: its name and its nice value.
fn threads(pid: u32) -> Vec<(String, i32)> {
    stat_field(pid, 16)
}

/// Each thread of process `pid`: its name and its scheduling policy (0 SCHED_OTHER, 3
/// SCHED_BATCH).
fn policies(pid: u32) -> Vec<(String, i32)> {
    stat_field(pid, 38)
}

/// Each thread of process `pid`: its name and field `n` of its stat line, counted from the
/// third (the first past the name in parentheses) as 0.
fn stat_field(pid: u32, n: usize) -> Vec<(String, i32)> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the process's threads");
    tasks
        .filter_map(|task| {
            let path = task.ok()?.path();
            let name = std::fs::read_to_string(path.join("comm")).ok()?;
            let stat = std::fs::read_to_string(path.join("stat")).ok()?;
            let field = stat[stat.rfind(')')? + 1..].split_whitespace().nth(n)?;
            Some((name.trim().to_string(), field.parse().ok()?))
        })
        .collect()
}

/// The threads named with `prefix` and their field, asserting there is at least one.
fn named<'a>(threads: &'a [(String, i32)], prefix: &str) -> Vec<(&'a str, i32)> {
    let some: Vec<(&str, i32)> = threads
        .iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .map(|(name, field)| (name.as_str(), *field))
        .collect();
    assert!(!some.is_empty(), "no {prefix} thread among {threads:?}");
    some
}

/// The shards' nice value, the same for all of them.
fn sessions_nice(threads: &[(String, i32)]) -> i32 {
    let shards = named(threads, "ocpp-shard-");
    let sessions = shards[0].1;
    assert!(
        shards.iter().all(|(_, nice)| *nice == sessions),
        "{shards:?}"
    );
    sessions
}

/// Runs a charger and a REST read through `cms`, so that the store's connection threads exist,
/// and returns its threads.
async fn threads_after_some_work(cms: &Cms, identity: &str) -> Vec<(String, i32)> {
    let uuid = cms.add_charger(identity).await;
    let api = Api::new(cms, &cms.operator_token().await);
    let mut charger = Charger::connect_and_boot(cms, identity, "1.0.0").await;
    charger.heartbeat().await;
    api.wait_for_charger(&uuid, "online", |c| c["connection_status"] == "online")
        .await;
    threads(cms.pid())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_charger_sessions_run_above_the_api_and_the_store() {
    let cms = Cms::up().await;
    let threads = threads_after_some_work(&cms, "CP-FIRST").await;
    let sessions = sessions_nice(&threads);
    let below = (sessions + 10).min(19);
    for prefix in ["tokio-rt-worker", "sqlx-sqlite-wor"] {
        let others = named(&threads, prefix);
        assert!(
            others.iter().all(|(_, nice)| *nice == below),
            "{prefix} threads should run at nice {below}, the shards at {sessions}: {others:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_api_nice_0_every_thread_runs_alike() {
    let cms = Cms::up_with(&["--api-nice", "0"]).await;
    let threads = threads_after_some_work(&cms, "CP-ALIKE").await;
    let sessions = sessions_nice(&threads);
    assert!(
        threads.iter().all(|(_, nice)| *nice == sessions),
        "every thread at nice {sessions}: {threads:?}"
    );
}

const SCHED_OTHER: i32 = 0;
const SCHED_BATCH: i32 = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shards_run_in_batches_and_every_other_thread_as_usual() {
    let cms = Cms::up().await;
    threads_after_some_work(&cms, "CP-BATCH").await;
    let all = policies(cms.pid());
    let shards = named(&all, "ocpp-shard-");
    assert!(
        shards.iter().all(|(_, policy)| *policy == SCHED_BATCH),
        "the shards should run under SCHED_BATCH: {shards:?}"
    );
    for prefix in ["tokio-rt-worker", "sqlx-sqlite-wor"] {
        let others = named(&all, prefix);
        assert!(
            others.iter().all(|(_, policy)| *policy == SCHED_OTHER),
            "{prefix} threads should run under SCHED_OTHER: {others:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_shard_scheduling_normal_the_shards_run_as_every_thread() {
    let cms = Cms::up_with(&["--shard-scheduling", "normal"]).await;
    threads_after_some_work(&cms, "CP-NORMAL").await;
    let all = policies(cms.pid());
    assert!(
        all.iter().all(|(_, policy)| *policy == SCHED_OTHER),
        "every thread under SCHED_OTHER: {all:?}"
    );
}
