//! The Kafka bus: the `cms_bus` traits over rdkafka (idempotent producer, group consumers, replay).
#![forbid(unsafe_code)]

mod catch_up;
mod consumer;
mod context;
mod follow;
mod handback;
mod producer;
mod watermarks;

pub use consumer::Replay;
use follow::Follow;

use cms_bus::{BoxFuture, Bus, BusError, Publisher, Publishing, Record, Subscriber};
use rdkafka::ClientConfig;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::error::RDKafkaErrorCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How to reach the cluster and how to shape the producer.
#[derive(Clone)]
pub struct KafkaConfig {
    /// Bootstrap brokers, `host:port,host:port`.
    pub brokers: String,
    /// Partitions of the topics `connect` creates.
    pub partitions: i32,
    /// Replication factor of the topics `connect` creates.
    pub replication_factor: i32,
    pub client_id: String,
    /// Records librdkafka may hold unacknowledged before `publish` waits
    /// (`queue.buffering.max.messages`).
    pub producer_queue_messages: usize,
    /// How long the producer waits to fill a batch (`linger.ms`).
    pub linger: Duration,
    /// The producer's batch compression (`compression.type`): `none`, `lz4`, `zstd`, ...
    pub compression: &'static str,
    /// Further librdkafka options for every client (`--kafka-option KEY=VALUE`): security
    /// above all (`security.protocol`, `ssl.*`, `sasl.*`). Never one of [`OWN_OPTIONS`].
    pub options: Vec<(String, String)>,
}

/// The librdkafka options cms sets itself, for the guarantees of docs/bus.md or from flags of
/// its own: `KafkaConfig::options` may not change them.
pub const OWN_OPTIONS: [&str; 24] = [
    "acks",
    "auto.offset.reset",
    "batch.num.messages",
    "bootstrap.servers",
    "client.id",
    "compression.type",
    "enable.auto.commit",
    "enable.auto.offset.store",
    "enable.idempotence",
    "fetch.wait.max.ms",
    "group.id",
    "heartbeat.interval.ms",
    "linger.ms",
    "max.in.flight.requests.per.connection",
    "max.poll.interval.ms",
    "message.timeout.ms",
    "partitioner",
    "queue.buffering.max.messages",
    "reconnect.backoff.max.ms",
    "reconnect.backoff.ms",
    "retries",
    "retry.backoff.ms",
    "session.timeout.ms",
    "statistics.interval.ms",
];

impl Default for KafkaConfig {
    fn default() -> Self {
        KafkaConfig {
            brokers: "127.0.0.1:9092".into(),
            partitions: 16,
            replication_factor: 1,
            client_id: "cms".into(),
            producer_queue_messages: 100_000,
            linger: Duration::from_millis(5),
            compression: "lz4",
            options: Vec::new(),
        }
    }
}

/// A bus over a Kafka cluster. Cheap to clone: clones share one producer. Records still unsent
/// when the last clone is dropped fail; `flush` first.
#[derive(Clone)]
pub struct KafkaBus {
    inner: Arc<Inner>,
}

struct Inner {
    config: KafkaConfig,
    producer: Arc<producer::KafkaProducer>,
    /// `true` once closed: publishers are refused and subscribers stop.
    closed: watch::Sender<bool>,
}

/// How long admin requests (topic creation) may take before `connect` gives up.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(15);

impl KafkaBus {
    /// Connects the producer and creates the given topics when missing ("already exists" is
    /// fine). `compacted` topics (a subset or extra names) get `cleanup.policy=compact`.
    /// Must be called within a tokio runtime.
    pub async fn connect(
        config: KafkaConfig,
        topics: &[&str],
        compacted: &[&str],
    ) -> Result<KafkaBus, BusError> {
        config.check_options()?;
        create_topics(&config, topics, compacted).await?;
        let producer = producer::KafkaProducer::start(&config)?;
        Ok(KafkaBus {
            inner: Arc::new(Inner {
                config,
                producer,
                closed: watch::Sender::new(false),
            }),
        })
    }

    /// Reads `topic` from its beginning without a consumer group (all partitions assigned, no
    /// commits): for compacted registries. `Replay::caught_up` tells when it has read up to the
    /// high watermarks seen here.
    pub async fn replay(&self, topic: &str) -> Result<Replay, BusError> {
        if *self.inner.closed.borrow() {
            return Err(BusError::Closed);
        }
        Replay::start(&self.inner.config, topic, self.inner.closed.subscribe()).await
    }

    /// Waits, at most `timeout`, until every record handed to `publish` is acknowledged.
    pub async fn flush(&self, timeout: Duration) -> Result<(), BusError> {
        self.inner.producer.flush(timeout).await
    }
}

impl Publisher for KafkaBus {
    /// Enqueues the record before returning (so per-key order holds even when the future is
    /// awaited later); the future resolves once the broker acknowledged it.
    fn publish(&self, record: Record) -> Publishing {
        if *self.inner.closed.borrow() {
            return Publishing::done(Err(BusError::Closed));
        }
        match self.inner.producer.publish(record) {
            // The sender only disappears if the producer is torn down before delivery.
            Ok(delivery) => Publishing::acknowledgement(delivery),
            Err(e) => Publishing::done(Err(e)),
        }
    }
}

