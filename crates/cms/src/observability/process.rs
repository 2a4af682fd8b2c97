//! The process's own figures, under the names every Prometheus client gives them, read from
//! `/proc/self` (Linux; elsewhere the files are missing and the metrics absent):
//! `process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_open_fds`,
//! `process_max_fds`, `process_threads`.

use metrics::{Gauge, gauge};

/// The unit of the CPU times in `/proc/<pid>/stat`: USER_HZ, 100 on every Linux architecture
/// cms builds for (Prometheus' own procfs reader assumes the same).
const TICKS_PER_SECOND: f64 = 100.0;

pub(super) struct ProcessMetrics {
    /// A gauge (the `metrics` crate counts in integers), but it only grows: `rate()` it.
    cpu_seconds: Gauge,
    resident_bytes: Gauge,
    open_fds: Gauge,
    max_fds: Gauge,
    threads: Gauge,
}

impl ProcessMetrics {
    pub(super) fn new() -> ProcessMetrics {
        ProcessMetrics {
            cpu_seconds: gauge!("process_cpu_seconds_total"),
            resident_bytes: gauge!("process_resident_memory_bytes"),
            open_fds: gauge!("process_open_fds"),
            max_fds: gauge!("process_max_fds"),
            threads: gauge!("process_threads"),
        }
    }

    /// Reads the files again; a file that cannot be read leaves its metrics as they were.
    /// The resident memory read, in bytes.
    pub(super) fn sample(&self) -> Option<u64> {
        if let Some(stat) = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|s| Stat::parse(&s))
        {
            self.cpu_seconds.set(stat.cpu_seconds);
            self.threads.set(stat.threads);
        }
        let resident = resident();
        if let Some(bytes) = resident {
            self.set_resident(bytes);
        }
        if let Some(max) = std::fs::read_to_string("/proc/self/limits")
            .ok()
            .and_then(|s| max_open_files(&s))
        {
            self.max_fds.set(max);
        }
        if let Ok(entries) = std::fs::read_dir("/proc/self/fd") {
            // Less the descriptor open on the directory while it is listed.
            let open = entries.count().saturating_sub(1);
            self.open_fds.set(open as f64);
        }
        resident
    }

    /// The resident memory, as read elsewhere (after a trim).
    pub(super) fn set_resident(&self, bytes: u64) {
        self.resident_bytes.set(bytes as f64);
    }
}

struct Stat {
    cpu_seconds: f64,
    threads: f64,
}

impl Stat {
    /// `pid (comm) state ppid ...`: the command may hold spaces and parentheses, so the fields
    /// are counted from the last `)`. utime and stime are fields 14 and 15, num_threads 20.
    fn parse(text: &str) -> Option<Stat> {
        let (_, rest) = text.rsplit_once(')')?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let field = |n: usize| fields.get(n - 3)?.parse::<f64>().ok();
        Some(Stat {
            cpu_seconds: (field(14)? + field(15)?) / TICKS_PER_SECOND,
            threads: field(20)?,
        })
    }
}

/// The process's resident memory now, in bytes.
pub(super) fn resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    resident_bytes(&status).map(|bytes| bytes as u64)
}

/// `VmRSS:   12345 kB` of `/proc/self/status`, in bytes (in kB there, whatever the page size).
fn resident_bytes(status: &str) -> Option<f64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// The soft limit of `Max open files` in `/proc/self/limits` (`unlimited` is no figure).
fn max_open_files(limits: &str) -> Option<f64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cpu_times_from_stat_past_an_awkward_command() {
        let line = "4242 (cms (a) b) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 9 0 \
                    100 1000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        let stat = Stat::parse(line).expect("parses");
        assert_eq!(stat.cpu_seconds, 3.25);
        assert_eq!(stat.threads, 9.0);
    }

    #[test]
    fn reads_resident_memory_and_the_file_limit() {
        let status = "Name:\tcms\nVmPeak:\t  999 kB\nVmRSS:\t   2048 kB\nThreads:\t9\n";
        assert_eq!(resident_bytes(status), Some(2048.0 * 1024.0));
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max cpu time              unlimited            unlimited            seconds   \n\
                      Max open files            20000                1048576              files     \n";
        assert_eq!(max_open_files(limits), Some(20000.0));
    }

    #[test]
    fn this_process_has_figures() {
        if !std::path::Path::new("/proc/self/stat").exists() {
            return;
        }
        let stat = Stat::parse(&std::fs::read_to_string("/proc/self/stat").unwrap()).unwrap();
        assert!(stat.cpu_seconds >= 0.0 && stat.threads >= 1.0);
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        assert!(resident_bytes(&status).is_some_and(|b| b > 1024.0 * 1024.0));
    }
}
