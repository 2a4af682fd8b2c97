//! Producer throughput to a Kafka-protocol broker for ~500-byte meter-value records, with the
//! gateway's two acknowledgement modes:
//! - durable: each simulated charger waits for the broker's acknowledgement of its record
//!   before sending the next (what `--ack-after broker` does per connection);
//! - receive: records are handed to the producer without waiting (what `--ack-after receive`
//!   allows); the run ends when the broker has acknowledged them all.
//!
//! Needs a broker: `CMS_BENCH_KAFKA_BROKERS=127.0.0.1:9092 cargo bench -p cms-bus-kafka --bench
//! kafka_producer` (scripts/broker starts a local in-memory tansu and prints its address).

use bytes::Bytes;
use cms_bus::{Header, Headers, Publisher, Record};
use cms_bus_kafka::{KafkaBus, KafkaConfig};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CHARGERS: usize = 1_000;
const RUN: Duration = Duration::from_secs(5);

/// A 3-phase MeterValues payload of about 500 bytes, as chargers send them.
fn meter_values(n: usize) -> Bytes {
    let payload = format!(
        r#"{{"connectorId":1,"transactionId":{n},"meterValue":[{{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{{"value":"{n}.5","context":"Sample.Periodic","measurand":"Energy.Active.Import.Register","unit":"Wh"}},{{"value":"16.1","measurand":"Current.Import","phase":"L1","unit":"A"}},{{"value":"16.0","measurand":"Current.Import","phase":"L2","unit":"A"}},{{"value":"15.9","measurand":"Current.Import","phase":"L3","unit":"A"}},{{"value":"230.2","measurand":"Voltage","phase":"L1-N","unit":"V"}}]}}]}}"#
    );
    Bytes::from(payload)
}

fn record(topic: &'static str, charger: usize, n: usize) -> Record {
    Record {
        topic: Cow::Borrowed(topic),
        key: Bytes::from(format!("CP-{charger:05}")),
        headers: Headers::from_iter([
            Header::new("action", "MeterValues"),
            Header::new("message_id", format!("{n}")),
            Header::new("received_at", "2026-11-21T10:00:00.000000Z"),
        ]),
        value: meter_values(n),
    }
}

fn report(mode: &str, records: usize, bytes: usize, elapsed: Duration) {
    let secs = elapsed.as_secs_f64();
    println!(
        "{mode:>8}: {records} records in {secs:.2} s = {:.0} records/s, {:.1} MB/s of values",
        records as f64 / secs,
        bytes as f64 / secs / 1e6
    );
}

async fn durable(bus: Arc<KafkaBus>, topic: &'static str) {
    let started = Instant::now();
    let tasks: Vec<_> = (0..CHARGERS)
        .map(|charger| {
            let bus = bus.clone();
            tokio::spawn(async move {
                let (mut sent, mut bytes) = (0, 0);
                while started.elapsed() < RUN {
                    let record = record(topic, charger, sent);
                    bytes += record.value.len();
                    bus.publish(record).await.expect("broker acknowledged");
                    sent += 1;
                }
                (sent, bytes)
            })
        })
        .collect();
    let (mut records, mut bytes) = (0, 0);
    for task in tasks {
        let (r, b) = task.await.expect("charger task");
        records += r;
        bytes += b;
    }
    report("durable", records, bytes, started.elapsed());
}

async fn receive(bus: Arc<KafkaBus>, topic: &'static str) {
    let started = Instant::now();
    let (mut records, mut bytes) = (0, 0);
    while started.elapsed() < RUN {
        for charger in 0..CHARGERS {
            let record = record(topic, charger, records);
            bytes += record.value.len();
            // Enqueued now; the acknowledgement is not waited for.
            drop(bus.publish(record));
            records += 1;
        }
        tokio::task::yield_now().await;
    }
    bus.flush(Duration::from_secs(120))
        .await
        .expect("all acknowledged");
    report("receive", records, bytes, started.elapsed());
}

fn main() {
    let Ok(brokers) = std::env::var("CMS_BENCH_KAFKA_BROKERS") else {
        eprintln!("set CMS_BENCH_KAFKA_BROKERS=host:port (scripts/broker starts one)");
        return;
    };
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let topic: &'static str =
            Box::leak(format!("bench.{}", std::process::id()).into_boxed_str());
        let config = KafkaConfig {
            brokers,
            partitions: 16,
            ..KafkaConfig::default()
        };
        let bus = Arc::new(
            KafkaBus::connect(config, &[topic], &[])
                .await
                .expect("broker"),
        );
        println!(
            "~{} byte records, {CHARGERS} chargers, {RUN:?} per mode",
            meter_values(0).len()
        );
        durable(bus.clone(), topic).await;
        receive(bus, topic).await;
    });
}