impl Bus for KafkaBus {
    /// A consumer in group `group`; nothing is committed unless `Subscriber::commit` says so.
    /// Must be called within a tokio runtime.
    fn subscribe(&self, group: &str, topics: &[&str]) -> Result<Box<dyn Subscriber>, BusError> {
        if *self.inner.closed.borrow() {
            return Err(BusError::Closed);
        }
        // rdkafka's stream consumer spawns a task; outside a runtime that would panic.
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(failed("subscribe", "must be called within a tokio runtime"));
        }
        let subscriber = consumer::GroupSubscriber::start(
            &self.inner.config,
            group,
            topics,
            self.inner.closed.subscribe(),
        )?;
        Ok(Box::new(subscriber))
    }

    fn follow<'a>(
        &'a self,
        topics: &'a [&'a str],
    ) -> BoxFuture<'a, Result<Box<dyn Subscriber>, BusError>> {
        Box::pin(async move {
            if *self.inner.closed.borrow() {
                return Err(BusError::Closed);
            }
            let follow =
                Follow::start(&self.inner.config, topics, self.inner.closed.subscribe()).await?;
            Ok(Box::new(follow) as Box<dyn Subscriber>)
        })
    }

    /// Refuses further records and ends subscribers' `next_batch` with `Ok(0)`. Records already
    /// published keep being delivered (see `flush`); uncommitted records stay in Kafka for the
    /// group's next consumer.
    fn close(&self) {
        self.inner.closed.send_replace(true);
    }
}

/// Settings every client of this crate shares.
fn client_config(config: &KafkaConfig) -> ClientConfig {
    let mut client = ClientConfig::new();
    client
        .set("bootstrap.servers", &config.brokers)
        .set("client.id", &config.client_id)
        // librdkafka's default reconnect backoff grows to 10 s; a returning broker should be
        // used within a second.
        .set("reconnect.backoff.ms", "100")
        .set("reconnect.backoff.max.ms", "1000");
    // None of them is one cms sets (checked by `connect`), so the order does not matter.
    for (key, value) in &config.options {
        client.set(key, value);
    }
    client
}

/// The options' values may be secrets (`sasl.password`): debug output shows their keys only.
impl std::fmt::Debug for KafkaConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: Vec<&str> = self.options.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("KafkaConfig")
            .field("brokers", &self.brokers)
            .field("partitions", &self.partitions)
            .field("replication_factor", &self.replication_factor)
            .field("client_id", &self.client_id)
            .field("producer_queue_messages", &self.producer_queue_messages)
            .field("linger", &self.linger)
            .field("compression", &self.compression)
            .field("options", &keys)
            .finish()
    }
}

impl KafkaConfig {
    /// Refuses an option cms sets itself: changing it would break a guarantee of docs/bus.md
    /// (or fight a flag of cms's own).
    pub fn check_options(&self) -> Result<(), BusError> {
        match self
            .options
            .iter()
            .find(|(key, _)| OWN_OPTIONS.contains(&key.as_str()))
        {
            Some((key, _)) => Err(BusError::Failed(format!(
                "the Kafka option {key} is set by cms itself and may not be changed"
            ))),
            None => Ok(()),
        }
    }
}

fn failed(context: &str, error: impl std::fmt::Display) -> BusError {
    BusError::Failed(format!("kafka {context}: {error}"))
}

async fn create_topics(
    config: &KafkaConfig,
    topics: &[&str],
    compacted: &[&str],
) -> Result<(), BusError> {
    let admin: AdminClient<DefaultClientContext> = client_config(config)
        .create()
        .map_err(|e| failed("admin client", e))?;
    let partitions = config.partitions.max(1);
    let replication = config.replication_factor.max(1);
    let mut names: Vec<&str> = topics.to_vec();
    names.extend(compacted.iter().filter(|c| !topics.contains(c)));
    let new_topics: Vec<NewTopic<'_>> = names
        .iter()
        .map(|name| {
            let topic = NewTopic::new(name, partitions, TopicReplication::Fixed(replication));
            if compacted.contains(name) {
                topic.set("cleanup.policy", "compact")
            } else {
                topic
            }
        })
        .collect();
    let options = AdminOptions::new()
        .request_timeout(Some(ADMIN_TIMEOUT))
        .operation_timeout(Some(ADMIN_TIMEOUT));
    let results = admin
        .create_topics(&new_topics, &options)
        .await
        .map_err(|e| failed("create topics", e))?;
    for result in results {
        match result {
            Ok(_) | Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((name, code)) => return Err(failed(&format!("create topic {name}"), code)),
        }
    }
    // Dropping the admin client joins its polling thread (up to 100 ms): not on a runtime worker.
    tokio::task::spawn_blocking(move || drop(admin));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdkafka::producer::BaseProducer;

    fn with_options(options: &[(&str, &str)]) -> KafkaConfig {
        KafkaConfig {
            options: options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..KafkaConfig::default()
        }
    }

    /// librdkafka refuses these at client creation when it was built without TLS or SCRAM:
    /// creating the clients proves the build has them, with no system OpenSSL.
    #[test]
    fn ssl_and_sasl_options_reach_librdkafka_which_supports_them() {
        for options in [
            &[("security.protocol", "SSL")][..],
            &[
                ("security.protocol", "SASL_SSL"),
                ("sasl.mechanism", "SCRAM-SHA-512"),
                ("sasl.username", "cms"),
                ("sasl.password", "secret"),
            ],
            &[
                ("security.protocol", "SASL_SSL"),
                ("sasl.mechanism", "PLAIN"),
                ("sasl.username", "cms"),
                ("sasl.password", "secret"),
            ],
        ] {
            let config = with_options(options);
            config.check_options().unwrap();
            let created = client_config(&config).create::<BaseProducer>();
            assert!(created.is_ok(), "{options:?}: {:?}", created.err());
        }
    }

    #[test]
    fn an_unknown_option_is_refused_and_an_own_option_may_not_be_changed() {
        let unknown = with_options(&[("no.such.option", "1")]);
        assert!(client_config(&unknown).create::<BaseProducer>().is_err());
        let own = with_options(&[("acks", "1")]);
        let refused = own.check_options().unwrap_err();
        assert!(refused.to_string().contains("acks"), "{refused}");
    }
}
