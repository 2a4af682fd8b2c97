//! Authentication and the access decisions of reads, from memory (docs/api.md "Reads from
//! memory"). A token verified once is held with its owner and scopes, and each request's secret
//! is still checked against its salted hash in constant time; a user's access to a charger is
//! held once asked. Every replica reads the store's access change log (migration 0022) every
//! [`POLL`] and forgets what a change touched, so a revoked token or a removed grant is refused
//! within about that on every replica, whichever process made the change.
//!
//! A replica reads the log again before it answers a request that changed something, so a
//! change made through it is in force there when its answer arrives.
//!
//! What is held is trusted only while the log is being read: when it was last read more than
//! [`TRUSTED_FOR`] ago (the store unreachable, say), every request asks the store again, as
//! before, and once the log can be read again everything held is forgotten.
//!
//! Each kind is bounded ([`held`]): past its capacity the least recently used entries of the
//! users who hold the most are forgotten, so that no user can push everyone else's out.

mod held;

use cms_store::access_log::{
    AccessChange, ChargerAccess, SiteAccess, StoredToken, TokenKey, VisibleCharger,
};
use cms_store::{Store, StoreError, TokenOwner};
use held::Held;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How often the access change log is read.
pub const POLL: Duration = Duration::from_millis(250);
/// How long after the start of the last successful read of the log what is held is still
/// used: what a change made elsewhere may take at worst to be in force here.
pub const TRUSTED_FOR: Duration = Duration::from_secs(1);
/// Entries held at most, of each kind, unless configured otherwise.
pub const DEFAULT_CAPACITY: usize = 100_000;
/// Changes read at a time, and how many the log keeps (pruned by every replica now and then).
const BATCH: i64 = 1_000;
const KEEP: i64 = 10_000;
/// A personal access token's `last_used_at` is written at most this often per replica.
const LAST_USED_EVERY_S: i64 = cms_store::tokens::LAST_USED_PRECISION_SECONDS;

/// Every charger a user sees, in id order, and until when that holds (record time).
pub struct VisibleChargers {
    pub chargers: Vec<VisibleCharger>,
    until: Option<String>,
}

/// A verified token, and when this replica last wrote that it was used.
struct HeldToken {
    stored: StoredToken,
    noted_at: AtomicI64,
}

/// What this replica holds of who may do what.
pub struct AccessCache {
    tokens: Held<TokenKey, Arc<HeldToken>>,
    /// By (user id, charger uuid): the access, or `None` for a charger the user does not see.
    chargers: Held<(i64, Box<str>), Option<ChargerAccess>>,
    /// By (user id, site uuid), the same of sites.
    sites: Held<(i64, Box<str>), Option<SiteAccess>>,
    /// By user id: every charger they see, for the chargers lists.
    visible: Held<i64, Arc<VisibleChargers>>,
    /// Bumped before each forgetting: a look-up that read the store before it does not keep
    /// what it read (it may predate the change).
    generation: AtomicU64,
    /// Until when (ms after `origin`) what is held may be used.
    trusted_until_ms: AtomicU64,
    origin: Instant,
    /// The last change read (`None`: none yet, or the last read failed); one reader at a time.
    cursor: tokio::sync::Mutex<Option<i64>>,
}

impl Default for AccessCache {
    fn default() -> Self {
        AccessCache::new(DEFAULT_CAPACITY)
    }
}

impl AccessCache {
    /// A cache holding at most `capacity` entries of each kind.
    pub fn new(capacity: usize) -> Self {
        AccessCache {
            tokens: Held::new("token", capacity),
            chargers: Held::new("charger", capacity),
            sites: Held::new("site", capacity),
            visible: Held::new("visible", capacity),
            generation: AtomicU64::new(0),
            trusted_until_ms: AtomicU64::new(0),
            origin: Instant::now(),
            cursor: tokio::sync::Mutex::new(None),
        }
    }

    /// The owner of `bearer`, if it is a valid token: from memory when held, else from the
    /// store (and then held).
    pub async fn authenticate(
        &self,
        store: &Store,
        bearer: &str,
    ) -> Result<Option<TokenOwner>, StoreError> {
        let Some((key, secret)) = TokenKey::parse(bearer) else {
            return Ok(None);
        };
        let now = chrono::Utc::now();
        let held = self.trusted().then(|| self.tokens.get(&key)).flatten();
        let held = match held {
            Some(held) if !held.stored.expired_at(now) => held,
            _ => {
                self.tokens.missed();
                let generation = self.generation.load(Ordering::SeqCst);
                let Some(stored) = store.stored_token(&key, now).await? else {
                    return Ok(None);
                };
                let user = stored.owner.user_id;
                let held = Arc::new(HeldToken {
                    stored,
                    noted_at: AtomicI64::new(0),
                });
                self.keep(&self.tokens, key.clone(), user, held.clone(), generation);
                held
            }
        };
        if !held.stored.verifies(secret) {
            return Ok(None);
        }
        self.note_use(store, &held, now.timestamp());
        Ok(Some(held.stored.owner.clone()))
    }

