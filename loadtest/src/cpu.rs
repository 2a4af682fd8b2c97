//! Where CPU goes, from /proc: the CPU time of processes, and of a process's threads grouped by
//! name (`tokio-rt-worker`, `ocpp-shard-`, `sqlx-sqlite-wor`: the names say what runs there),
//! with their context switches.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a group of threads used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadUse {
    /// CPU seconds, user and system.
    pub cpu_s: f64,
    /// Context switches, voluntary and not.
    pub switches: u64,
}

/// CPU time (user and system, all threads) these processes used so far, in seconds; `None`
/// for no pids, or when one of them cannot be read.
pub fn total_cpu_s(pids: &[u32]) -> Option<f64> {
    if pids.is_empty() {
        return None;
    }
    pids.iter()
        .map(|&pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .map(|stat| cpu_ticks(&stat?))
        .sum::<Option<u64>>()
        .map(|ticks| ticks as f64 / clock_ticks_per_s())
}

/// What these processes' threads used so far, by group (the thread's name without its number).
pub fn by_thread(pids: &[u32]) -> BTreeMap<String, ThreadUse> {
    let mut groups: BTreeMap<String, ThreadUse> = BTreeMap::new();
    for pid in pids {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let dir = task.path();
            let (Ok(stat), Ok(status)) = (
                std::fs::read_to_string(dir.join("stat")),
                std::fs::read_to_string(dir.join("status")),
            ) else {
                continue;
            };
            let (Some(name), Some(ticks)) = (thread_group(&stat), cpu_ticks(&stat)) else {
                continue;
            };
            let used = groups.entry(name).or_default();
            used.cpu_s += ticks as f64 / clock_ticks_per_s();
            used.switches += switches(&status);
        }
    }
    groups
}

/// What each group used from `from` to `to` (a group new at `to` counts from zero; a thread
/// that ended in between takes its share with it).
pub fn between(
    from: &BTreeMap<String, ThreadUse>,
    to: &BTreeMap<String, ThreadUse>,
) -> BTreeMap<String, ThreadUse> {
    to.iter()
        .map(|(name, end)| {
            let start = from.get(name).copied().unwrap_or_default();
            let used = ThreadUse {
                cpu_s: (end.cpu_s - start.cpu_s).max(0.0),
                switches: end.switches.saturating_sub(start.switches),
            };
            (name.clone(), used)
        })
        .collect()
}

/// The command name of a /proc stat line (field 2, in parentheses, which it may itself hold)
/// without the thread's number: `ocpp-shard-1` and `ocpp-shard-0` are one group.
fn thread_group(stat: &str) -> Option<String> {
    let name = &stat[stat.find('(')? + 1..stat.rfind(')')?];
    let group = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-');
    Some(if group.is_empty() { name } else { group }.to_string())
}

/// utime + stime of a /proc stat line, in clock ticks. The command name (field 2) may hold
/// spaces and parentheses: the fields are counted from its closing parenthesis.
fn cpu_ticks(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    // Fields 3 (state) to 13 come first; utime and stime are 14 and 15.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// voluntary_ctxt_switches + nonvoluntary_ctxt_switches of a /proc status file.
fn switches(status: &str) -> u64 {
    status
        .lines()
        .filter(|l| l.contains("ctxt_switches:"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum()
}

fn clock_ticks_per_s() -> f64 {
    // SAFETY: sysconf reads a constant of the system; no memory is handed over.
    match unsafe { libc::sysconf(libc::_SC_CLK_TCK) } {
        n if n > 0 => n as f64,
        _ => 100.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "4242 (cms (x) y) S 1 4242 4242 0 -1 4194560 900 0 0 0 1500 250 0 0 20 0 9";

    #[test]
    fn reads_cpu_time_and_names() {
        assert_eq!(cpu_ticks(STAT), Some(1750));
        assert_eq!(cpu_ticks("4242 (cms) S 1"), None);
        assert_eq!(thread_group(STAT).as_deref(), Some("cms (x) y"));
        let shard = STAT.replace("cms (x) y", "ocpp-shard-12");
        assert_eq!(thread_group(&shard).as_deref(), Some("ocpp-shard"));
        let numbers = STAT.replace("cms (x) y", "1234");
        assert_eq!(thread_group(&numbers).as_deref(), Some("1234"));
        let status = "Name:\tcms\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n";
        assert_eq!(switches(status), 127);
    }

    #[test]
    fn this_process_is_measured() {
        let me = std::process::id();
        assert!(total_cpu_s(&[me]).unwrap() >= 0.0);
        assert_eq!(total_cpu_s(&[]), None);
        let threads = by_thread(&[me]);
        assert!(!threads.is_empty());
        let none = between(&threads, &threads);
        assert!(none.values().all(|u| u.cpu_s == 0.0 && u.switches == 0));
        let from = BTreeMap::from([(
            "a".to_string(),
            ThreadUse {
                cpu_s: 1.0,
                switches: 5,
            },
        )]);
        let to = BTreeMap::from([
            (
                "a".to_string(),
                ThreadUse {
                    cpu_s: 1.5,
                    switches: 9,
                },
            ),
            (
                "b".to_string(),
                ThreadUse {
                    cpu_s: 0.25,
                    switches: 2,
                },
            ),
        ]);
        let used = between(&from, &to);
        assert_eq!(
            used["a"],
            ThreadUse {
                cpu_s: 0.5,
                switches: 4
            }
        );
        assert_eq!(
            used["b"],
            ThreadUse {
                cpu_s: 0.25,
                switches: 2
            }
        );
    }
}
