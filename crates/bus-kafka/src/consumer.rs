//! The consumers: a group member that commits only what it is told to, and a group-less replay
//! of a whole (compacted) topic that knows when it has caught up.

use crate::catch_up;
use crate::context::LagContext;
use crate::watermarks::watermarks;
use crate::{KafkaConfig, client_config, failed};
use bytes::Bytes;
use cms_bus::{BoxFuture, BusError, CaughtUp, Header, Message, Record, Subscriber};
use futures_util::{FutureExt as _, StreamExt as _};
use rdkafka::consumer::{CommitMode, Consumer as _, ConsumerContext, StreamConsumer};
use rdkafka::message::{BorrowedMessage, Headers as _, Message as _};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::watch;

/// Settings of both consumers.
pub(crate) fn consumer_config(config: &KafkaConfig) -> ClientConfig {
    let mut client = client_config(config);
    client
        // Offsets move only through `Subscriber::commit`, after the records were applied.
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("auto.offset.reset", "earliest")
        // How long a fetch may wait for data. Kafka answers as soon as data arrives, but tansu
        // sleeps through about half of it on every fetch, so it bounds tansu's latency.
        .set("fetch.wait.max.ms", "100");
    client
}

/// How often librdkafka reports a group member's statistics, from which
/// `cms_kafka_consumer_lag` is set.
const LAG_INTERVAL: &str = "5000";

/// A member of a consumer group.
pub(crate) struct GroupSubscriber {
    consumer: Arc<StreamConsumer<LagContext>>,
    closed: watch::Receiver<bool>,
    topics: Vec<&'static str>,
    /// Set by a task of its own (crate::catch_up) once the member has caught up.
    caught_up: CaughtUp,
}

impl GroupSubscriber {
    pub(crate) fn start(
        config: &KafkaConfig,
        group: &str,
        topics: &[&str],
        closed: watch::Receiver<bool>,
    ) -> Result<GroupSubscriber, BusError> {
        let consumer: StreamConsumer<LagContext> = consumer_config(config)
            .set("group.id", group)
            // librdkafka's defaults (45 s session, 5 min poll interval) make a group join take
            // ~23 s on tansu; these make it ~3 s and notice a dead member within 6 s. The cost:
            // a batch must be handled within 7 s or the member is evicted.
            .set("session.timeout.ms", "6000")
            .set("heartbeat.interval.ms", "2000")
            .set("max.poll.interval.ms", "7000")
            // Statistics (for the lag gauge) come as an event on the consumer's queue, handled
            // while the stream is polled: a JSON parse every few seconds, nothing per message.
            .set("statistics.interval.ms", LAG_INTERVAL)
            .create_with_context(LagContext::default())
            .map_err(|e| failed("consumer", e))?;
        consumer
            .subscribe(topics)
            .map_err(|e| failed("subscribe", e))?;
        let consumer = Arc::new(consumer);
        let caught_up = CaughtUp::not_yet();
        tokio::spawn(catch_up::watch(
            Arc::downgrade(&consumer),
            topics.iter().map(|t| t.to_string()).collect(),
            caught_up.clone(),
            closed.clone(),
        ));
        Ok(GroupSubscriber {
            consumer,
            closed,
            topics: topics.iter().map(|t| intern(t)).collect(),
            caught_up,
        })
    }
}

impl Subscriber for GroupSubscriber {
    fn next_batch<'a>(
        &'a mut self,
        out: &'a mut Vec<Message>,
        max: usize,
    ) -> BoxFuture<'a, Result<usize, BusError>> {
        Box::pin(read_batch(
            &*self.consumer,
            &mut self.closed,
            &self.topics,
            out,
            max,
        ))
    }

    /// Commits `message.offset + 1` of its partition, asynchronously (a lost commit only means
    /// the next member re-reads a few records).
    fn commit(&mut self, message: &Message) -> Result<(), BusError> {
        let mut offsets = TopicPartitionList::with_capacity(1);
        offsets
            .add_partition_offset(
                &message.record.topic,
                message.partition,
                Offset::Offset(message.offset + 1),
            )
            .map_err(|e| failed("commit", e))?;
        self.consumer
            .commit(&offsets, CommitMode::Async)
            .map_err(|e| failed("commit", e))
    }

    fn caught_up(&self) -> CaughtUp {
        self.caught_up.clone()
    }
}

