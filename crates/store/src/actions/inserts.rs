//! The actions REST requests take, inserted together when they come in a stream (SQLite).
//!
//! Every command an operator sends is inserted before it is published, on the request's path.
//! On SQLite, one insert a statement costs a commit each (its WAL frames: the table's page and
//! one page of each of its indexes) and two thread hand-offs (to the connection's thread and
//! back). A command that comes alone is inserted at once, on a connection lent without the
//! pool's ping (`crate::statements`). While commands come less than `BUSY` apart, they are
//! handed to a task that lets them gather for `LINGER` and writes them as one statement. SQLite
//! writes one at a time whatever the number of connections, so this costs no concurrency; a
//! command in a stream waits a millisecond or two more. PostgreSQL inserts each at once (a
//! server serves writers at once). docs/performance.md, "Commands in flight".

use super::{NewAction, insert};
use crate::Result;
use crate::statements::Statements;
use sqlx::AnyConnection;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Inserts written in one statement at most (11 parameters each, far below SQLite's limit).
const MAX: usize = 64;
/// Commands that come closer together than this are a stream worth gathering.
const BUSY: Duration = Duration::from_millis(5);
/// How long a stream's inserts gather before they are written.
const LINGER: Duration = Duration::from_millis(1);

/// The queue of the inserts gathering, and when the last came.
pub(crate) struct ActionInserts {
    queue: OnceLock<mpsc::UnboundedSender<Job>>,
    /// When the last insert came, in microseconds since `epoch`.
    last_came: AtomicU64,
    epoch: std::time::Instant,
}

impl Default for ActionInserts {
    fn default() -> Self {
        ActionInserts {
            queue: OnceLock::new(),
            last_came: AtomicU64::new(0),
            epoch: std::time::Instant::now(),
        }
    }
}

struct Job {
    new: NewAction,
    done: oneshot::Sender<Result<Option<String>>>,
}

impl ActionInserts {
    /// Inserts `new` for its charger's live session: that session, or `None` when the charger
    /// is not connected (nothing kept).
    pub(crate) async fn insert(
        &self,
        statements: &Statements,
        new: &NewAction,
    ) -> Result<Option<String>> {
        let now = self.epoch.elapsed().as_micros() as u64;
        let previous = self.last_came.swap(now, Ordering::Relaxed);
        if now.saturating_sub(previous) >= BUSY.as_micros() as u64 {
            return insert_alone(statements, new).await;
        }
        let queue = self.queue.get_or_init(|| {
            let (queue, jobs) = mpsc::unbounded_channel();
            tokio::spawn(write(statements.clone(), jobs));
            queue
        });
        let (done, inserted) = oneshot::channel();
        let job = Job {
            new: new.clone(),
            done,
        };
        if queue.send(job).is_ok()
            && let Ok(inserted) = inserted.await
        {
            return inserted;
        }
        // The writer is gone (its runtime was shut down under a store that outlived it).
        insert_alone(statements, new).await
    }
}

/// Inserts `new` for its charger's live session, on a connection of its own.
pub(crate) async fn insert_alone(
    statements: &Statements,
    new: &NewAction,
) -> Result<Option<String>> {
    let mut db = statements.lend().await?;
    let inserted = insert(db.connection(), new, None).await;
    db.ended(&inserted);
    inserted
}

/// Writes the inserts handed over, gathered, until every store that hands them is dropped.
async fn write(statements: Statements, mut jobs: mpsc::UnboundedReceiver<Job>) {
    let mut texts = Texts::default();
    let mut batch: Vec<Job> = Vec::with_capacity(MAX);
    while let Some(first) = jobs.recv().await {
        tokio::time::sleep(LINGER).await;
        batch.push(first);
        while batch.len() < MAX
            && let Ok(job) = jobs.try_recv()
        {
            batch.push(job);
        }
        // A request that went away before its insert was written takes nothing with it.
        batch.retain(|job| !job.done.is_closed());
        match batch.len() {
            0 => continue,
            1 => {
                let job = batch.pop().expect("one job");
                let _ = job.done.send(insert_alone(&statements, &job.new).await);
                continue;
            }
            _ => {}
        }
        let written = match statements.lend().await {
            Ok(mut db) => {
                let written = insert_many(db.connection(), &mut texts, &batch).await;
                db.ended(&written);
                written
            }
            Err(e) => Err(e.into()),
        };
        match written {
            Ok(kept) => {
                let sessions = sessions_of(kept, &batch);
                for (job, session) in batch.drain(..).zip(sessions) {
                    let _ = job.done.send(Ok(session));
                }
            }
            Err(e) => {
                // Each insert again on its own, for its own answer.
                tracing::warn!(error = %e, inserts = batch.len(), "inserting actions together failed");
                for job in batch.drain(..) {
                    let _ = job.done.send(insert_alone(&statements, &job.new).await);
                }
            }
        }
    }
}

/// The session each job of the batch was kept for, from the rows kept: each row answers the
/// first job with its uuid (a second action under one uuid is not kept: `ON CONFLICT DO
/// NOTHING`).
fn sessions_of(kept: Vec<(String, String)>, batch: &[Job]) -> Vec<Option<String>> {
    let mut sessions: Vec<Option<String>> = vec![None; batch.len()];
    for (uuid, session) in kept {
        let first = (0..batch.len()).find(|&i| sessions[i].is_none() && batch[i].new.uuid == uuid);
        if let Some(i) = first {
            sessions[i] = Some(session);
        }
    }
    sessions
}

/// The statement's text for each number of inserts, made once.
#[derive(Default)]
struct Texts(Vec<String>);

impl Texts {
    fn for_rows(&mut self, rows: usize) -> &str {
        while self.0.len() < rows {
            self.0.push(insert_statement(self.0.len() + 1));
        }
        &self.0[rows - 1]
    }
}

/// Inserts `rows` actions, each kept only while its charger is connected (for the session it is
/// connected with), in one statement: the uuid and session of each kept. Its parameters are
/// anonymous, bound in order: SQLite finds a numbered one by walking the list of names, which
/// makes binding quadratic in their number (docs/decisions.md).
fn insert_statement(rows: usize) -> String {
    let values = vec!["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"; rows];
    // The values' columns: 1 uuid, 2 charger id, 3 action, 4 request, 5 requested_by_type,
    // 6 requested_by_email, 7 timeout_ms, 8 created_at, 9 expires_at, 10 published_at,
    // 11 ocpp_version.
    format!(
        "INSERT INTO charger_actions (uuid, charger_id, session, action, request, status,
           requested_by_type, requested_by_email, timeout_ms, created_at, expires_at,
           published_at, updated_at, ocpp_version)
         SELECT v.column1, c.id, c.session, v.column3, v.column4, 'pending', v.column5,
           v.column6, v.column7, v.column8, v.column9, v.column10, v.column8, v.column11
         FROM (VALUES {}) AS v JOIN chargers c ON c.id = v.column2
         WHERE c.connection_status = 'online' AND c.session IS NOT NULL
         ON CONFLICT (uuid) DO NOTHING
         RETURNING uuid, session",
        values.join(", ")
    )
}

async fn insert_many(
    db: &mut AnyConnection,
    texts: &mut Texts,
    batch: &[Job],
) -> Result<Vec<(String, String)>> {
    let mut query = sqlx::query_as(texts.for_rows(batch.len()));
    for Job { new, .. } in batch {
        query = query
            .bind(&new.uuid)
            .bind(new.charger_id)
            .bind(&new.action)
            .bind(&new.request)
            .bind(&new.requested_by_type)
            .bind(&new.requested_by_email)
            .bind(new.timeout_ms)
            .bind(&new.created_at)
            .bind(&new.expires_at)
            .bind(new.published.then_some(&new.created_at))
            .bind(&new.ocpp_version);
    }
    Ok(query.fetch_all(db).await?)
}
