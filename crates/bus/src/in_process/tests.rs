use super::*;
use crate::{Header, Headers};
use bytes::Bytes;
use std::borrow::Cow;
use std::task::{Context, Poll, Waker};

/// A bus of one topic `a`, one partition, and queues of two records: full after two.
fn two_record_bus() -> InProcessBus {
    let config = InProcessConfig {
        partitions: 1,
        queue_capacity: 2,
    };
    InProcessBus::new(config, &["a"])
}

/// The future's output if it is ready at its first poll.
fn now_or_never<T>(future: impl Future<Output = T>) -> Option<T> {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}

fn record(topic: &'static str, key: &str, value: &str) -> Record {
    Record {
        topic: Cow::Borrowed(topic),
        key: Bytes::copy_from_slice(key.as_bytes()),
        headers: Headers::from_iter([Header::new("action", "MeterValues")]),
        value: Bytes::copy_from_slice(value.as_bytes()),
    }
}

#[tokio::test]
async fn a_group_receives_records_of_its_topics_with_headers() {
    let bus = InProcessBus::new(InProcessConfig::default(), &["a", "b"]);
    let mut sub = bus.subscribe("g", &["a"]).unwrap();
    bus.publish(record("a", "CP1", "1")).await.unwrap();
    bus.publish(record("b", "CP1", "2")).await.unwrap();
    bus.publish(record("a", "CP1", "3")).await.unwrap();
    bus.close();
    let mut out = Vec::new();
    while sub.next_batch(&mut out, 10).await.unwrap() > 0 {}
    let values: Vec<&[u8]> = out.iter().map(|m| m.record.value.as_ref()).collect();
    assert_eq!(values, vec![b"1".as_ref(), b"3".as_ref()]);
    assert_eq!(out[0].record.header_str("action"), Some("MeterValues"));
}

#[tokio::test]
async fn every_group_of_a_topic_gets_each_record() {
    let bus = InProcessBus::new(InProcessConfig::default(), &["a", "b"]);
    let mut first = bus.subscribe("g1", &["a"]).unwrap();
    let mut other_topic = bus.subscribe("g2", &["b"]).unwrap();
    let mut second = bus.subscribe("g3", &["a", "b"]).unwrap();
    bus.publish(record("a", "CP1", "1")).await.unwrap();
    bus.publish(record("b", "CP1", "2")).await.unwrap();
    bus.close();
    let mut values = Vec::new();
    for sub in [&mut first, &mut other_topic, &mut second] {
        let mut out = Vec::new();
        while sub.next_batch(&mut out, 10).await.unwrap() > 0 {}
        let got: Vec<Bytes> = out.iter().map(|m| m.record.value.clone()).collect();
        values.push(got);
    }
    assert_eq!(values, [vec!["1"], vec!["2"], vec!["1", "2"]]);
}

#[tokio::test]
async fn one_key_keeps_its_partition_and_offsets_grow() {
    let bus = InProcessBus::new(InProcessConfig::default(), &["a"]);
    let first = bus.publish(record("a", "CP7", "x")).await.unwrap();
    let second = bus.publish(record("a", "CP7", "y")).await.unwrap();
    assert_eq!(first.partition, second.partition);
    assert_eq!(second.offset, first.offset + 1);
}

#[tokio::test]
async fn unknown_topics_and_closed_bus_are_errors() {
    let bus = InProcessBus::new(InProcessConfig::default(), &["a"]);
    assert!(matches!(
        bus.publish(record("nope", "k", "v")).await,
        Err(BusError::UnknownTopic(_))
    ));
    assert!(bus.subscribe("g", &["nope"]).is_err());
    bus.close();
    assert_eq!(
        bus.publish(record("a", "k", "v")).await,
        Err(BusError::Closed)
    );
}

#[tokio::test]
async fn a_full_queue_makes_the_publisher_wait_until_the_consumer_reads() {
    let bus = two_record_bus();
    let mut sub = bus.subscribe("g", &["a"]).unwrap();
    bus.publish(record("a", "k", "1")).await.unwrap();
    bus.publish(record("a", "k", "2")).await.unwrap();
    let third = tokio::spawn({
        let bus = bus.clone();
        async move { bus.publish(record("a", "k", "3")).await }
    });
    tokio::task::yield_now().await;
    assert!(
        !third.is_finished(),
        "publish must wait while the queue is full"
    );
    let mut out = Vec::new();
    sub.next_batch(&mut out, 1).await.unwrap();
    assert_eq!(third.await.unwrap().unwrap().offset, 2);
}