/// A read of one topic from its beginning, outside any group: every partition assigned, nothing
/// committed. It keeps following the topic after catching up.
pub struct Replay {
    consumer: StreamConsumer,
    closed: watch::Receiver<bool>,
    topic: [&'static str; 1],
    /// Per partition: the high watermark when the replay started, and the next offset to read.
    progress: Vec<(i64, i64)>,
    /// Partitions whose next offset is still below their start-time high watermark.
    behind: usize,
    /// Set once `behind` reaches 0: every record that was in the topic at start handed out.
    caught_up: CaughtUp,
}

impl Replay {
    pub(crate) async fn start(
        config: &KafkaConfig,
        topic: &str,
        closed: watch::Receiver<bool>,
    ) -> Result<Replay, BusError> {
        let consumer: StreamConsumer = consumer_config(config)
            // librdkafka's consumer refuses `assign` without a group id. The group is never
            // joined (no `subscribe`) and nothing is committed to it.
            .set("group.id", format!("{}-replay", config.client_id))
            .create()
            .map_err(|e| failed("consumer", e))?;
        let name = topic.to_owned();
        // Metadata and watermarks are blocking requests: off the runtime's workers.
        let (consumer, progress) = tokio::task::spawn_blocking(move || -> Result<_, BusError> {
            let progress = watermarks(&consumer, &name)?;
            let mut assignment = TopicPartitionList::with_capacity(progress.len());
            for partition in 0..progress.len() as i32 {
                assignment
                    .add_partition_offset(&name, partition, Offset::Beginning)
                    .map_err(|e| failed("assign", e))?;
            }
            consumer
                .assign(&assignment)
                .map_err(|e| failed("assign", e))?;
            Ok((consumer, progress))
        })
        .await
        .map_err(|e| failed("replay", e))??;
        let behind = progress.iter().filter(|(high, next)| next < high).count();
        Ok(Replay {
            consumer,
            closed,
            topic: [intern(topic)],
            progress,
            behind,
            caught_up: match behind {
                0 => CaughtUp::already(),
                _ => CaughtUp::not_yet(),
            },
        })
    }
}

impl Subscriber for Replay {
    fn next_batch<'a>(
        &'a mut self,
        out: &'a mut Vec<Message>,
        max: usize,
    ) -> BoxFuture<'a, Result<usize, BusError>> {
        Box::pin(async move {
            let start = out.len();
            let n = read_batch(&self.consumer, &mut self.closed, &self.topic, out, max).await?;
            for message in &out[start..] {
                let Some((high, next)) = self.progress.get_mut(message.partition as usize) else {
                    continue;
                };
                let was_behind = *next < *high;
                *next = (*next).max(message.offset + 1);
                if was_behind && *next >= *high {
                    self.behind -= 1;
                    if self.behind == 0 {
                        self.caught_up.set();
                    }
                }
            }
            Ok(n)
        })
    }

    /// Nothing to commit: a replay always starts from the beginning.
    fn commit(&mut self, _message: &Message) -> Result<(), BusError> {
        Ok(())
    }

    /// Once every record that was in the topic when the replay started has been handed out.
    fn caught_up(&self) -> CaughtUp {
        self.caught_up.clone()
    }
}

/// Waits for one message (or the bus closing), then takes what is already fetched, up to `max`.
pub(crate) async fn read_batch<C: ConsumerContext + 'static>(
    consumer: &StreamConsumer<C>,
    closed: &mut watch::Receiver<bool>,
    topics: &[&'static str],
    out: &mut Vec<Message>,
    max: usize,
) -> Result<usize, BusError> {
    let mut stream = consumer.stream();
    let first = loop {
        tokio::select! {
            _ = until_closed(closed) => return Ok(0),
            next = stream.next() => match next {
                Some(Ok(message)) => break message,
                Some(Err(error)) => consumer_error(error)?,
                None => return Ok(0),
            },
        }
    };
    let start = out.len();
    out.push(owned(&first, topics));
    drop(first);
    while out.len() - start < max.max(1) {
        match stream.next().now_or_never() {
            Some(Some(Ok(message))) => out.push(owned(&message, topics)),
            Some(Some(Err(error))) => {
                consumer_error(error)?;
                break;
            }
            Some(None) | None => break,
        }
    }
    Ok(out.len() - start)
}

/// Resolves once the bus is closed. A bus dropped without `close` leaves its subscribers running.
async fn until_closed(closed: &mut watch::Receiver<bool>) {
    if closed.wait_for(|closed| *closed).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Consumer errors are mostly transient (a broker away, a topic not yet created) and librdkafka
/// recovers from them by itself: log and keep reading. Only a fatal error ends the subscriber.
fn consumer_error(error: rdkafka::error::KafkaError) -> Result<(), BusError> {
    if let rdkafka::error::KafkaError::MessageConsumptionFatal(_) = error {
        return Err(failed("consume", error));
    }
    tracing::warn!(%error, "kafka consumer error");
    Ok(())
}

fn owned(message: &BorrowedMessage<'_>, topics: &[&'static str]) -> Message {
    let topic = match topics.iter().find(|t| **t == message.topic()) {
        Some(topic) => Cow::Borrowed(*topic),
        None => Cow::Owned(message.topic().to_owned()),
    };
    let headers = message
        .headers()
        .map(|headers| {
            headers
                .iter()
                .map(|h| Header {
                    name: Cow::Owned(h.key.to_owned()),
                    value: h.value.map(Bytes::copy_from_slice).unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default();
    Message {
        record: Record {
            topic,
            key: message
                .key()
                .map(Bytes::copy_from_slice)
                .unwrap_or_default(),
            headers,
            value: message
                .payload()
                .map(Bytes::copy_from_slice)
                .unwrap_or_default(),
        },
        partition: message.partition(),
        offset: message.offset(),
    }
}

/// A `'static` copy of a topic name, made once per name for the process: consumed messages then
/// carry their topic without an allocation each.
pub(crate) fn intern(topic: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    match names.get(topic) {
        Some(name) => name,
        None => {
            let name: &'static str = Box::leak(topic.to_owned().into_boxed_str());
            names.insert(name);
            name
        }
    }
}
