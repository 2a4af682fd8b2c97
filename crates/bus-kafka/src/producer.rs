//! The producer: records enter librdkafka's queue inside `publish`; librdkafka's delivery
//! callback completes each record's oneshot. When librdkafka's queue is full, records wait in an
//! ordered backlog that a task feeds into librdkafka as room frees up. When the idempotent
//! producer can no longer continue (a fatal error, or the broker fencing its producer id) a new
//! producer, with a new producer id, replaces it.

use crate::handback::ReplyTo;
use crate::{KafkaConfig, client_config, failed};
use cms_bus::{BusError, Delivered, Record};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, Message as _, OwnedHeaders};
use rdkafka::producer::{
    BaseRecord, DeliveryResult, Producer as _, ProducerContext, ThreadedProducer,
};
use rdkafka::{ClientConfig, ClientContext, config::FromClientConfigAndContext};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, Weak};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, oneshot};

pub(crate) type Delivery = oneshot::Receiver<Result<Delivered, BusError>>;

/// Rides with a record through librdkafka and comes back in the delivery callback.
pub(crate) struct Pending {
    reply: ReplyTo,
    enqueued: Instant,
}

/// Backoff of the backlog task while librdkafka's queue stays full: short enough to refill the
/// queue before it drains, long enough not to spin.
const MIN_BACKOFF: Duration = Duration::from_millis(1);
const MAX_BACKOFF: Duration = Duration::from_millis(16);

/// State every producer generation shares.
struct Shared {
    /// Records inside librdkafka (enqueued, not yet reported); the queue-depth gauge.
    in_flight: AtomicI64,
    queue_depth: metrics::Gauge,
    latency: metrics::Histogram,
    errors: metrics::Counter,
}

/// Receives delivery reports and errors on librdkafka's polling thread.
pub(crate) struct DeliveryContext {
    shared: Arc<Shared>,
    /// This producer cannot continue (see `stuck`): it must be replaced. Per producer, so that
    /// the failures a replaced producer still reports do not condemn its successor.
    stuck: AtomicBool,
}

impl ClientContext for DeliveryContext {
    fn error(&self, error: KafkaError, reason: &str) {
        if error.rdkafka_error_code() == Some(RDKafkaErrorCode::Fatal) {
            self.stuck.store(true, Ordering::Release);
            tracing::error!(%error, reason, "kafka producer failed");
        } else {
            // Mostly a broker away: librdkafka reconnects and retries by itself.
            tracing::warn!(%error, reason, "kafka producer error");
        }
    }
}

impl ProducerContext for DeliveryContext {
    type DeliveryOpaque = Box<Pending>;

    fn delivery(&self, result: &DeliveryResult<'_>, pending: Box<Pending>) {
        let shared = &self.shared;
        let depth = shared.in_flight.fetch_sub(1, Ordering::Relaxed) - 1;
        shared.queue_depth.set(depth as f64);
        shared.latency.record(pending.enqueued.elapsed());
        let outcome = match result {
            Ok(message) => Ok(Delivered {
                partition: message.partition(),
                offset: message.offset(),
            }),
            Err((error, message)) => {
                if stuck(error) {
                    self.stuck.store(true, Ordering::Release);
                }
                shared.errors.increment(1);
                tracing::error!(topic = message.topic(), %error, "kafka delivery failed");
                Err(failed("delivery", error))
            }
        };
        pending.reply.send(outcome);
    }
}

/// Errors after which this producer id will never be accepted again. Kafka accepts the epoch
/// librdkafka bumps by itself after an unknown-producer-id error; tansu fences it instead, and
/// every later record of that producer would fail.
fn stuck(error: &KafkaError) -> bool {
    matches!(
        error.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::Fatal
                | RDKafkaErrorCode::ProducerFenced
                | RDKafkaErrorCode::InvalidProducerEpoch
        )
    )
}

struct Parked {
    record: Record,
    pending: Box<Pending>,
}

enum SendError {
    Full(Box<Pending>),
    Failed(BusError, Box<Pending>),
}

pub(crate) struct KafkaProducer {
    /// Replaced (rarely) when it cannot continue; read on every send.
    producer: RwLock<ThreadedProducer<DeliveryContext>>,
    settings: ClientConfig,
    shared: Arc<Shared>,
    /// Records that found librdkafka's queue full, oldest first. While it is not empty every new
    /// record queues behind it, so records keep their publish order.
    backlog: Mutex<VecDeque<Parked>>,
    /// `backlog` is not empty: lets `publish` skip the lock in the common case.
    backlogged: AtomicBool,
    /// Wakes the backlog task.
    wake: Arc<Notify>,
    /// Seconds publishers' records waited for room in librdkafka's queue. A gauge only because
    /// `metrics` counters count integers; it never decreases.
    backpressure: metrics::Gauge,
}