#[tokio::test]
async fn closing_drains_what_was_taken_before_the_end() {
    let bus = InProcessBus::new(InProcessConfig::default(), &["a"]);
    let mut sub = bus.subscribe("g", &["a"]).unwrap();
    for i in 0..100 {
        bus.publish(record("a", &format!("CP{i}"), "v"))
            .await
            .unwrap();
    }
    bus.close();
    let mut out = Vec::new();
    loop {
        if sub.next_batch(&mut out, 7).await.unwrap() == 0 {
            break;
        }
    }
    assert_eq!(out.len(), 100);
}

#[tokio::test]
async fn a_record_is_taken_when_published_if_every_queue_has_room() {
    let bus = InProcessBus::new(InProcessConfig::default(), &["a"]);
    let mut first = bus.subscribe("g1", &["a"]).unwrap();
    let mut second = bus.subscribe("g2", &["a"]).unwrap();
    let publishing = bus.publish(record("a", "k", "1"));
    // Not awaited yet, and both groups already have it.
    for sub in [&mut first, &mut second] {
        let mut out = Vec::new();
        let read = now_or_never(sub.next_batch(&mut out, 10));
        assert_eq!(read, Some(Ok(1)));
        assert_eq!(out[0].record.value, "1");
    }
    assert_eq!(publishing.await.unwrap().offset, 0);
}

#[tokio::test]
async fn a_lagging_group_holds_the_publisher_back_and_every_group_gets_the_record_once() {
    // The lagging group first, then last: the record waits for it either way.
    for lagging_first in [true, false] {
        let bus = two_record_bus();
        let (mut lagging, mut prompt) = if lagging_first {
            let lagging = bus.subscribe("lagging", &["a"]).unwrap();
            (lagging, bus.subscribe("prompt", &["a"]).unwrap())
        } else {
            let prompt = bus.subscribe("prompt", &["a"]).unwrap();
            (bus.subscribe("lagging", &["a"]).unwrap(), prompt)
        };
        let mut seen = Vec::new();
        for value in ["1", "2"] {
            bus.publish(record("a", "k", value)).await.unwrap();
        }
        prompt.next_batch(&mut seen, 10).await.unwrap();
        let third = tokio::spawn({
            let bus = bus.clone();
            async move { bus.publish(record("a", "k", "3")).await }
        });
        tokio::task::yield_now().await;
        assert!(!third.is_finished(), "the lagging group's queue is full");
        let mut lagged = Vec::new();
        lagging.next_batch(&mut lagged, 1).await.unwrap();
        assert_eq!(third.await.unwrap().unwrap().offset, 2);
        bus.close();
        while prompt.next_batch(&mut seen, 10).await.unwrap() > 0 {}
        while lagging.next_batch(&mut lagged, 10).await.unwrap() > 0 {}
        for got in [&seen, &lagged] {
            let values: Vec<&Bytes> = got.iter().map(|m| &m.record.value).collect();
            assert_eq!(values, ["1", "2", "3"], "lagging first: {lagging_first}");
        }
    }
}

#[tokio::test]
async fn a_record_published_while_another_waits_for_room_goes_after_it() {
    let bus = two_record_bus();
    let mut sub = bus.subscribe("g", &["a"]).unwrap();
    for value in ["1", "2"] {
        bus.publish(record("a", "k", value)).await.unwrap();
    }
    let third = bus.publish(record("a", "k", "3"));
    let mut out = Vec::new();
    sub.next_batch(&mut out, 1).await.unwrap();
    // The queue has room for one now; the fourth must not take it from the third.
    let fourth = bus.publish(record("a", "k", "4"));
    let publishes = tokio::spawn(async move { (third.await, fourth.await) });
    while out.len() < 4 {
        sub.next_batch(&mut out, 4).await.unwrap();
    }
    let (third, fourth) = publishes.await.unwrap();
    assert_eq!((third.unwrap().offset, fourth.unwrap().offset), (2, 3));
    let values: Vec<&Bytes> = out.iter().map(|m| &m.record.value).collect();
    assert_eq!(values, ["1", "2", "3", "4"]);
}
