//! A group-less read of topics from now on: every partition assigned at the end it had when the
//! follow began, nothing committed. Each follower sees every record published after it began,
//! whatever other followers or groups read: how every gateway hears every command, and every
//! API replica every report.

use crate::consumer::{consumer_config, intern, read_batch};
use crate::watermarks::watermarks;
use crate::{KafkaConfig, failed};
use cms_bus::{BoxFuture, BusError, Message, Subscriber};
use rdkafka::consumer::{Consumer as _, StreamConsumer};
use rdkafka::{Offset, TopicPartitionList};
use tokio::sync::watch;

pub(crate) struct Follow {
    consumer: StreamConsumer,
    closed: watch::Receiver<bool>,
    topics: Vec<&'static str>,
}

impl Follow {
    pub(crate) async fn start(
        config: &KafkaConfig,
        topics: &[&str],
        closed: watch::Receiver<bool>,
    ) -> Result<Follow, BusError> {
        let consumer: StreamConsumer = consumer_config(config)
            // librdkafka's consumer refuses `assign` without a group id. The group is never
            // joined (no `subscribe`) and nothing is committed to it.
            .set("group.id", format!("{}-follow", config.client_id))
            .create()
            .map_err(|e| failed("consumer", e))?;
        let names: Vec<String> = topics.iter().map(|t| t.to_string()).collect();
        // The ends are read here, not left to librdkafka's "latest" (resolved at the first
        // fetch): a record published between this call and that fetch must not be skipped.
        let consumer = tokio::task::spawn_blocking(move || -> Result<_, BusError> {
            let mut assignment = TopicPartitionList::new();
            for name in &names {
                for (partition, (high, _)) in watermarks(&consumer, name)?.into_iter().enumerate() {
                    assignment
                        .add_partition_offset(name, partition as i32, Offset::Offset(high))
                        .map_err(|e| failed("assign", e))?;
                }
            }
            consumer
                .assign(&assignment)
                .map_err(|e| failed("assign", e))?;
            Ok(consumer)
        })
        .await
        .map_err(|e| failed("follow", e))??;
        Ok(Follow {
            consumer,
            closed,
            topics: topics.iter().map(|t| intern(t)).collect(),
        })
    }
}

impl Subscriber for Follow {
    fn next_batch<'a>(
        &'a mut self,
        out: &'a mut Vec<Message>,
        max: usize,
    ) -> BoxFuture<'a, Result<usize, BusError>> {
        Box::pin(read_batch(
            &self.consumer,
            &mut self.closed,
            &self.topics,
            out,
            max,
        ))
    }

    /// Nothing to commit: a follower always starts from the end.
    fn commit(&mut self, _message: &Message) -> Result<(), BusError> {
        Ok(())
    }
}