impl KafkaProducer {
    /// The producer and its backlog task (on the current tokio runtime).
    pub(crate) fn start(config: &KafkaConfig) -> Result<Arc<KafkaProducer>, BusError> {
        let mut client = client_config(config);
        client
            // Exactly-once per partition, in order, across retries; implies acks=all.
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("max.in.flight.requests.per.connection", "5")
            // Never give up on a record: no local timeout, unbounded retries with a capped
            // backoff. During a broker outage records wait (and publishers, once the queue is
            // full, wait with them) instead of failing; nothing acknowledged-to-be is dropped.
            .set("message.timeout.ms", "0")
            .set("retries", "2147483647")
            .set("retry.backoff.ms", "100")
            .set("retry.backoff.max.ms", "1000")
            // Throughput with bounded latency: fill batches for at most `linger`.
            .set("compression.type", config.compression)
            .set("linger.ms", config.linger.as_millis().to_string())
            .set("batch.num.messages", "10000")
            .set(
                "queue.buffering.max.messages",
                config.producer_queue_messages.max(1).to_string(),
            )
            // The Java client's key hashing, so Java and librdkafka producers agree on partitions.
            .set("partitioner", "murmur2_random");
        let shared = Arc::new(Shared {
            in_flight: AtomicI64::new(0),
            queue_depth: metrics::gauge!("cms_kafka_producer_queue_depth"),
            latency: metrics::histogram!("cms_kafka_delivery_latency_seconds"),
            errors: metrics::counter!("cms_kafka_delivery_errors_total"),
        });
        let producer = create(&client, &shared)?;
        let wake = Arc::new(Notify::new());
        let this = Arc::new(KafkaProducer {
            producer: RwLock::new(producer),
            settings: client,
            shared,
            backlog: Mutex::new(VecDeque::new()),
            backlogged: AtomicBool::new(false),
            wake: wake.clone(),
            backpressure: metrics::gauge!("cms_kafka_backpressure_seconds_total"),
        });
        tokio::spawn(feed_backlog(Arc::downgrade(&this), wake));
        Ok(this)
    }

    /// Hands the record to librdkafka now, or parks it behind earlier parked records.
    pub(crate) fn publish(&self, record: Record) -> Result<Delivery, BusError> {
        let (tx, rx) = oneshot::channel();
        let pending = Box::new(Pending {
            reply: ReplyTo::here(tx),
            enqueued: Instant::now(),
        });
        if self.backlogged.load(Ordering::Acquire) {
            self.park(record, pending);
            return Ok(rx);
        }
        match self.send(&record, pending) {
            Ok(()) => {}
            Err(SendError::Full(pending)) => self.park(record, pending),
            Err(SendError::Failed(error, _)) => return Err(error),
        }
        Ok(rx)
    }

    /// Replaces a producer that cannot continue (the records inside it fail with it), so that one
    /// lost sequence does not fail every later record.
    fn renew(&self) -> Result<(), BusError> {
        let mut producer = self.producer.write().unwrap_or_else(|e| e.into_inner());
        if producer.context().stuck.load(Ordering::Acquire) {
            let fresh = create(&self.settings, &self.shared)?;
            let old = std::mem::replace(&mut *producer, fresh);
            // Dropping a producer joins its thread and flushes briefly: not on this thread.
            std::thread::spawn(move || drop(old));
            tracing::warn!("kafka producer replaced: the old one could not continue");
        }
        Ok(())
    }