    /// User `user_id`'s access to the charger `charger_uuid`, `None` when they do not see it.
    pub async fn charger(
        &self,
        store: &Store,
        user_id: i64,
        charger_uuid: &str,
    ) -> Result<Option<ChargerAccess>, StoreError> {
        // Only what could be a uuid is asked of the store and held: any other path names
        // nothing, and would let a caller fill the memory with keys of its choosing.
        if !is_uuid(charger_uuid) {
            return Ok(None);
        }
        let key = (user_id, Box::<str>::from(charger_uuid));
        let read = store.charger_access(user_id, charger_uuid);
        self.held_or_read(
            &self.chargers,
            key,
            user_id,
            |a| a.as_ref()?.until.as_deref(),
            read,
        )
        .await
    }

    /// User `user_id`'s access to the site `site_uuid`, `None` when they do not reach it.
    pub async fn site(
        &self,
        store: &Store,
        user_id: i64,
        site_uuid: &str,
    ) -> Result<Option<SiteAccess>, StoreError> {
        if !is_uuid(site_uuid) {
            return Ok(None);
        }
        let key = (user_id, Box::<str>::from(site_uuid));
        let read = store.site_access(user_id, site_uuid);
        self.held_or_read(
            &self.sites,
            key,
            user_id,
            |a| a.as_ref()?.until.as_deref(),
            read,
        )
        .await
    }

    /// Every charger user `user_id` sees, by id.
    pub async fn visible_chargers(
        &self,
        store: &Store,
        user_id: i64,
    ) -> Result<Arc<VisibleChargers>, StoreError> {
        let read = async {
            let (chargers, until) = store.visible_chargers(user_id).await?;
            Ok(Arc::new(VisibleChargers { chargers, until }))
        };
        self.held_or_read(
            &self.visible,
            user_id,
            user_id,
            |v| v.until.as_deref(),
            read,
        )
        .await
    }

    /// What `map` holds under `key` if it may be used (see [`AccessCache::held`]); else what
    /// `read` (not yet started) gives, held as `user`'s unless something was forgotten
    /// meanwhile.
    async fn held_or_read<K, V>(
        &self,
        map: &Held<K, V>,
        key: K,
        user: i64,
        until: impl Fn(&V) -> Option<&str>,
        read: impl Future<Output = Result<V, StoreError>>,
    ) -> Result<V, StoreError>
    where
        K: Eq + std::hash::Hash + Clone,
        V: Clone,
    {
        if let Some(held) = self.held(map, &key, until) {
            return Ok(held);
        }
        map.missed();
        // Read before the store is asked: what is forgotten while it answers drops the answer.
        let generation = self.generation.load(Ordering::SeqCst);
        let value = read.await?;
        self.keep(map, key, user, value.clone(), generation);
        Ok(value)
    }

    /// What `map` holds under `key`, if it may be used: the log is being read, and it has not
    /// lapsed (`until`, record time, passed).
    fn held<K, V>(&self, map: &Held<K, V>, key: &K, until: impl Fn(&V) -> Option<&str>) -> Option<V>
    where
        K: Eq + std::hash::Hash + Clone,
        V: Clone,
    {
        if !self.trusted() {
            return None;
        }
        let held = map.get(key)?;
        let lapsed = until(&held).is_some_and(|end| end <= cms_store::now_record_time().as_str());
        (!lapsed).then_some(held)
    }

    fn trusted(&self) -> bool {
        self.origin.elapsed().as_millis() as u64 <= self.trusted_until_ms.load(Ordering::Acquire)
    }

    /// Holds `value` as `user`'s unless something was forgotten since `generation` was read:
    /// then what the store said may predate the change, and is dropped again.
    fn keep<K, V>(&self, map: &Held<K, V>, key: K, user: i64, value: V, generation: u64)
    where
        K: Eq + std::hash::Hash + Clone,
        V: Clone,
    {
        map.insert(key.clone(), user, value);
        if self.generation.load(Ordering::SeqCst) != generation {
            map.remove(&key);
        }
    }

