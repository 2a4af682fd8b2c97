//! The login limiter: after [`ThrottlePolicy::failures`] wrong passwords within
//! [`ThrottlePolicy::window`] for one account (its e-mail, case-insensitive) or from one client
//! address, further logins of that account or address are refused until the oldest of those
//! failures is a window old, without checking the password (no hash is computed).
//!
//! A login in progress counts as a failure until it is settled, so that a burst of concurrent
//! guesses cannot all pass the check before the first one fails. A success does not clear the
//! count: the owner of one account could otherwise reset its address's count between guesses
//! at another.
//!
//! In memory, per API process: each replica counts on its own (the store's per-request limit,
//! `MAX_FAILED_LOGINS_PER_REQUEST`, holds across them). Keys are keyed hashes of the e-mail and
//! address, so an entry has a fixed size whatever a client sends; entries expire a window after
//! their last failure and their number is capped ([`ThrottlePolicy::max_keys`]). Since only a
//! checked password records a failure, and checks run one per core at a time, the live entries
//! stay far below the cap in practice.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The limiter's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrottlePolicy {
    /// Failures allowed per key within a window.
    pub failures: usize,
    pub window: Duration,
    /// Keys (accounts and addresses) kept at most.
    pub max_keys: usize,
}

impl ThrottlePolicy {
    /// 5 failures a minute, 100,000 keys (a few MiB).
    pub const DEFAULT: ThrottlePolicy = ThrottlePolicy {
        failures: 5,
        window: Duration::from_secs(60),
        max_keys: 100_000,
    };
}

/// A refused login: when to try again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many failed logins; retry after {retry_after:?}")]
pub struct Locked {
    pub retry_after: Duration,
}

impl Locked {
    /// For a `Retry-After` header: whole seconds, rounded up, at least 1.
    pub fn retry_after_secs(&self) -> u64 {
        let secs = self.retry_after.as_secs() + u64::from(self.retry_after.subsec_nanos() > 0);
        secs.max(1)
    }
}

pub struct LoginThrottle {
    policy: ThrottlePolicy,
    /// Keys the hashes, so that nobody can choose e-mails that collide.
    seed: RandomState,
    state: Mutex<Keys>,
}

struct Keys {
    records: HashMap<u64, Record>,
    last_sweep: Instant,
}

#[derive(Default)]
struct Record {
    /// The latest failures within the window, oldest first (at most `policy.failures`).
    failures: VecDeque<Instant>,
    in_flight: usize,
}

impl LoginThrottle {
    pub fn new(policy: ThrottlePolicy) -> LoginThrottle {
        LoginThrottle {
            policy,
            seed: RandomState::new(),
            state: Mutex::new(Keys {
                records: HashMap::new(),
                last_sweep: Instant::now(),
            }),
        }
    }

    /// Starts a login of `email` from `address` at `now`, or refuses it.
    pub fn begin(
        &self,
        email: &str,
        address: &str,
        now: Instant,
    ) -> Result<LoginAttempt<'_>, Locked> {
        let keys = [
            self.seed.hash_one(("account", email.trim().to_lowercase())),
            self.seed.hash_one(("address", address)),
        ];
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if now.saturating_duration_since(state.last_sweep) >= self.policy.window {
            self.sweep(&mut state, now);
        }
        let wait = keys
            .iter()
            .filter_map(|key| state.records.get_mut(key)?.locked(&self.policy, now))
            .max();
        if let Some(retry_after) = wait {
            return Err(Locked { retry_after });
        }
        let new_keys = keys
            .iter()
            .filter(|key| !state.records.contains_key(key))
            .count();
        if state.records.len() + new_keys > self.policy.max_keys {
            self.sweep(&mut state, now);
            if state.records.len() + new_keys > self.policy.max_keys {
                return Err(Locked {
                    retry_after: self.policy.window,
                });
            }
        }
        for key in keys {
            state.records.entry(key).or_default().in_flight += 1;
        }
        Ok(LoginAttempt {
            throttle: self,
            keys,
            settled: false,
        })
    }

    /// How many keys are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.state.lock().unwrap().records.len()
    }

    fn sweep(&self, state: &mut Keys, now: Instant) {
        state.last_sweep = now;
        state.records.retain(|_, record| {
            record.forget_before(now, self.policy.window);
            !record.is_empty()
        });
    }

    fn settle(&self, keys: [u64; 2], failed_at: Option<Instant>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        for key in keys {
            let Some(record) = state.records.get_mut(&key) else {
                continue;
            };
            record.in_flight = record.in_flight.saturating_sub(1);
            if let Some(at) = failed_at {
                record.failures.push_back(at);
                while record.failures.len() > self.policy.failures {
                    record.failures.pop_front();
                }
            }
            if record.is_empty() {
                state.records.remove(&key);
            }
        }
    }
}

impl Record {
    fn forget_before(&mut self, now: Instant, window: Duration) {
        while self
            .failures
            .front()
            .is_some_and(|at| now.saturating_duration_since(*at) >= window)
        {
            self.failures.pop_front();
        }
    }

