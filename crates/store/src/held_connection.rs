//! A SQLite connection held out of the pool for a hot statement.
//!
//! sqlx's pool sends every connection it lends back through a ping (`return_to_pool`, with no
//! option to turn it off): one more trip to the connection's thread and back, and a task, for
//! each statement run outside a transaction. On the path of every command a REST request takes
//! (the action's insert) that was a third of the store's context switches and about a tenth of
//! the command's CPU (docs/performance.md, "Commands in flight"). The connection held here is
//! lent under a lock instead and never pinged. SQLite writes one at a time whatever the pool's
//! size, so one connection for the statement costs no concurrency. On PostgreSQL (a server
//! that serves writers at once) the pool keeps lending.

use crate::{Backend, Result};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool};
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{MappedMutexGuard, Mutex, MutexGuard};

/// One connection, taken from the pool (so opened like its others) on first use.
#[derive(Clone, Default)]
pub(crate) struct HeldConnection {
    held: Arc<Mutex<Option<AnyConnection>>>,
    /// Set by a failed statement: the connection may be broken, the next use takes another.
    suspect: Arc<AtomicBool>,
}

/// A connection lent for a statement: the held one (SQLite) or the pool's (PostgreSQL).
pub(crate) enum Lent<'a> {
    Held(MappedMutexGuard<'a, AnyConnection>),
    Pooled(PoolConnection<Any>),
}

impl HeldConnection {
    /// The connection for a statement, once the statements before it have ended. Dropping the
    /// statement's future midway is safe: the connection's thread finishes or resets the
    /// statement by itself, and the next one queues behind it.
    pub(crate) async fn lend(&self, backend: Backend, pool: &AnyPool) -> Result<Lent<'_>> {
        if backend == Backend::Postgres {
            return Ok(Lent::Pooled(pool.acquire().await?));
        }
        let mut held = self.held.lock().await;
        if held.is_none() || self.suspect.swap(false, Ordering::AcqRel) {
            *held = Some(pool.acquire().await?.detach());
        }
        match MutexGuard::try_map(held, Option::as_mut) {
            Ok(lent) => Ok(Lent::Held(lent)),
            // Not reached (one was just put there); the pool's would do.
            Err(_) => Ok(Lent::Pooled(pool.acquire().await?)),
        }
    }

    /// Takes note of how a statement on the lent connection ended.
    pub(crate) fn ended<T>(&self, done: &Result<T>) {
        if done.is_err() {
            self.suspect.store(true, Ordering::Release);
        }
    }
}

impl Deref for Lent<'_> {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        match self {
            Lent::Held(held) => held,
            Lent::Pooled(pooled) => pooled,
        }
    }
}

impl DerefMut for Lent<'_> {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        match self {
            Lent::Held(held) => held,
            Lent::Pooled(pooled) => pooled,
        }
    }
}
