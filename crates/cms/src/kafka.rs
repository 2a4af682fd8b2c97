//! Kafka settings shared by `cms gateway` and `cms api`.

use cms_bus::Topics;
use cms_bus_kafka::{KafkaBus, KafkaConfig};

#[derive(Clone, clap::Args)]
pub struct KafkaArgs {
    /// Bootstrap brokers, `host:port,host:port`.
    #[arg(long, env = "CMS_KAFKA_BROKERS")]
    pub kafka_brokers: String,
    /// Partitions of the topics created at start when missing.
    #[arg(long, env = "CMS_KAFKA_PARTITIONS", default_value_t = 16)]
    pub kafka_partitions: i32,
    /// Replication factor of the topics created at start when missing.
    #[arg(long, env = "CMS_KAFKA_REPLICATION_FACTOR", default_value_t = 1)]
    pub kafka_replication_factor: i32,
    /// How long a producer waits to fill a batch before sending it (`linger.ms`, whole
    /// milliseconds): each charger's answer waits for its record's acknowledgement, so this is
    /// added to answer latency; longer batches cost the broker and the producer less a record.
    #[arg(long, env = "CMS_KAFKA_LINGER", default_value = "5ms", value_parser = crate::duration::parse_duration)]
    pub kafka_linger: std::time::Duration,
    /// The producers' batch compression (`compression.type`): lz4 is cheap and takes a
    /// MeterValues record's bytes on the wire to about a third (docs/performance.md).
    #[arg(long, env = "CMS_KAFKA_COMPRESSION", value_enum, default_value_t = Compression::Lz4)]
    pub kafka_compression: Compression,
    /// A librdkafka option for every Kafka client, `KEY=VALUE`, repeatable: TLS and SASL above
    /// all (`security.protocol=SASL_SSL`, `sasl.mechanism=SCRAM-SHA-512`, `sasl.username=...`,
    /// `ssl.ca.location=...`). Pass secrets through the environment
    /// (`CMS_KAFKA_OPTIONS=sasl.password=...,...`) rather than the command line, which `ps`
    /// shows.
    #[arg(long = "kafka-option", env = "CMS_KAFKA_OPTIONS", value_delimiter = ',',
        hide_env_values = true, value_parser = key_value)]
    pub kafka_options: Vec<(String, String)>,
}

/// A producer batch compression the bundled librdkafka is built with (zstd would need
/// rdkafka's `zstd` feature, another C library to build).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Compression {
    None,
    Lz4,
    Snappy,
    Gzip,
}

impl Compression {
    fn as_str(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Lz4 => "lz4",
            Compression::Snappy => "snappy",
            Compression::Gzip => "gzip",
        }
    }
}

/// The options' values may be secrets (`sasl.password`): debug output shows their keys only.
impl std::fmt::Debug for KafkaArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: Vec<&str> = self.kafka_options.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("KafkaArgs")
            .field("kafka_brokers", &self.kafka_brokers)
            .field("kafka_partitions", &self.kafka_partitions)
            .field("kafka_replication_factor", &self.kafka_replication_factor)
            .field("kafka_linger", &self.kafka_linger)
            .field("kafka_compression", &self.kafka_compression)
            .field("kafka_options", &keys)
            .finish()
    }
}

/// `KEY=VALUE`.
fn key_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_string(), value.to_string()))
        }
        _ => Err(format!(
            "expected KEY=VALUE, got {:?}",
            text.split('=').next().unwrap_or("")
        )),
    }
}

impl KafkaArgs {
    /// Connects, creating the charger and command topics and the compacted registry and id tags
    /// when missing.
    pub async fn connect(&self, client_id: &str, topics: &Topics) -> Result<KafkaBus, String> {
        let config = KafkaConfig {
            brokers: self.kafka_brokers.clone(),
            partitions: self.kafka_partitions,
            replication_factor: self.kafka_replication_factor,
            client_id: client_id.to_string(),
            linger: self.kafka_linger,
            compression: self.kafka_compression.as_str(),
            options: self.kafka_options.clone(),
            ..KafkaConfig::default()
        };
        let [messages, connections, commands, command_results] = topics.all();
        KafkaBus::connect(
            config,
            &[
                messages,
                connections,
                commands,
                command_results,
                topics.registry,
                topics.id_tags,
            ],
            &[topics.registry, topics.id_tags],
        )
        .await
        .map_err(|e| format!("cannot reach Kafka at {}: {e}", self.kafka_brokers))
    }
}