    /// A personal access token's `last_used_at`, written in the background at most once a
    /// minute per replica (the reference shows it to a minute).
    fn note_use(&self, store: &Store, held: &Arc<HeldToken>, now_s: i64) {
        if !held.stored.is_personal() {
            return;
        }
        let noted = held.noted_at.load(Ordering::Relaxed);
        if now_s - noted < LAST_USED_EVERY_S
            || held
                .noted_at
                .compare_exchange(noted, now_s, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        // The first time, the store's own record says whether it is due yet.
        let recorded = (noted == 0)
            .then(|| held.stored.last_used_at.clone())
            .flatten();
        let (store, id) = (store.clone(), held.stored.owner.token_id);
        tokio::spawn(async move { store.note_token_use(id, recorded.as_deref()).await });
    }

    /// Forgets what `changes` touched.
    fn forget(&self, changes: &[AccessChange]) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        let of = |kind: &str| -> HashSet<i64> {
            changes
                .iter()
                .filter(|c| c.kind == kind)
                .map(|c| c.subject_id)
                .collect()
        };
        for id in of("token") {
            self.tokens.remove(&TokenKey::Personal(id));
        }
        let (oauth, grants, clients, users) = (
            of("oauth_token"),
            of("oauth_grant"),
            of("oauth_client"),
            of("user"),
        );
        if !(oauth.is_empty() && grants.is_empty() && clients.is_empty() && users.is_empty()) {
            self.tokens.retain(|_, _, held| {
                let t = &held.stored;
                let oauth_token = !t.is_personal() && oauth.contains(&t.owner.token_id);
                let grant = t.auth_code_id.is_some_and(|id| grants.contains(&id));
                let client = t.client_id.is_some_and(|id| clients.contains(&id));
                !(oauth_token || grant || client || users.contains(&t.owner.user_id))
            });
        }
        if changes.iter().any(|c| c.kind == "grants") {
            self.chargers.clear();
            self.sites.clear();
            self.visible.clear();
        } else if !users.is_empty() {
            self.chargers.retain(|_, user, _| !users.contains(&user));
            self.sites.retain(|_, user, _| !users.contains(&user));
            self.visible.retain(|_, user, _| !users.contains(&user));
        }
    }

    /// Forgets everything held.
    fn forget_all(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.tokens.clear();
        self.chargers.clear();
        self.sites.clear();
        self.visible.clear();
    }

    /// Trusts what is held until `until` (after `origin`), never shortening a later trust
    /// given by a read that started after this one.
    fn trust_until(&self, until: Duration) {
        self.trusted_until_ms
            .fetch_max(until.as_millis() as u64, Ordering::AcqRel);
    }

    /// Reads the log to its end and forgets what the changes touched.
    pub async fn catch_up(&self, store: &Store) -> Result<(), StoreError> {
        let mut cursor = self.cursor.lock().await;
        // Counted from before the read: a change committed while it ran may not be in it.
        let started = self.origin.elapsed();
        match read_changes(store, self, &mut cursor).await {
            Ok(()) => {
                self.trust_until(started + TRUSTED_FOR);
                Ok(())
            }
            Err(e) => {
                // Nothing held is trusted until the log is read again; the changes missed
                // meanwhile are not known, so everything is forgotten then.
                self.trusted_until_ms.store(0, Ordering::Release);
                *cursor = None;
                Err(e)
            }
        }
    }
}

/// A uuid in its 36-character hyphenated form, as the store writes them.
fn is_uuid(text: &str) -> bool {
    text.len() == 36 && uuid::Uuid::try_parse(text).is_ok()
}

/// Reads the access change log every [`POLL`] until `stop`, forgetting what each change touched;
/// prunes the log now and then.
pub async fn follow_changes(store: Store, cache: Arc<AccessCache>, stop: CancellationToken) {
    let mut reads: u64 = 0;
    while !stop.is_cancelled() {
        if let Err(e) = cache.catch_up(&store).await {
            tracing::warn!(error = %e, "cannot read the access change log");
        }
        reads += 1;
        // About every four minutes, one replica or another keeps the log short.
        if reads.is_multiple_of(1_000)
            && let Err(e) = store.prune_access_changes(KEEP).await
        {
            tracing::warn!(error = %e, "cannot prune the access change log");
        }
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(POLL) => {}
        }
    }
}

async fn read_changes(
    store: &Store,
    cache: &AccessCache,
    cursor: &mut Option<i64>,
) -> Result<(), StoreError> {
    let Some(mut at) = *cursor else {
        // From the start, or after a failure: nothing held can be vouched for.
        let head = store.access_changes_head().await?;
        cache.forget_all();
        *cursor = Some(head);
        return Ok(());
    };
    loop {
        let changes = store.access_changes_since(at, BATCH).await?;
        let Some(last) = changes.last() else {
            break;
        };
        // A log pruned past this replica's cursor (it fell more than KEEP changes behind).
        if store
            .access_changes_tail()
            .await?
            .is_some_and(|tail| tail > at + 1)
            && changes[0].seq > at + 1
        {
            cache.forget_all();
        } else {
            cache.forget(&changes);
        }
        at = last.seq;
        *cursor = Some(at);
        if changes.len() < BATCH as usize {
            break;
        }
    }
    Ok(())
}
