//! The share of current each charging connector gets: pure arithmetic, no I/O.
//!
//! The connectors are put in order (priority first under the `priority` strategy; then the
//! ones served now, then the paused ones by how long they waited, then the new ones by
//! arrival), and admitted in that order while each can have at least the minimum (a paused or
//! new one with a margin to spare). The admitted share the available current: `equal` fills
//! them to one level (each capped at its maximum, what one cannot take goes to the others);
//! `priority` gives everyone the minimum, then fills the highest priority to its maximum
//! before the next. The rest are paused (0 A).

use std::cmp::Ordering;

/// Where a connector stands before the allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Standing {
    /// Has current now: keeps its place before the others.
    Served,
    /// Paused since this time (record time): the longest paused gets current first.
    Paused,
    /// Just started charging (no limit sent yet).
    New,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    Equal,
    Priority,
}

impl Strategy {
    pub fn parse(s: &str) -> Strategy {
        match s {
            "priority" => Strategy::Priority,
            _ => Strategy::Equal,
        }
    }
}

/// One connector asking for current.
#[derive(Debug, Clone, PartialEq)]
pub struct Demand {
    /// Higher first under the `priority` strategy.
    pub priority: i64,
    pub standing: Standing,
    /// Since when it stands so (record time): the order among equals.
    pub since: String,
    /// The most its connector takes, per phase.
    pub max_amps: f64,
    /// What it needs to spare beyond its minimum to be admitted (a paused or new one: so that
    /// a site on the edge does not pause and resume it every round).
    pub margin: f64,
}

/// OCPP carries limits with one decimal: allocations are cut down to tenths, never rounded
/// up past what is available.
fn tenths_down(amps: f64) -> f64 {
    ((amps * 10.0) + 1e-9).floor() / 10.0
}

/// The order in which connectors are admitted.
fn order(strategy: Strategy, demands: &[Demand]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..demands.len()).collect();
    order.sort_by(|&a, &b| {
        let (a_, b_) = (&demands[a], &demands[b]);
        let by_priority = match strategy {
            Strategy::Priority => b_.priority.cmp(&a_.priority),
            Strategy::Equal => Ordering::Equal,
        };
        by_priority
            .then(a_.standing.cmp(&b_.standing))
            .then(a_.since.cmp(&b_.since))
            .then(a.cmp(&b))
    });
    order
}

/// Each demand's allocation in amps (0: paused), in the order of `demands`; their sum never
/// exceeds `available`.
pub fn allocate(available: f64, min_amps: f64, strategy: Strategy, demands: &[Demand]) -> Vec<f64> {
    let mut shares = vec![0.0; demands.len()];
    let available = if available.is_finite() {
        available.max(0.0)
    } else {
        0.0
    };
    // Admission: everyone admitted can have at least the minimum (or its maximum, if lower).
    let mut admitted = Vec::new();
    let mut committed = 0.0;
    for i in order(strategy, demands) {
        let floor = min_amps.min(demands[i].max_amps);
        if floor <= 0.0 || committed + floor + demands[i].margin > available + 1e-9 {
            continue;
        }
        committed += floor;
        shares[i] = floor;
        admitted.push(i);
    }
    let mut rest = available - committed;
    match strategy {
        Strategy::Equal => fill_level(&mut shares, &admitted, demands, &mut rest),
        Strategy::Priority => {
            // Admitted are in priority order; fill each priority group in turn.
            let mut start = 0;
            while start < admitted.len() {
                let priority = demands[admitted[start]].priority;
                let end = admitted[start..]
                    .iter()
                    .position(|&i| demands[i].priority != priority)
                    .map_or(admitted.len(), |n| start + n);
                fill_level(&mut shares, &admitted[start..end], demands, &mut rest);
                start = end;
            }
        }
    }
    for share in &mut shares {
        *share = tenths_down(*share);
    }
    shares
}

