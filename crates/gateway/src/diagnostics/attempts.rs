//! A charger's last connection attempts at this gateway, refused ones with the reason, keyed by
//! the identity it gave (an unknown identity has no charger behind it). Bounded in attempts per
//! identity and in identities: past the bound the identities not tried lately go first, so a
//! flood of made-up identities costs a bounded amount and pushes out only quiet ones.

use chrono::{DateTime, Utc};
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Attempts kept per identity.
pub const PER_IDENTITY: usize = 20;

/// Why cms turned a connection away: the names `GET .../connection-attempts` gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusedBecause {
    UnknownIdentity,
    WrongPassword,
    NoPassword,
    TlsRequired,
    NoCertificate,
    CertificateSubject,
    NoSubprotocol,
    Takeover,
    Capacity,
}

impl RefusedBecause {
    pub fn as_str(self) -> &'static str {
        match self {
            RefusedBecause::UnknownIdentity => "unknown_identity",
            RefusedBecause::WrongPassword => "wrong_password",
            RefusedBecause::NoPassword => "no_password",
            RefusedBecause::TlsRequired => "tls_required",
            RefusedBecause::NoCertificate => "no_certificate",
            RefusedBecause::CertificateSubject => "certificate_subject",
            RefusedBecause::NoSubprotocol => "no_subprotocol",
            RefusedBecause::Takeover => "takeover",
            RefusedBecause::Capacity => "capacity",
        }
    }
}

/// One attempt: when, from where, and `None` when it was let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub at: DateTime<Utc>,
    pub peer: String,
    pub refused: Option<RefusedBecause>,
}

/// The attempts of at most about `2 × generation` identities: two generations of maps, the
/// older dropped whole when the newer fills (cheaper than keeping an order of use).
pub struct Attempts {
    generations: Mutex<[HashMap<String, VecDeque<Attempt>>; 2]>,
    generation: usize,
}

impl Attempts {
    pub fn new(generation: usize) -> Attempts {
        Attempts {
            generations: Mutex::default(),
            generation: generation.max(1),
        }
    }

    pub fn record(&self, identity: &str, attempt: Attempt) {
        let mut maps = self.generations.lock().unwrap_or_else(|e| e.into_inner());
        let [newer, older] = &mut *maps;
        let mut list = match newer.remove(identity) {
            Some(list) => list,
            None => older.remove(identity).unwrap_or_default(),
        };
        if list.len() >= PER_IDENTITY {
            list.pop_front();
        }
        // In the order they came: one filed late (a refusal, after its answer went) goes
        // before those that came after it.
        let place = list
            .iter()
            .rposition(|a| a.at <= attempt.at)
            .map_or(0, |i| i + 1);
        list.insert(place, attempt);
        if newer.len() >= self.generation {
            *older = std::mem::take(newer);
        }
        newer.insert(identity.to_string(), list);
    }

    /// The identity's attempts, newest first.
    pub fn of(&self, identity: &str) -> Vec<Attempt> {
        let maps = self.generations.lock().unwrap_or_else(|e| e.into_inner());
        let list = maps[0].get(identity).or_else(|| maps[1].get(identity));
        list.map(|l| l.iter().rev().cloned().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(peer: &str, refused: Option<RefusedBecause>) -> Attempt {
        Attempt {
            at: Utc::now(),
            peer: peer.into(),
            refused,
        }
    }

    #[test]
    fn the_last_twenty_attempts_of_an_identity_are_kept_newest_first() {
        let attempts = Attempts::new(10);
        for i in 0..25 {
            attempts.record("CP-1", attempt(&format!("p{i}"), None));
        }
        attempts.record("CP-1", attempt("last", Some(RefusedBecause::WrongPassword)));
        let kept = attempts.of("CP-1");
        assert_eq!(kept.len(), PER_IDENTITY);
        assert_eq!(kept[0].peer, "last");
        assert_eq!(kept[1].peer, "p24");
        assert!(attempts.of("CP-2").is_empty());
    }

    #[test]
    fn an_attempt_filed_late_is_listed_by_when_it_came() {
        let attempts = Attempts::new(10);
        let came = Utc::now();
        let wrong = Attempt {
            at: came,
            ..attempt("wrong", Some(RefusedBecause::WrongPassword))
        };
        let right = Attempt {
            at: came + chrono::Duration::milliseconds(5),
            ..attempt("right", None)
        };
        // The refusal is filed after the next attempt, which came after it.
        attempts.record("CP-1", right);
        attempts.record("CP-1", wrong);
        let kept: Vec<String> = attempts.of("CP-1").into_iter().map(|a| a.peer).collect();
        assert_eq!(kept, ["right", "wrong"]);
    }

    #[test]
    fn a_flood_of_identities_pushes_out_the_quiet_ones_not_the_recent() {
        let attempts = Attempts::new(2);
        attempts.record("quiet", attempt("a", None));
        attempts.record("busy", attempt("a", None));
        for i in 0..4 {
            attempts.record(&format!("made-up-{i}"), attempt("x", None));
            attempts.record("busy", attempt("a", None));
        }
        assert!(attempts.of("quiet").is_empty());
        assert_eq!(attempts.of("busy").len(), 5);
    }
}
