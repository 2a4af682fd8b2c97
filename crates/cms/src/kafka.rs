//! Kafka settings shared by `cms gateway` and `cms api`.

use cms_bus::Topics;
use cms_bus_kafka::{KafkaBus, KafkaConfig};

#[derive(Debug, Clone, clap::Args)]
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
}

impl KafkaArgs {
    /// Connects, creating the charger and command topics and the compacted registry when missing.
    pub async fn connect(&self, client_id: &str, topics: &Topics) -> Result<KafkaBus, String> {
        let config = KafkaConfig {
            brokers: self.kafka_brokers.clone(),
            partitions: self.kafka_partitions,
            replication_factor: self.kafka_replication_factor,
            client_id: client_id.to_string(),
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
            ],
            &[topics.registry],
        )
        .await
        .map_err(|e| format!("cannot reach Kafka at {}: {e}", self.kafka_brokers))
    }
}
