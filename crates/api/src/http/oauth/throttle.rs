//! The login limiter: it counts wrong passwords within [`ThrottlePolicy::window`] three ways,
//! and past a count's limit refuses further logins it covers until the oldest of those failures
//! is a window old, without checking the password (no hash is computed):
//!
//! - per account (its e-mail, case-insensitive) and client address together
//!   ([`ThrottlePolicy::per_pair`]): someone guessing one account from one place;
//! - per account from every address ([`ThrottlePolicy::per_account`], looser): guessing spread
//!   over many addresses;
//! - per address over every account ([`ThrottlePolicy::per_address`]): one place trying many
//!   accounts.
//!
//! So wrong passwords for an account from one address lock that address out of it, not its
//! owner logging in from elsewhere; only guesses from many addresses at once lock the account
//! out everywhere, and then that is the bound that keeps them few.
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
    /// Failures allowed within a window for one account from one address.
    pub per_pair: usize,
    /// ... for one account from all addresses.
    pub per_account: usize,
    /// ... from one address for all accounts.
    pub per_address: usize,
    pub window: Duration,
    /// Keys (pairs, accounts and addresses) kept at most.
    pub max_keys: usize,
}

impl ThrottlePolicy {
    /// A minute's window: 5 failures per account and address, 50 per account, 20 per address;
    /// 100,000 keys (a few MiB).
    pub const DEFAULT: ThrottlePolicy = ThrottlePolicy {
        per_pair: 5,
        per_account: 50,
        per_address: 20,
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
        let account = email.trim().to_lowercase();
        let policy = &self.policy;
        let keys = [
            Key {
                hash: self.seed.hash_one(("pair", &account, address)),
                limit: policy.per_pair,
            },
            Key {
                hash: self.seed.hash_one(("account", &account)),
                limit: policy.per_account,
            },
            Key {
                hash: self.seed.hash_one(("address", address)),
                limit: policy.per_address,
            },
        ];
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if now.saturating_duration_since(state.last_sweep) >= policy.window {
            self.sweep(&mut state, now);
        }
        let wait = keys
            .iter()
            .filter_map(|key| {
                let record = state.records.get_mut(&key.hash)?;
                record.locked(key.limit, policy.window, now)
            })
            .max();
        if let Some(retry_after) = wait {
            return Err(Locked { retry_after });
        }
        let new_keys = keys
            .iter()
            .filter(|key| !state.records.contains_key(&key.hash))
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
            state.records.entry(key.hash).or_default().in_flight += 1;
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

    fn settle(&self, keys: [Key; 3], failed_at: Option<Instant>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        for key in keys {
            let Some(record) = state.records.get_mut(&key.hash) else {
                continue;
            };
            record.in_flight = record.in_flight.saturating_sub(1);
            if let Some(at) = failed_at {
                record.failures.push_back(at);
                while record.failures.len() > key.limit {
                    record.failures.pop_front();
                }
            }
            if record.is_empty() {
                state.records.remove(&key.hash);
            }
        }
    }
}

/// One count an attempt falls under: its keyed hash, and its limit.
#[derive(Debug, Clone, Copy)]
struct Key {
    hash: u64,
    limit: usize,
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

    /// How long until another login may start, past `limit` failures a `window`; `None` when
    /// one may now.
    fn locked(&mut self, limit: usize, window: Duration, now: Instant) -> Option<Duration> {
        self.forget_before(now, window);
        if self.failures.len() + self.in_flight < limit {
            return None;
        }
        // Full of failures: until the oldest leaves the window. Else logins in progress hold
        // the remaining places: they settle within a second or so.
        Some(match self.failures.len() >= limit {
            true => window - now.saturating_duration_since(self.failures[0]),
            false => Duration::from_secs(1),
        })
    }
}

/// A login under way: settle it with [`LoginAttempt::failed`]; dropped otherwise (a success,
/// or a request that ended early), it leaves no trace.
pub struct LoginAttempt<'a> {
    throttle: &'a LoginThrottle,
    keys: [Key; 3],
    settled: bool,
}

impl LoginAttempt<'_> {
    /// The password was wrong: counts a failure at `now` for the pair, the account and the
    /// address.
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
    fn five_failures_from_one_address_lock_it_out_of_the_account_for_a_minute() {
        let throttle = throttle();
        let start = Instant::now();
        for _ in 0..5 {
            fail(&throttle, "u@example.com", "192.0.2.1", start);
        }
        let later = start + Duration::from_secs(20);
        let locked = throttle
            .begin("U@Example.COM ", "192.0.2.1", later)
            .err()
            .expect("locked, whatever the case of the e-mail");
        assert_eq!(locked.retry_after, Duration::from_secs(40));
        assert_eq!(locked.retry_after_secs(), 40);
        assert!(
            throttle
                .begin("other@example.com", "192.0.2.1", later)
                .is_ok()
        );
        assert!(
            throttle
                .begin("u@example.com", "192.0.2.1", start + MINUTE)
                .is_ok()
        );
    }

    #[test]
    fn fifty_failures_from_many_addresses_lock_the_account_everywhere() {
        let throttle = throttle();
        let start = Instant::now();
        for n in 0..50 {
            fail(&throttle, "u@example.com", &format!("192.0.2.{n}"), start);
        }
        let later = start + Duration::from_secs(30);
        let locked = throttle.begin("u@example.com", "198.51.100.1", later);
        assert_eq!(locked.err().unwrap().retry_after, Duration::from_secs(30));
        assert!(
            throttle
                .begin("other@example.com", "198.51.100.1", later)
                .is_ok()
        );
    }

    #[test]
    fn wrong_passwords_from_one_address_do_not_lock_the_account_out_from_another() {
        let throttle = throttle();
        let start = Instant::now();
        for _ in 0..5 {
            fail(&throttle, "u@example.com", "192.0.2.1", start);
        }
        assert!(
            throttle.begin("u@example.com", "192.0.2.1", start).is_err(),
            "the guessing address is locked out of the account"
        );
        assert!(
            throttle
                .begin("u@example.com", "198.51.100.7", start)
                .is_ok(),
            "its owner still logs in from elsewhere"
        );
    }

    #[test]
    fn twenty_failures_from_one_address_lock_it_for_every_account() {
        let throttle = throttle();
        let start = Instant::now();
        for n in 0..20 {
            let at = start + Duration::from_secs(n);
            fail(&throttle, &format!("user{n}@example.com"), "192.0.2.1", at);
        }
        let locked = throttle.begin(
            "new@example.com",
            "192.0.2.1",
            start + Duration::from_secs(20),
        );
        assert_eq!(locked.err().unwrap().retry_after, Duration::from_secs(40));
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
            max_keys: 9,
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
        assert_eq!(throttle.len(), 9, "three keys an attempt");
        let full = throttle.begin("new@example.com", "192.0.2.9", start);
        assert_eq!(full.err().unwrap().retry_after, MINUTE);
        assert_eq!(throttle.len(), 9);
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
