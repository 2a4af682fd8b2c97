//! A Kafka reader independent of the product: an rdkafka consumer of the test's own, outside any
//! consumer group, that reads a whole topic from its beginning to where it ends now.

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Headers, Message};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};
use std::time::{Duration, Instant};

/// Bound of each metadata and watermark request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How long reading a topic to its end may take.
const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The end of a topic: nothing more arrives for this long.
const QUIET: Duration = Duration::from_millis(500);

/// One record as Kafka holds it.
#[derive(Debug, Clone)]
pub struct TopicRecord {
    pub partition: i32,
    pub offset: i64,
    pub key: Vec<u8>,
    pub headers: Vec<(String, Vec<u8>)>,
    pub value: Vec<u8>,
}

impl TopicRecord {
    pub fn key_str(&self) -> &str {
        std::str::from_utf8(&self.key).unwrap_or("<key not UTF-8>")
    }

    /// The first header called `name`, as UTF-8.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| std::str::from_utf8(v).unwrap_or("<header not UTF-8>"))
    }

    /// How many headers are called `name`.
    pub fn header_count(&self, name: &str) -> usize {
        self.headers.iter().filter(|(n, _)| n == name).count()
    }

    pub fn value_str(&self) -> &str {
        std::str::from_utf8(&self.value).unwrap_or("<value not UTF-8>")
    }
}

/// Every record of `topic`, in partition then offset order: all partitions assigned from their
/// beginning, read past the high watermarks as they are when this is called until nothing more
/// comes.
pub async fn read_topic(brokers: &str, topic: &str) -> Vec<TopicRecord> {
    read_topic_until(brokers, topic, |_| true).await
}

/// [`read_topic`], and on until `complete` holds of the records read (the caller knows what it
/// wrote): a broker slow to deliver the tail of a batch under load must not look like a lost
/// record. Past [`READ_TIMEOUT`] it returns what it has, for the caller to say what is missing.
pub async fn read_topic_until(
    brokers: &str,
    topic: &str,
    complete: impl Fn(&[TopicRecord]) -> bool + Send + 'static,
) -> Vec<TopicRecord> {
    let brokers = brokers.to_string();
    let topic = topic.to_string();
    tokio::task::spawn_blocking(move || read_blocking(&brokers, &topic, complete))
        .await
        .expect("the topic reader panicked")
}

fn read_blocking(
    brokers: &str,
    topic: &str,
    complete: impl Fn(&[TopicRecord]) -> bool,
) -> Vec<TopicRecord> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", brokers)
        .set("client.id", "cms-e2e-reader")
        // librdkafka refuses `assign` without a group id ("Local: Unknown group"). Partitions are
        // assigned, never subscribed, and nothing is committed: the group is never joined.
        .set("group.id", "cms-e2e-reader")
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("fetch.wait.max.ms", "100")
        .create()
        .expect("create the test's Kafka consumer");
    let metadata = consumer
        .fetch_metadata(Some(topic), REQUEST_TIMEOUT)
        .unwrap_or_else(|e| panic!("metadata of {topic}: {e}"));
    let partitions = metadata
        .topics()
        .iter()
        .find(|t| t.name() == topic)
        .unwrap_or_else(|| panic!("topic {topic} is not in the metadata"))
        .partitions()
        .len() as i32;
    assert!(partitions > 0, "topic {topic} has no partitions");
    // Per partition: the next offset to read and the high watermark to read up to.
    let mut progress = Vec::with_capacity(partitions as usize);
    let mut assignment = TopicPartitionList::new();
    for partition in 0..partitions {
        let (low, high) = consumer
            .fetch_watermarks(topic, partition, REQUEST_TIMEOUT)
            .unwrap_or_else(|e| panic!("watermarks of {topic}/{partition}: {e}"));
        progress.push((low, high));
        assignment
            .add_partition_offset(topic, partition, Offset::Offset(low))
            .expect("add a partition");
    }
    consumer.assign(&assignment).expect("assign the partitions");
    let mut records = Vec::new();
    let deadline = Instant::now() + READ_TIMEOUT;
    // Up to the high watermarks, then on until the broker has nothing more for a while: tansu
    // reports a high watermark short of the last record when a produce request carried a batch
    // of several records, and delivers the rest of such a batch only when asked past it.
    let mut quiet_since: Option<Instant> = None;
    loop {
        let behind = progress.iter().any(|(next, high)| next < high);
        if !behind && quiet_since.is_some_and(|q| q.elapsed() >= QUIET) && complete(&records) {
            break;
        }
        if !behind && Instant::now() >= deadline {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "read {} records of {topic} but not to its end within {READ_TIMEOUT:?} \
             (next, high) per partition: {progress:?}",
            records.len()
        );
        let Some(polled) = consumer.poll(Duration::from_millis(50)) else {
            quiet_since.get_or_insert_with(Instant::now);
            continue;
        };
        quiet_since = None;
        let message = polled.unwrap_or_else(|e| panic!("reading {topic}: {e}"));
        let partition = message.partition();
        let offset = message.offset();
        let headers = message
            .headers()
            .map(|headers| {
                headers
                    .iter()
                    .map(|h| (h.key.to_string(), h.value.unwrap_or_default().to_vec()))
                    .collect()
            })
            .unwrap_or_default();
        records.push(TopicRecord {
            partition,
            offset,
            key: message.key().unwrap_or_default().to_vec(),
            headers,
            value: message.payload().unwrap_or_default().to_vec(),
        });
        let slot = &mut progress[partition as usize];
        slot.0 = slot.0.max(offset + 1);
    }
    records.sort_by_key(|r| (r.partition, r.offset));
    records
}

/// The charger and sequence number of a MeterValues record whose first sampled value is a
/// sequence number, as the fault and drain tests send them.
pub fn reading_seq(record: &TopicRecord) -> Option<(String, u64)> {
    if record.header("action") != Some("MeterValues") {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(&record.value).ok()?;
    let seq = value["meterValue"][0]["sampledValue"][0]["value"]
        .as_str()?
        .parse()
        .ok()?;
    Some((record.key_str().to_string(), seq))
}

/// Every record of `topic`, read on until the readings `acknowledged` are all there or the
/// reader gives up (see [`read_topic_until`]).
pub async fn read_readings(
    brokers: &str,
    topic: &str,
    acknowledged: std::collections::HashSet<(String, u64)>,
) -> Vec<TopicRecord> {
    read_topic_until(brokers, topic, move |records| {
        let held: std::collections::HashSet<(String, u64)> =
            records.iter().filter_map(reading_seq).collect();
        acknowledged.is_subset(&held)
    })
    .await
}
