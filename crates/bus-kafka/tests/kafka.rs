//! The Kafka bus against a real broker (see `broker` for which one).

mod broker;

use broker::{Broker, Proxy};
use bytes::Bytes;
use cms_bus::{
    Bus, BusError, CaughtUp, Delivered, Header, Headers, Message, Publisher, Record, Subscriber,
};
use cms_bus_kafka::{KafkaBus, KafkaConfig};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A topic name no other test (or earlier run on a shared broker) uses.
fn unique(name: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("cms-test-{name}-{}-{nanos}-{n}", std::process::id())
}

fn config(broker: &Broker, partitions: i32) -> KafkaConfig {
    // RUST_LOG=librdkafka=info,cms_bus_kafka=debug shows the clients' logs (off by default).
    let filter = std::env::var("RUST_LOG").unwrap_or_else(|_| "off".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_test_writer()
        .try_init();
    KafkaConfig {
        brokers: broker.brokers.clone(),
        partitions,
        client_id: "cms-bus-kafka-test".into(),
        ..KafkaConfig::default()
    }
}

fn record(topic: &str, key: &str, seq: usize) -> Record {
    Record {
        topic: Cow::Owned(topic.to_owned()),
        key: Bytes::from(key.to_owned()),
        headers: Headers::from_iter([
            Header::new("action", "MeterValues"),
            Header::new("seq", seq.to_string()),
            // Binary header bytes must survive as they are.
            Header::new("raw", vec![0u8, 255, 1]),
        ]),
        value: Bytes::from(format!("{{\"key\":\"{key}\",\"seq\":{seq}}}")),
    }
}

/// Reads until `n` messages arrived, every wait bounded.
async fn read(subscriber: &mut dyn Subscriber, n: usize, within: Duration) -> Vec<Message> {
    let deadline = Instant::now() + within;
    let mut out = Vec::new();
    while out.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, subscriber.next_batch(&mut out, 100)).await {
            Ok(Ok(0)) => panic!("subscriber ended after {} of {n} messages", out.len()),
            Ok(Ok(_)) => {}
            Ok(Err(e)) => panic!("subscriber failed: {e}"),
            Err(_) => panic!("only {} of {n} messages within {within:?}", out.len()),
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn published_records_arrive_exactly_and_in_order_per_key() {
    let broker = Broker::get();
    let topic = unique("order");
    let bus = KafkaBus::connect(config(&broker, 4), &[&topic], &[])
        .await
        .expect("connect");
    let keys: Vec<String> = (0..8).map(|k| format!("charger-{k}")).collect();
    let n = 400;
    let records: Vec<Record> = (0..n)
        .map(|seq| record(&topic, &keys[seq % keys.len()], seq))
        .collect();

    // Publish everything before awaiting anything: order comes from publish() itself.
    let started = Instant::now();
    let futures: Vec<_> = records.iter().map(|r| bus.publish(r.clone())).collect();
    let mut delivered: Vec<Delivered> = Vec::new();
    for future in futures {
        let d = tokio::time::timeout(Duration::from_secs(20), future)
            .await
            .expect("delivery within 20 s")
            .expect("delivered");
        delivered.push(d);
    }
    eprintln!("{n} records acknowledged in {:?}", started.elapsed());

    let mut partition_of_key: HashMap<&Bytes, i32> = HashMap::new();
    let mut last_offset: HashMap<i32, i64> = HashMap::new();
    for (record, d) in records.iter().zip(&delivered) {
        let p = *partition_of_key.entry(&record.key).or_insert(d.partition);
        assert_eq!(p, d.partition, "one key, one partition");
        if let Some(last) = last_offset.insert(d.partition, d.offset) {
            assert!(
                d.offset > last,
                "offsets grow in publish order per partition"
            );
        }
    }

    let joined = Instant::now();
    let mut subscriber = bus.subscribe(&unique("group"), &[&topic]).unwrap();
    let messages = read(subscriber.as_mut(), n, Duration::from_secs(30)).await;
    eprintln!("group join + read of {n} took {:?}", joined.elapsed());
    assert_eq!(messages.len(), n);
    let by_position: HashMap<(i32, i64), &Record> = records
        .iter()
        .zip(&delivered)
        .map(|(r, d)| ((d.partition, d.offset), r))
        .collect();
    let mut last_seq: HashMap<Bytes, usize> = HashMap::new();
    for m in &messages {
        let sent = by_position[&(m.partition, m.offset)];
        assert_eq!(&m.record, sent, "exact topic, key, headers and value");
        let seq: usize = m.record.header_str("seq").unwrap().parse().unwrap();
        if let Some(last) = last_seq.insert(m.record.key.clone(), seq) {
            assert!(seq > last, "per-key order");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_arrive_exactly_under_each_compression_offered() {
    let broker = Broker::get();
    for compression in ["none", "snappy", "gzip", "lz4"] {
        let topic = unique(&format!("compressed-{compression}"));
        let config = KafkaConfig {
            compression,
            linger: Duration::from_millis(20),
            ..config(&broker, 2)
        };
        let bus = KafkaBus::connect(config, &[&topic], &[])
            .await
            .unwrap_or_else(|e| panic!("{compression}: {e}"));
        let records: Vec<Record> = (0..50)
            .map(|seq| record(&topic, &format!("charger-{}", seq % 5), seq))
            .collect();
        let futures: Vec<_> = records.iter().map(|r| bus.publish(r.clone())).collect();
        for future in futures {
            tokio::time::timeout(Duration::from_secs(20), future)
                .await
                .expect("delivery within 20 s")
                .unwrap_or_else(|e| panic!("{compression}: {e}"));
        }
        let mut subscriber = bus.subscribe(&unique("group"), &[&topic]).unwrap();
        let mut got: Vec<Record> = read(subscriber.as_mut(), 50, Duration::from_secs(30))
            .await
            .into_iter()
            .map(|m| m.record)
            .collect();
        let seq = |r: &Record| r.header_str("seq").unwrap().parse::<usize>().unwrap();
        got.sort_by_key(seq);
        assert_eq!(got, records, "{compression}: exact records back");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_member_resumes_after_the_committed_offset() {
    let broker = Broker::get();
    let topic = unique("commit");
    let group = unique("group");
    let bus = KafkaBus::connect(config(&broker, 1), &[&topic], &[])
        .await
        .expect("connect");
    for seq in 0..10 {
        bus.publish(record(&topic, "charger-1", seq)).await.unwrap();
    }

    let joined = Instant::now();
    let mut first = bus.subscribe(&group, &[&topic]).unwrap();
    let messages = read(first.as_mut(), 10, Duration::from_secs(30)).await;
    eprintln!(
        "the first member of a new group read after {:?}",
        joined.elapsed()
    );
    // Processed the first six: commit the sixth.
    first.commit(&messages[5]).unwrap();
    drop(first);

    let rejoined = Instant::now();
    let mut second = bus.subscribe(&group, &[&topic]).unwrap();
    let messages = read(second.as_mut(), 4, Duration::from_secs(30)).await;
    eprintln!(
        "a new member of an existing group read after {:?}",
        rejoined.elapsed()
    );
    let offsets: Vec<i64> = messages.iter().map(|m| m.offset).collect();
    assert_eq!(
        offsets,
        vec![6, 7, 8, 9],
        "resumes after the commit, nothing re-read"
    );
}

/// Keeps reading (a member takes its assignment while it reads) until `caught_up` is set,
/// bounded; returns what was read meanwhile.
async fn read_until_caught_up(
    subscriber: &mut dyn Subscriber,
    caught_up: &CaughtUp,
    within: Duration,
) -> Vec<Message> {
    let deadline = Instant::now() + within;
    let mut out = Vec::new();
    while !caught_up.is_caught_up() {
        assert!(Instant::now() < deadline, "not caught up within {within:?}");
        let reading = subscriber.next_batch(&mut out, 100);
        let _ = tokio::time::timeout(Duration::from_millis(100), reading).await;
    }
    out
}

/// What an API replica's readiness rests on: a member is caught up once the group's commits in
/// its partitions reach the ends they had when it started; reading is not enough.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_is_caught_up_once_its_partitions_are_committed_to_their_ends() {
    let broker = Broker::get();
    let topic = unique("caught-up");
    let group = unique("group");
    let bus = KafkaBus::connect(config(&broker, 2), &[&topic], &[])
        .await
        .expect("connect");
    for seq in 0..10 {
        let key = format!("charger-{}", seq % 4);
        bus.publish(record(&topic, &key, seq)).await.unwrap();
    }

    let mut first = bus.subscribe(&group, &[&topic]).unwrap();
    let caught_up = first.caught_up();
    assert!(
        !caught_up.is_caught_up(),
        "not before it has its partitions"
    );
    let messages = read(first.as_mut(), 10, Duration::from_secs(30)).await;
    // Read, but nothing committed: not caught up, however long it keeps reading.
    let until = Instant::now() + Duration::from_millis(500);
    while Instant::now() < until {
        assert!(!caught_up.is_caught_up(), "caught up before any commit");
        let mut more = Vec::new();
        let reading = first.next_batch(&mut more, 100);
        let _ = tokio::time::timeout(Duration::from_millis(100), reading).await;
        assert!(more.is_empty(), "nothing more was published: {more:?}");
    }
    let mut last_of_partition: HashMap<i32, &Message> = HashMap::new();
    for message in &messages {
        last_of_partition.insert(message.partition, message);
    }
    for message in last_of_partition.values() {
        first.commit(message).unwrap();
    }
    read_until_caught_up(first.as_mut(), &caught_up, Duration::from_secs(30)).await;
    drop(first);

    // A new member of the group, whose commits are at the ends: caught up with nothing to read.
    let mut second = bus.subscribe(&group, &[&topic]).unwrap();
    let caught_up = second.caught_up();
    assert!(
        !caught_up.is_caught_up(),
        "not before it has its partitions"
    );
    let read = read_until_caught_up(second.as_mut(), &caught_up, Duration::from_secs(30)).await;
    assert!(read.is_empty(), "everything was committed: {read:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_reads_a_compacted_topic_from_the_beginning() {
    let broker = Broker::get();
    let registry = unique("registry");
    let empty = unique("empty");
    let bus = KafkaBus::connect(config(&broker, 2), &[], &[&registry, &empty])
        .await
        .expect("connect");
    let entries = [("a", 1), ("b", 1), ("a", 2), ("c", 1), ("b", 2)];
    for (key, version) in entries {
        bus.publish(record(&registry, key, version)).await.unwrap();
    }

    let mut replay = bus.replay(&registry).await.expect("replay");
    assert!(!replay.caught_up().is_caught_up());
    let mut latest: HashMap<Bytes, usize> = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut out = Vec::new();
    while !replay.caught_up().is_caught_up() {
        let left = deadline.saturating_duration_since(Instant::now());
        tokio::time::timeout(left, replay.next_batch(&mut out, 100))
            .await
            .expect("caught up within 20 s")
            .expect("replay read");
    }
    for m in out.drain(..) {
        let seq = m.record.header_str("seq").unwrap().parse().unwrap();
        latest.insert(m.record.key, seq);
    }
    let expected: HashMap<Bytes, usize> = [("a", 2), ("b", 2), ("c", 1)]
        .into_iter()
        .map(|(k, v)| (Bytes::from(k), v))
        .collect();
    assert_eq!(latest, expected);

    // It keeps following the topic after catching up.
    bus.publish(record(&registry, "d", 1)).await.unwrap();
    let more = read(&mut replay, 1, Duration::from_secs(10)).await;
    assert_eq!(more[0].record.key, Bytes::from("d"));

    let empty = bus.replay(&empty).await.expect("replay of an empty topic");
    assert!(
        empty.caught_up().is_caught_up(),
        "nothing to read is caught up at once"
    );
}

/// Whether `future` is still pending after `wait`.
async fn pending_after<F: std::future::Future + Unpin>(future: &mut F, wait: Duration) -> bool {
    tokio::time::timeout(wait, future).await.is_err()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publish_waits_out_a_broker_outage() {
    // The broker is reachable only through a proxy; stopping the proxy is the outage, and the
    // broker keeps its data and producer state, as a real broker that restarts does.
    let tansu_port = broker::free_port();
    let mut proxy = Proxy::new(tansu_port);
    let broker = Broker::own_advertising(tansu_port, proxy.port);
    proxy.start().await;
    let topic = unique("outage");
    let bus = KafkaBus::connect(config(&broker, 2), &[&topic], &[])
        .await
        .expect("connect");
    let before = bus
        .publish(record(&topic, "charger-1", 0))
        .await
        .expect("delivered while up");

    proxy.stop().await;
    let mut first = bus.publish(record(&topic, "charger-1", 1));
    let mut second = bus.publish(record(&topic, "charger-1", 2));
    assert!(
        pending_after(&mut first, Duration::from_millis(1500)).await,
        "a publish during the outage neither succeeds nor fails"
    );
    assert!(pending_after(&mut second, Duration::ZERO).await);

    proxy.start().await;
    let back = Instant::now();
    let within = Duration::from_secs(20);
    let first = tokio::time::timeout(within, first)
        .await
        .expect("first delivered in time");
    let second = tokio::time::timeout(within, second)
        .await
        .expect("second delivered in time");
    eprintln!(
        "outage publishes resolved {:?} after the broker came back",
        back.elapsed()
    );
    let (first, second) = (
        first.expect("first delivered"),
        second.expect("second delivered"),
    );
    // Same partition, next offsets: in order, nothing lost, nothing written twice.
    assert_eq!(
        [first, second],
        [1, 2].map(|n| Delivered {
            partition: before.partition,
            offset: before.offset + n,
        })
    );
    bus.flush(Duration::from_secs(5)).await.expect("flush");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_that_lost_its_data_fails_the_pending_record_then_recovers() {
    // tansu's in-memory storage forgets everything, producer ids included, on restart: the
    // idempotent producer cannot continue its sequence, so the record waiting through the
    // restart must end with an error (never hang, never a false Ok), and the producer must
    // carry on with later records.
    let mut broker = Broker::own();
    let topic = unique("lost");
    let cfg = config(&broker, 1);
    let bus = KafkaBus::connect(cfg.clone(), &[&topic], &[])
        .await
        .expect("connect");
    bus.publish(record(&topic, "charger-1", 0)).await.unwrap();

    broker.stop();
    let mut during = bus.publish(record(&topic, "charger-1", 1));
    assert!(pending_after(&mut during, Duration::from_millis(1000)).await);
    broker.start();
    // The restarted broker has no topics: create it again.
    let _admin = KafkaBus::connect(cfg, &[&topic], &[])
        .await
        .expect("recreate");
    let outcome = tokio::time::timeout(Duration::from_secs(20), during)
        .await
        .expect("the pending record resolves");
    eprintln!("record pending through a data-losing restart: {outcome:?}");

    // Records sent before librdkafka reported the fatal error may fail too; a publisher that
    // retries gets through once the producer is replaced.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut attempts = 0;
    loop {
        attempts += 1;
        let left = deadline.saturating_duration_since(Instant::now());
        let outcome = tokio::time::timeout(left, bus.publish(record(&topic, "charger-1", 2)))
            .await
            .expect("a later record resolves");
        match outcome {
            Ok(_) => break,
            Err(e) => {
                assert!(
                    Instant::now() < deadline,
                    "the producer did not recover: {e}"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    eprintln!("the producer recovered: delivered on attempt {attempts}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_producer_queue_makes_publish_wait_not_fail() {
    let broker = Broker::get();
    let topic = unique("backpressure");
    let cfg = KafkaConfig {
        producer_queue_messages: 8,
        ..config(&broker, 2)
    };
    let bus = KafkaBus::connect(cfg, &[&topic], &[])
        .await
        .expect("connect");
    let n = 2000;
    let records: Vec<Record> = (0..n)
        .map(|seq| record(&topic, if seq % 2 == 0 { "even" } else { "odd" }, seq))
        .collect();
    // Far more than 8 at once: most find the queue full and must wait their turn.
    let started = Instant::now();
    let futures: Vec<_> = records.iter().map(|r| bus.publish(r.clone())).collect();
    let mut last: HashMap<i32, i64> = HashMap::new();
    for future in futures {
        let d = tokio::time::timeout(Duration::from_secs(30), future)
            .await
            .expect("delivered within 30 s")
            .expect("waits rather than fails");
        if let Some(before) = last.insert(d.partition, d.offset) {
            assert!(d.offset > before, "order kept through the wait");
        }
    }
    eprintln!(
        "{n} records through an 8-record queue in {:?}",
        started.elapsed()
    );
    bus.flush(Duration::from_secs(5)).await.expect("flush");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_ends_subscribers_and_refuses_publishes() {
    let broker = Broker::get();
    let topic = unique("close");
    let bus = KafkaBus::connect(config(&broker, 1), &[&topic], &[])
        .await
        .expect("connect");
    let mut subscriber = bus.subscribe(&unique("group"), &[&topic]).unwrap();
    let waiting = tokio::spawn(async move {
        let mut out = Vec::new();
        subscriber.next_batch(&mut out, 10).await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    bus.close();
    let ended = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("next_batch returns after close")
        .unwrap();
    assert_eq!(ended, Ok(0));
    assert_eq!(
        bus.publish(record(&topic, "k", 0)).await,
        Err(BusError::Closed)
    );
    assert!(bus.subscribe("g", &[&topic]).is_err());
}
