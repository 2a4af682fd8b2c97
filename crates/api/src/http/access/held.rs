//! What the access cache holds of one kind (tokens, charger access, ...), bounded. Past its
//! capacity it forgets a tenth of its entries in one go, the least recently used of whoever
//! holds the most: one user asking for 100,000 random uuids forgets only their own entries,
//! never everyone else's (before, the whole map was emptied).

use dashmap::DashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

pub(super) struct Held<K, V> {
    entries: DashMap<K, Entry<V>>,
    capacity: usize,
    /// Ticks on every use: an entry's `used` is the tick of its latest.
    clock: AtomicU64,
    /// One eviction at a time; the others go on meanwhile (a few entries past the capacity).
    evicting: Mutex<()>,
    /// The `kind` label of the cache's metrics.
    kind: &'static str,
}

struct Entry<V> {
    value: V,
    /// Whose it is: the user whose access (or token) it holds.
    user: i64,
    used: AtomicU64,
}

impl<K: Eq + Hash + Clone, V: Clone> Held<K, V> {
    pub fn new(kind: &'static str, capacity: usize) -> Self {
        metrics::counter!("cms_api_access_cache_misses_total", "kind" => kind).absolute(0);
        metrics::counter!("cms_api_access_cache_evictions_total", "kind" => kind).absolute(0);
        Held {
            entries: DashMap::new(),
            capacity: capacity.max(1),
            clock: AtomicU64::new(0),
            evicting: Mutex::new(()),
            kind,
        }
    }

    /// The value held under `key`, marked used now.
    pub fn get(&self, key: &K) -> Option<V> {
        let entry = self.entries.get(key)?;
        entry.used.store(self.tick(), Ordering::Relaxed);
        Some(entry.value.clone())
    }

    /// Holds `value` as `user`'s, making room first when full.
    pub fn insert(&self, key: K, user: i64, value: V) {
        if self.entries.len() >= self.capacity {
            self.evict();
        }
        let used = AtomicU64::new(self.tick());
        self.entries.insert(key, Entry { value, user, used });
    }

    /// Counts a look-up that found nothing it could use (the store is asked instead).
    pub fn missed(&self) {
        metrics::counter!("cms_api_access_cache_misses_total", "kind" => self.kind).increment(1);
    }

    pub fn remove(&self, key: &K) {
        self.entries.remove(key);
    }

    pub fn retain(&self, mut keep: impl FnMut(&K, i64, &V) -> bool) {
        self.entries
            .retain(|key, entry| keep(key, entry.user, &entry.value));
    }

    pub fn clear(&self) {
        self.entries.clear();
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::Relaxed)
    }

    /// Forgets a tenth of the capacity: each time the least recently used entry of the user
    /// who holds the most then (the least recently used of all among equals). So the users who
    /// hold the most lose entries down to a common share, and the others keep all of theirs.
    fn evict(&self) {
        let Ok(_one_at_a_time) = self.evicting.try_lock() else {
            return;
        };
        let excess = self.entries.len().saturating_sub(self.capacity);
        let needed = excess + self.capacity.div_ceil(10);
        // Each user's entries, least recently used first.
        let mut by_user: std::collections::HashMap<i64, Vec<(u64, K)>> = Default::default();
        for entry in self.entries.iter() {
            let used = entry.used.load(Ordering::Relaxed);
            by_user
                .entry(entry.user)
                .or_default()
                .push((used, entry.key().clone()));
        }
        // An entry goes while its user holds the most: ranked by how many its user still holds
        // when its turn comes (the most first), then by its last use (the oldest first).
        let mut ranked: Vec<(usize, u64, K)> = Vec::with_capacity(self.entries.len());
        for mut entries in by_user.into_values() {
            entries.sort_unstable_by_key(|(used, _)| *used);
            let held = entries.len();
            for (i, (used, key)) in entries.into_iter().enumerate() {
                ranked.push((held - i, used, key));
            }
        }
        ranked.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut evicted = 0u64;
        for (_, _, key) in ranked.into_iter().take(needed) {
            if self.entries.remove(&key).is_some() {
                evicted += 1;
            }
        }
        metrics::counter!("cms_api_access_cache_evictions_total", "kind" => self.kind)
            .increment(evicted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_one_user_evicts_only_their_own_least_used_entries() {
        let held = Held::new("test", 100);
        for n in 0..10 {
            held.insert(format!("victim-{n}"), 1, n);
        }
        for n in 0..50 {
            held.insert(format!("neighbour-{n}"), 2, n);
        }
        for n in 0..10_000 {
            held.insert(format!("flood-{n}"), 3, n);
            // The neighbour keeps using one of theirs.
            if n % 100 == 0 {
                assert_eq!(held.get(&"neighbour-0".to_string()), Some(0));
            }
        }
        assert!(held.len() <= 100, "{} held", held.len());
        for n in 0..10 {
            assert_eq!(held.get(&format!("victim-{n}")), Some(n), "victim-{n}");
        }
        // The second biggest holder shares the room with the flood, keeping what it used last.
        assert_eq!(held.get(&"neighbour-0".to_string()), Some(0));
        assert_eq!(held.get(&"flood-9999".to_string()), Some(9999));
        assert_eq!(held.get(&"flood-0".to_string()), None);
    }

    #[test]
    fn among_equals_the_least_recently_used_go_first() {
        let held = Held::new("test", 10);
        for user in 0..10 {
            held.insert(user, user, user);
        }
        // Users 0 to 4 come back; 5 to 9 do not.
        for user in 0..5 {
            held.get(&user);
        }
        held.insert(10, 10, 10);
        assert_eq!(held.len(), 10, "one entry made room for one");
        assert_eq!(held.get(&5), None, "the least recently used went");
        for user in (0..5).chain(6..11) {
            assert_eq!(held.get(&user), Some(user), "user {user}");
        }
    }
}
