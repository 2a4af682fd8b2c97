//! Where the store's statements outside transactions run: on SQLite, a few connections lent
//! without sqlx's ping; on PostgreSQL, the pool.
//!
//! sqlx's pool tests every connection it takes back (`return_to_pool` pings it, in a task of
//! its own; no option turns that off). A SQLite connection is a thread of this process, so each
//! statement run on the pool cost a second trip to that thread and back, and a task: on a REST
//! read or a background poll, about as much as the statement itself (docs/performance.md,
//! "Commands in flight", where the same was measured on the actions' insert). These
//! connections are taken from the pool once (so opened like its others, with its pragmas) and
//! given back to a list of their own. A statement whose future is dropped midway leaves its
//! connection usable: the connection's thread finishes or resets the statement by itself and
//! the next queues behind it. One that fails is not given back (it may be broken); the next
//! statement opens another. Transactions stay on the pool, as PostgreSQL does for everything.
//! The same connections are lent whole for a few statements in turn (`Statements::lend`: the
//! actions' inserts, a read before a transaction).

use crate::Backend;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use futures_util::{StreamExt, TryStreamExt};
use sqlx::any::{AnyQueryResult, AnyRow, AnyStatement, AnyTypeInfo};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Describe, Either, Error, Execute, Executor};
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// SQLite connections lent at once at most: reads run side by side in WAL mode, writes one at
/// a time whatever their number.
const CONNECTIONS: usize = 4;

/// The executor of a store's statements outside transactions (`Store::db`).
#[derive(Clone)]
pub struct Statements {
    backend: Backend,
    pool: AnyPool,
    lent: Arc<Lender>,
}

struct Lender {
    idle: Mutex<Vec<AnyConnection>>,
    permits: Arc<Semaphore>,
}

/// A connection lent for a statement or a few in turn; back to its list when dropped.
pub(crate) struct Lent(Lending);

enum Lending {
    Held {
        connection: Option<AnyConnection>,
        lender: Arc<Lender>,
        broken: bool,
        _permit: OwnedSemaphorePermit,
    },
    Pooled(PoolConnection<Any>),
}

impl Statements {
    pub(crate) fn new(backend: Backend, pool: AnyPool) -> Self {
        Statements {
            backend,
            pool,
            lent: Arc::new(Lender {
                idle: Mutex::new(Vec::new()),
                permits: Arc::new(Semaphore::new(CONNECTIONS)),
            }),
        }
    }

    /// A connection for statements outside a transaction: one of the held ones (SQLite), or
    /// the pool's (PostgreSQL).
    pub(crate) async fn lend(&self) -> Result<Lent, Error> {
        if self.backend == Backend::Postgres {
            return Ok(Lent(Lending::Pooled(self.pool.acquire().await?)));
        }
        let permit = Arc::clone(&self.lent.permits)
            .acquire_owned()
            .await
            .map_err(|_| Error::PoolClosed)?;
        let idle = self
            .lent
            .idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let connection = match idle {
            Some(connection) => connection,
            None => self.pool.acquire().await?.detach(),
        };
        Ok(Lent(Lending::Held {
            connection: Some(connection),
            lender: Arc::clone(&self.lent),
            broken: false,
            _permit: permit,
        }))
    }
}

impl Lent {
    pub(crate) fn connection(&mut self) -> &mut AnyConnection {
        match &mut self.0 {
            Lending::Held { connection, .. } => connection.as_mut().expect("lent until dropped"),
            Lending::Pooled(pooled) => pooled,
        }
    }

    /// Takes note of how a statement ended: a connection whose statement failed is not lent
    /// again.
    pub(crate) fn ended<T, E>(&mut self, done: &std::result::Result<T, E>) {
        if let (Lending::Held { broken, .. }, Err(_)) = (&mut self.0, done) {
            *broken = true;
        }
    }
}

impl Drop for Lending {
    fn drop(&mut self) {
        if let Lending::Held {
            connection,
            lender,
            broken: false,
            ..
        } = self
            && let Some(connection) = connection.take()
        {
            lender
                .idle
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(connection);
        }
    }
}

impl std::fmt::Debug for Statements {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Statements")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl<'c> Executor<'c> for &'c Statements {
    type Database = Any;

    fn fetch_many<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxStream<'e, Result<Either<AnyQueryResult, AnyRow>, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        // The whole result is read before the connection goes back: the store's statements
        // return pages and single rows, never an unbounded stream.
        futures_util::stream::once(async move {
            let mut lent = self.lend().await?;
            let steps: Result<Vec<_>, Error> =
                lent.connection().fetch_many(query).try_collect().await;
            lent.ended(&steps);
            steps
        })
        .map_ok(|steps| futures_util::stream::iter(steps.into_iter().map(Ok)))
        .try_flatten()
        .boxed()
    }

    fn fetch_optional<'e, 'q: 'e, E>(self, query: E) -> BoxFuture<'e, Result<Option<AnyRow>, Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        Box::pin(async move {
            let mut lent = self.lend().await?;
            let row = lent.connection().fetch_optional(query).await;
            lent.ended(&row);
            row
        })
    }

    fn prepare_with<'e, 'q: 'e>(
        self,
        sql: &'q str,
        parameters: &'e [AnyTypeInfo],
    ) -> BoxFuture<'e, Result<AnyStatement<'q>, Error>>
    where
        'c: 'e,
    {
        Box::pin(async move {
            let mut lent = self.lend().await?;
            let prepared = lent.connection().prepare_with(sql, parameters).await;
            lent.ended(&prepared);
            prepared
        })
    }

    fn describe<'e, 'q: 'e>(self, sql: &'q str) -> BoxFuture<'e, Result<Describe<Any>, Error>>
    where
        'c: 'e,
    {
        Box::pin(async move {
            let mut lent = self.lend().await?;
            let described = lent.connection().describe(sql).await;
            lent.ended(&described);
            described
        })
    }
}