    fn is_empty(&self) -> bool {
        self.failures.is_empty() && self.in_flight == 0
    }

    /// How long until another login may start; `None` when one may now.
    fn locked(&mut self, policy: &ThrottlePolicy, now: Instant) -> Option<Duration> {
        self.forget_before(now, policy.window);
        if self.failures.len() + self.in_flight < policy.failures {
            return None;
        }
        // Full of failures: until the oldest leaves the window. Else logins in progress hold
        // the remaining places: they settle within a second or so.
        Some(match self.failures.len() >= policy.failures {
            true => policy.window - now.saturating_duration_since(self.failures[0]),
            false => Duration::from_secs(1),
        })
    }
}

/// A login under way: settle it with [`LoginAttempt::failed`]; dropped otherwise (a success,
/// or a request that ended early), it leaves no trace.
pub struct LoginAttempt<'a> {
    throttle: &'a LoginThrottle,
    keys: [u64; 2],
    settled: bool,
}

impl LoginAttempt<'_> {
    /// The password was wrong: counts a failure at `now` for the account and the address.
    pub fn failed(mut self, now: Instant) {
        self.settled = true;
        self.throttle.settle(self.keys, Some(now));
    }
}

impl Drop for LoginAttempt<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.throttle.settle(self.keys, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    fn throttle() -> LoginThrottle {
        LoginThrottle::new(ThrottlePolicy::DEFAULT)
    }

    fn fail(throttle: &LoginThrottle, email: &str, address: &str, at: Instant) {
        throttle.begin(email, address, at).unwrap().failed(at);
    }

    #[test]
    fn five_failures_lock_the_account_for_a_minute() {
        let throttle = throttle();
        let start = Instant::now();
        for n in 0..5 {
            fail(&throttle, "u@example.com", &format!("192.0.2.{n}"), start);
        }
        let later = start + Duration::from_secs(20);
        let locked = throttle
            .begin("U@Example.COM ", "198.51.100.1", later)
            .err()
            .expect("locked, whatever the case of the e-mail and the address");
        assert_eq!(locked.retry_after, Duration::from_secs(40));
        assert_eq!(locked.retry_after_secs(), 40);
        assert!(
            throttle
                .begin("other@example.com", "198.51.100.1", later)
                .is_ok()
        );
        assert!(
            throttle
                .begin("u@example.com", "198.51.100.1", start + MINUTE)
                .is_ok()
        );
    }

    #[test]
    fn five_failures_from_one_address_lock_it_for_every_account() {
        let throttle = throttle();
        let start = Instant::now();
        for n in 0..5 {
            let at = start + Duration::from_secs(n);
            fail(&throttle, &format!("user{n}@example.com"), "192.0.2.1", at);
        }
        let locked = throttle.begin(
            "new@example.com",
            "192.0.2.1",
            start + Duration::from_secs(5),
        );
        assert_eq!(locked.err().unwrap().retry_after, Duration::from_secs(55));
        // The oldest failure leaves the window: one more attempt, not five.
        let later = start + MINUTE;
        fail(&throttle, "new@example.com", "192.0.2.1", later);
        assert!(
            throttle
                .begin("new2@example.com", "192.0.2.1", later)
                .is_err()
        );
    }

    #[test]
    fn logins_in_progress_count_until_they_settle() {
        let throttle = throttle();
        let now = Instant::now();
        let attempts: Vec<_> = (0..5)
            .map(|_| throttle.begin("u@example.com", "192.0.2.1", now).unwrap())
            .collect();
        let sixth = throttle.begin("u@example.com", "192.0.2.1", now);
        assert_eq!(sixth.err().unwrap().retry_after_secs(), 1);
        // Successes (dropped attempts) leave nothing behind.
        drop(attempts);
        assert_eq!(throttle.len(), 0);
        assert!(throttle.begin("u@example.com", "192.0.2.1", now).is_ok());
    }

    #[test]
    fn the_limiter_forgets_old_failures_and_keeps_a_bounded_number_of_keys() {
        let throttle = LoginThrottle::new(ThrottlePolicy {
            max_keys: 6,
            ..ThrottlePolicy::DEFAULT
        });
        let start = Instant::now();
        for n in 0..3 {
            fail(
                &throttle,
                &format!("u{n}@example.com"),
                &format!("192.0.2.{n}"),
                start,
            );
        }
        assert_eq!(throttle.len(), 6);
        let full = throttle.begin("new@example.com", "192.0.2.9", start);
        assert_eq!(full.err().unwrap().retry_after, MINUTE);
        assert_eq!(throttle.len(), 6);
        // A minute on, the old entries are swept away to make room.
        let later = start + MINUTE;
        assert!(
            throttle
                .begin("new@example.com", "192.0.2.9", later)
                .is_ok()
        );
        assert_eq!(
            throttle.len(),
            0,
            "only the settled attempt's keys were there"
        );
    }
}
