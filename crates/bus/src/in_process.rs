//! The in-process bus of `cms up`: bounded queues per consumer group, so a slow consumer slows
//! the publishers (backpressure) instead of growing memory without limit.

use crate::{
    BoxFuture, Bus, BusError, Delivered, Message, Publisher, Publishing, Record, Subscriber,
};
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

#[derive(Debug, Clone)]
pub struct InProcessConfig {
    /// Partitions per topic: records of one key always go to the same partition.
    pub partitions: i32,
    /// Records a consumer group may have waiting before publishers wait for it.
    pub queue_capacity: usize,
}

impl Default for InProcessConfig {
    fn default() -> Self {
        InProcessConfig {
            partitions: 8,
            queue_capacity: 65_536,
        }
    }
}

/// A bus inside one process. Records published before a group subscribes are not replayed to
/// it; records published while a group lags wait in its bounded queue.
#[derive(Clone)]
pub struct InProcessBus {
    inner: Arc<Inner>,
}

struct Inner {
    partitions: i32,
    queue_capacity: usize,
    /// Next offset per topic and partition.
    offsets: HashMap<String, Vec<AtomicI64>>,
    groups: RwLock<Groups>,
}

#[derive(Default)]
struct Groups {
    closed: bool,
    /// Shared with the publishes under way: a publish takes the list by one reference count,
    /// not a vector of its own; a subscription (rare) makes a new list.
    subscribed: Arc<Vec<GroupQueue>>,
}

#[derive(Clone)]
struct GroupQueue {
    topics: Vec<String>,
    tx: mpsc::Sender<Message>,
    /// Publishes waiting for room in this queue. While there are any, a new publish waits
    /// behind them instead of taking room that just freed, so that a record published after
    /// one that waits does not overtake it.
    waiting: Arc<AtomicUsize>,
}

impl InProcessBus {
    /// A bus with these topics (as Kafka topics are created at start).
    pub fn new(config: InProcessConfig, topics: &[&str]) -> Self {
        let partitions = config.partitions.max(1);
        let offsets = topics
            .iter()
            .map(|t| {
                let counters = (0..partitions).map(|_| AtomicI64::new(0)).collect();
                (t.to_string(), counters)
            })
            .collect();
        InProcessBus {
            inner: Arc::new(Inner {
                partitions,
                queue_capacity: config.queue_capacity.max(1),
                offsets,
                groups: RwLock::new(Groups::default()),
            }),
        }
    }
}

/// The partition of a key: a stable hash, so a key keeps its partition for the process's life.
fn partition_of(key: &[u8], partitions: i32) -> i32 {
    let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(key);
    (hash % partitions as u64) as i32
}

impl Publisher for InProcessBus {
    /// Hands the record to every queue that has room now, with no future of its own; only a full
    /// queue (a consumer that lags) makes the rest wait, in a boxed future.
    fn publish(&self, record: Record) -> Publishing {
        let inner = &self.inner;
        let Some(counters) = inner.offsets.get(record.topic.as_ref()) else {
            return Publishing::done(Err(BusError::UnknownTopic(record.topic.into_owned())));
        };
        let partition = partition_of(&record.key, inner.partitions);
        let offset = counters[partition as usize].fetch_add(1, Ordering::Relaxed);
        let delivered = Delivered { partition, offset };
        let subscribed = {
            let groups = inner.groups.read().unwrap_or_else(|e| e.into_inner());
            if groups.closed {
                return Publishing::done(Err(BusError::Closed));
            }
            groups.subscribed.clone()
        };
        // The topic apart from the record, which moves into the message below (a clone of a
        // borrowed `'static` name, as publishers give it, copies nothing).
        let topic = record.topic.clone();
        let mut queues =
            (0..subscribed.len()).filter(|&i| subscribed[i].topics.iter().any(|t| *t == topic));
        let message = Message {
            record,
            partition,
            offset,
        };
        let mut next = queues.next();
        while let Some(at) = next {
            next = queues.next();
            if subscribed[at].waiting.load(Ordering::Acquire) > 0 {
                let rest = std::iter::once(at).chain(next).chain(queues).collect();
                return wait_for_room(subscribed, rest, message, delivered);
            }
            if next.is_none() {
                // The last group gets the record itself, so the usual single group copies
                // nothing.
                return match subscribed[at].tx.try_send(message) {
                    Ok(()) => Publishing::done(Ok(delivered)),
                    Err(TrySendError::Closed(_)) => Publishing::done(Err(BusError::Closed)),
                    Err(TrySendError::Full(message)) => {
                        wait_for_room(subscribed, vec![at], message, delivered)
                    }
                };
            }
            match subscribed[at].tx.try_send(message.clone()) {
                Ok(()) => {}
                Err(TrySendError::Closed(_)) => return Publishing::done(Err(BusError::Closed)),
                Err(TrySendError::Full(_)) => {
                    let rest = std::iter::once(at).chain(next).chain(queues).collect();
                    return wait_for_room(subscribed, rest, message, delivered);
                }
            }
        }
        // No group reads this topic.
        Publishing::done(Ok(delivered))
    }
}

