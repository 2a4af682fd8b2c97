//! Gives the heap's free pages back to the system after a burst of short-lived allocations.
//!
//! A fleet that boots at once (each charger's boot, statuses and configuration read: records,
//! reports, store statements, all freed a moment later) fills glibc's arenas among the
//! connections' long-lived allocations. glibc returns by itself only the free room at the top
//! of an arena, so most of the rest stays resident: 1.2 to 1.5 KiB per charger at 19,000
//! (docs/performance.md, "Frame path"). `malloc_trim(0)` returns every whole free page of
//! every arena. It walks the arenas under their locks, so it runs only once the resident
//! memory grew by [`GROWTH`] since the last trim, and once more an upkeep later (a burst goes
//! on freeing after the memory stopped growing), on the upkeep thread: measured 2 to 10 ms at
//! 19,000 chargers, every 5 s at most.

use metrics::{Counter, Histogram, counter, histogram};
use std::time::Instant;

/// Whether this allocator can be trimmed (glibc's): elsewhere nothing is done or counted.
const TRIMS: bool = cfg!(all(target_os = "linux", target_env = "gnu"));

/// How much the resident memory grows before a trim is worth its walk.
const GROWTH: u64 = 8 << 20;

pub(super) struct HeapTrim {
    /// The resident memory after the last trim, or the lowest seen since.
    mark: u64,
    /// A trim for growth was made: trim once more at the next upkeep.
    settle: bool,
    trims: Counter,
    seconds: Histogram,
}

impl HeapTrim {
    pub(super) fn new(resident: u64) -> HeapTrim {
        HeapTrim {
            mark: resident,
            settle: false,
            trims: counter!("cms_heap_trims_total"),
            seconds: histogram!("cms_heap_trim_seconds"),
        }
    }

    /// Trims when `resident` (bytes) is `GROWTH` above the mark, or the last upkeep trimmed
    /// for growth; returns the resident memory after, read again (`resident` when nothing was
    /// done).
    pub(super) fn after_growth(
        &mut self,
        resident: u64,
        read_again: impl Fn() -> Option<u64>,
    ) -> u64 {
        if !TRIMS {
            return resident;
        }
        let grew = resident >= self.mark.saturating_add(GROWTH);
        if !grew && !std::mem::take(&mut self.settle) {
            self.mark = self.mark.min(resident);
            return resident;
        }
        self.settle = grew;
        let started = Instant::now();
        trim();
        self.seconds.record(started.elapsed());
        self.trims.increment(1);
        let after = read_again().unwrap_or(resident);
        tracing::debug!(
            before = resident,
            after,
            micros = started.elapsed().as_micros() as u64,
            "heap trimmed"
        );
        self.mark = after;
        after
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn trim() {
    // SAFETY: malloc_trim takes no pointer and only touches the allocator's own state, under
    // its locks; any thread may call it at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Elsewhere (musl, other systems) the allocator returns memory by its own rules.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn trims_only_past_the_growth_and_counts_from_the_lowest_mark() {
        let mut heap = HeapTrim::new(100 << 20);
        // Below the growth: nothing done, the figure given back as it was.
        assert_eq!(
            heap.after_growth((100 << 20) + GROWTH - 1, || Some(0)),
            (100 << 20) + GROWTH - 1
        );
        // Shrinking lowers the mark, so growth is counted from there.
        assert_eq!(heap.after_growth(90 << 20, || Some(0)), 90 << 20);
        assert_eq!(
            heap.after_growth((90 << 20) + GROWTH, || Some(95 << 20)),
            95 << 20
        );
        // Once more at the next upkeep, grown or not; then the mark is what was read after.
        assert_eq!(heap.after_growth(96 << 20, || Some(94 << 20)), 94 << 20);
        assert_eq!(
            heap.after_growth((94 << 20) + GROWTH - 1, || Some(0)),
            (94 << 20) + GROWTH - 1
        );
    }
}