/// Raises the shares of `group` toward one common level with what is left in `rest`, each
/// at most its maximum (water filling).
fn fill_level(shares: &mut [f64], group: &[usize], demands: &[Demand], rest: &mut f64) {
    let mut open: Vec<usize> = group
        .iter()
        .copied()
        .filter(|&i| shares[i] < demands[i].max_amps)
        .collect();
    while *rest > 1e-9 && !open.is_empty() {
        // The level the open ones would reach sharing what is left with what they have.
        let held: f64 = open.iter().map(|&i| shares[i]).sum();
        let level = (held + *rest) / open.len() as f64;
        let capped: Vec<usize> = open
            .iter()
            .copied()
            .filter(|&i| demands[i].max_amps <= level)
            .collect();
        if capped.is_empty() {
            // Everyone below the level is raised to it (those above it keep theirs, which
            // only happens when their minimum exceeded it: not under one minimum for all).
            let below: Vec<usize> = open
                .iter()
                .copied()
                .filter(|&i| shares[i] < level)
                .collect();
            let below_held: f64 = below.iter().map(|&i| shares[i]).sum();
            let level = (below_held + *rest) / below.len().max(1) as f64;
            for &i in &below {
                *rest -= level - shares[i];
                shares[i] = level;
            }
            *rest = rest.max(0.0);
            return;
        }
        for &i in &capped {
            *rest -= demands[i].max_amps - shares[i];
            shares[i] = demands[i].max_amps;
        }
        open.retain(|i| !capped.contains(i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demand(standing: Standing, since: &str, max_amps: f64) -> Demand {
        Demand {
            priority: 0,
            standing,
            since: since.into(),
            max_amps,
            margin: 0.0,
        }
    }

    fn sum(shares: &[f64]) -> f64 {
        shares.iter().sum()
    }

    #[test]
    fn equal_shares_when_everyone_fits() {
        let demands = vec![demand(Standing::New, "a", 32.0); 4];
        let shares = allocate(76.0, 6.0, Strategy::Equal, &demands);
        assert_eq!(shares, vec![19.0; 4]);
    }

    #[test]
    fn a_connector_capped_at_its_maximum_leaves_the_rest_to_the_others() {
        let demands = vec![
            demand(Standing::Served, "a", 10.0),
            demand(Standing::Served, "b", 32.0),
            demand(Standing::Served, "c", 32.0),
        ];
        let shares = allocate(60.0, 6.0, Strategy::Equal, &demands);
        assert_eq!(shares, vec![10.0, 25.0, 25.0]);
        let shares = allocate(200.0, 6.0, Strategy::Equal, &demands);
        assert_eq!(shares, vec![10.0, 32.0, 32.0], "never above a maximum");
    }

    #[test]
    fn too_little_for_everyone_pauses_the_last_in_order_and_keeps_the_minimum() {
        let mut demands = vec![demand(Standing::Served, "2026", 32.0); 6];
        demands.extend(vec![demand(Standing::New, "2027", 32.0); 4]);
        let shares = allocate(41.0, 6.0, Strategy::Equal, &demands);
        let served: Vec<f64> = shares.iter().copied().filter(|&s| s > 0.0).collect();
        assert_eq!(served.len(), 6, "{shares:?}");
        assert!(served.iter().all(|&s| s >= 6.0 && (s - 6.8).abs() < 0.05));
        assert!(shares[6..].iter().all(|&s| s == 0.0), "new ones wait");
        assert!(sum(&shares) <= 41.0);
    }

    #[test]
    fn a_paused_connector_gets_current_before_a_new_one_and_the_longest_paused_first() {
        let demands = vec![
            demand(Standing::New, "2026-01-01T00:00:00", 32.0),
            demand(Standing::Paused, "2026-01-01T00:00:09", 32.0),
            demand(Standing::Paused, "2026-01-01T00:00:05", 32.0),
        ];
        let shares = allocate(13.0, 6.0, Strategy::Equal, &demands);
        assert_eq!(shares, vec![0.0, 6.5, 6.5]);
        let shares = allocate(7.0, 6.0, Strategy::Equal, &demands);
        assert_eq!(shares, vec![0.0, 0.0, 7.0]);
    }

    #[test]
    fn a_paused_connector_comes_back_only_with_a_margin_to_spare() {
        let mut paused = demand(Standing::Paused, "a", 32.0);
        paused.margin = 1.0;
        let served = demand(Standing::Served, "b", 32.0);
        let demands = [served, paused];
        assert_eq!(
            allocate(12.5, 6.0, Strategy::Equal, &demands),
            vec![12.5, 0.0]
        );
        assert_eq!(
            allocate(13.0, 6.0, Strategy::Equal, &demands),
            vec![6.5, 6.5]
        );
    }

    #[test]
    fn priority_fills_the_higher_priority_first_above_everyone_s_minimum() {
        let mut high = demand(Standing::Served, "a", 32.0);
        high.priority = 5;
        let low = demand(Standing::Served, "b", 32.0);
        let shares = allocate(40.0, 6.0, Strategy::Priority, &[low.clone(), high.clone()]);
        assert_eq!(shares, vec![8.0, 32.0]);
        // Room for one only: the higher priority takes it, even from one served now.
        let shares = allocate(10.0, 6.0, Strategy::Priority, &[low, high]);
        assert_eq!(shares, vec![0.0, 10.0]);
    }

    #[test]
    fn nothing_available_pauses_everyone_and_nonsense_is_nothing() {
        let demands = vec![demand(Standing::Served, "a", 32.0); 3];
        assert_eq!(allocate(5.9, 6.0, Strategy::Equal, &demands), vec![0.0; 3]);
        assert_eq!(
            allocate(-20.0, 6.0, Strategy::Equal, &demands),
            vec![0.0; 3]
        );
        assert_eq!(
            allocate(f64::NAN, 6.0, Strategy::Equal, &demands),
            vec![0.0; 3]
        );
    }

    #[test]
    fn shares_are_cut_to_tenths_and_never_sum_above_what_is_available() {
        let demands = vec![demand(Standing::Served, "a", 32.0); 3];
        let shares = allocate(20.0, 6.0, Strategy::Equal, &demands);
        assert_eq!(shares, vec![6.6; 3]);
        assert!(sum(&shares) <= 20.0);
    }
}