    /// Waits until the backlog is empty and librdkafka has reported every record.
    pub(crate) async fn flush(&self, timeout: Duration) -> Result<(), BusError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let in_flight = self.shared.in_flight.load(Ordering::Relaxed);
            if in_flight <= 0 && !self.backlogged.load(Ordering::Acquire) {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(failed(
                    "flush",
                    format!("{in_flight} records unacknowledged after {timeout:?}"),
                ));
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    fn send(&self, record: &Record, pending: Box<Pending>) -> Result<(), SendError> {
        let mut base = BaseRecord::with_opaque_to(record.topic.as_ref(), pending)
            .key(&record.key[..])
            .payload(&record.value[..]);
        if !record.headers.is_empty() {
            let headers = record.headers.iter().fold(
                OwnedHeaders::new_with_capacity(record.headers.len()),
                |headers, h| {
                    headers.insert(Header {
                        key: h.name.as_ref(),
                        value: Some(&h.value[..]),
                    })
                },
            );
            base = base.headers(headers);
        }
        // Counted before the send: the delivery report may arrive before `send` returns.
        let shared = &self.shared;
        let depth = shared.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        let mut producer = self.producer.read().unwrap_or_else(|e| e.into_inner());
        if producer.context().stuck.load(Ordering::Acquire) {
            drop(producer);
            if let Err(error) = self.renew() {
                shared.in_flight.fetch_sub(1, Ordering::Relaxed);
                return Err(SendError::Failed(error, base.delivery_opaque));
            }
            producer = self.producer.read().unwrap_or_else(|e| e.into_inner());
        }
        match producer.send(base) {
            Ok(()) => {
                shared.queue_depth.set(depth as f64);
                Ok(())
            }
            Err((error, base)) => {
                shared.in_flight.fetch_sub(1, Ordering::Relaxed);
                let pending = base.delivery_opaque;
                match error {
                    error if stuck(&error) => {
                        // Renewed on the next send; this record fails like the queued ones.
                        producer.context().stuck.store(true, Ordering::Release);
                        Err(SendError::Failed(failed("produce", error), pending))
                    }
                    KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull) => {
                        Err(SendError::Full(pending))
                    }
                    KafkaError::MessageProduction(
                        RDKafkaErrorCode::UnknownTopic | RDKafkaErrorCode::UnknownTopicOrPartition,
                    ) => Err(SendError::Failed(
                        BusError::UnknownTopic(record.topic.to_string()),
                        pending,
                    )),
                    error => Err(SendError::Failed(failed("produce", error), pending)),
                }
            }
        }
    }

    fn park(&self, record: Record, pending: Box<Pending>) {
        let mut backlog = self.lock_backlog();
        backlog.push_back(Parked { record, pending });
        self.backlogged.store(true, Ordering::Release);
        drop(backlog);
        self.wake.notify_one();
    }

    /// Moves parked records into librdkafka, oldest first, until it is full again. Returns how
    /// many moved and whether the backlog is now empty.
    fn feed(&self) -> (usize, bool) {
        let mut backlog = self.lock_backlog();
        let mut moved = 0;
        while let Some(Parked { record, pending }) = backlog.pop_front() {
            match self.send(&record, pending) {
                Ok(()) => moved += 1,
                Err(SendError::Full(pending)) => {
                    backlog.push_front(Parked { record, pending });
                    return (moved, false);
                }
                Err(SendError::Failed(error, pending)) => pending.reply.send(Err(error)),
            }
        }
        self.backlogged.store(false, Ordering::Release);
        (moved, true)
    }

    fn lock_backlog(&self) -> MutexGuard<'_, VecDeque<Parked>> {
        // A panic while holding the lock cannot leave the queue half-updated.
        self.backlog.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for KafkaProducer {
    fn drop(&mut self) {
        // Lets the backlog task notice that the producer is gone.
        self.wake.notify_one();
    }
}

fn create(
    settings: &ClientConfig,
    shared: &Arc<Shared>,
) -> Result<ThreadedProducer<DeliveryContext>, BusError> {
    let context = DeliveryContext {
        shared: shared.clone(),
        stuck: AtomicBool::new(false),
    };
    ThreadedProducer::from_config_and_context(settings, context).map_err(|e| failed("producer", e))
}

/// Feeds parked records into librdkafka while it has room, backing off while it is full.
async fn feed_backlog(producer: Weak<KafkaProducer>, wake: Arc<Notify>) {
    loop {
        wake.notified().await;
        let since = Instant::now();
        let mut backoff = MIN_BACKOFF;
        loop {
            let Some(producer) = producer.upgrade() else {
                return;
            };
            let (moved, empty) = producer.feed();
            if empty {
                producer
                    .backpressure
                    .increment(since.elapsed().as_secs_f64());
                break;
            }
            drop(producer);
            backoff = if moved > 0 {
                MIN_BACKOFF
            } else {
                (backoff * 2).min(MAX_BACKOFF)
            };
            tokio::time::sleep(backoff).await;
        }
    }
}