/// Sends the message to these queues in turn, each as soon as it has room: this is where a slow
/// consumer pushes back. The last queue gets the message itself. Counted as waiting in each
/// queue from now until it is sent there, or dropped.
fn wait_for_room(
    subscribed: Arc<Vec<GroupQueue>>,
    queues: Vec<usize>,
    message: Message,
    delivered: Delivered,
) -> Publishing {
    let mut waiting: Vec<Waiting> = queues
        .iter()
        .map(|&at| Waiting::new(&subscribed[at].waiting))
        .collect();
    Publishing::waiting(async move {
        let Some((&last, first)) = queues.split_last() else {
            return Ok(delivered);
        };
        // Each queue's count drops as the message goes in, in the order of `queues`.
        waiting.reverse();
        for &at in first {
            let copy = message.clone();
            let sent = subscribed[at].tx.send(copy).await;
            waiting.pop();
            sent.map_err(|_| BusError::Closed)?;
        }
        let sent = subscribed[last].tx.send(message).await;
        drop(waiting);
        sent.map(|()| delivered).map_err(|_| BusError::Closed)
    })
}

impl Bus for InProcessBus {
    fn subscribe(&self, _group: &str, topics: &[&str]) -> Result<Box<dyn Subscriber>, BusError> {
        for topic in topics {
            if !self.inner.offsets.contains_key(*topic) {
                return Err(BusError::UnknownTopic(topic.to_string()));
            }
        }
        let (tx, rx) = mpsc::channel(self.inner.queue_capacity);
        let mut groups = self.inner.groups.write().unwrap_or_else(|e| e.into_inner());
        if groups.closed {
            return Err(BusError::Closed);
        }
        let mut subscribed: Vec<GroupQueue> = groups.subscribed.iter().cloned().collect();
        subscribed.push(GroupQueue {
            topics: topics.iter().map(|t| t.to_string()).collect(),
            tx,
            waiting: Arc::default(),
        });
        groups.subscribed = Arc::new(subscribed);
        Ok(Box::new(InProcessSubscriber {
            rx,
            depth: metrics::gauge!("cms_bus_queue_depth"),
        }))
    }

    /// A queue of its own, like a group's: it gets every record published from now on.
    fn follow<'a>(
        &'a self,
        topics: &'a [&'a str],
    ) -> BoxFuture<'a, Result<Box<dyn Subscriber>, BusError>> {
        Box::pin(std::future::ready(self.subscribe("", topics)))
    }

    fn close(&self) {
        let mut groups = self.inner.groups.write().unwrap_or_else(|e| e.into_inner());
        groups.closed = true;
        // Dropping the senders lets each subscriber drain its queue and then see the end.
        groups.subscribed = Arc::default();
    }
}

struct InProcessSubscriber {
    rx: mpsc::Receiver<Message>,
    depth: metrics::Gauge,
}

impl Subscriber for InProcessSubscriber {
    fn next_batch<'a>(
        &'a mut self,
        out: &'a mut Vec<Message>,
        max: usize,
    ) -> BoxFuture<'a, Result<usize, BusError>> {
        Box::pin(async move {
            let n = self.rx.recv_many(out, max.max(1)).await;
            self.depth.set(self.rx.len() as f64);
            Ok(n)
        })
    }

    fn commit(&mut self, _message: &Message) -> Result<(), BusError> {
        // Nothing to remember: an in-process queue does not outlive the process.
        Ok(())
    }
}

/// One publish waiting for room in one queue, counted while it lives.
struct Waiting(Arc<AtomicUsize>);

impl Waiting {
    fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::AcqRel);
        Waiting(count.clone())
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests;
