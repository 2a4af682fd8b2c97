//! The gateway's frame path beyond parsing: one charger frame in, validated, answered, and its
//! bus record handed to the in-process bus (which a drained consumer group reads), as
//! `cms up` does for every CALL. Regressions on the way from socket bytes to bus show here.

use bytes::Bytes;
use chrono::Utc;
use cms_bus::{Bus, InProcessBus, InProcessConfig, Publisher, Topics};
use cms_gateway::calls::{CallContext, Outcome, handle_text};
use cms_gateway::{TransactionIds, open_authority};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

const METER_VALUES: &str = r#"[2,"4f1c","MeterValues",{"connectorId":1,"transactionId":18342,"meterValue":[{"timestamp":"2026-11-21T10:15:00.000Z","sampledValue":[{"value":"15243.7","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"},{"value":"16.1","context":"Sample.Periodic","format":"Raw","measurand":"Current.Import","phase":"L1","location":"Outlet","unit":"A"},{"value":"229.8","context":"Sample.Periodic","format":"Raw","measurand":"Voltage","phase":"L1-N","location":"Outlet","unit":"V"}]}]}]"#;
const HEARTBEAT: &str = r#"[2,"4f1d","Heartbeat",{}]"#;

fn frame_path(c: &mut Criterion) {
    let topics = Topics::with_prefix("bench");
    let identity_key = Bytes::from_static(b"CP-BENCH-1");
    let session = Bytes::from_static(b"session-1");
    let node = Bytes::from_static(b"gw-bench");
    let transaction_ids = TransactionIds::default();
    let authority = open_authority("CP-BENCH-1");
    let ctx = CallContext {
        identity: "CP-BENCH-1",
        identity_key: &identity_key,
        session: &session,
        node: &node,
        topics: &topics,
        transaction_ids: &transaction_ids,
        authority: &authority,
        heartbeat_interval_secs: 300,
    };

    let mut group = c.benchmark_group("frame_path");
    for (name, text) in [
        ("meter_values_3_samples", METER_VALUES),
        ("heartbeat", HEARTBEAT),
    ] {
        let frame = Bytes::from_static(text.as_bytes());
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(format!("{name}/validate_and_answer"), |b| {
            b.iter(|| handle_text(&ctx, black_box(text), &frame, Utc::now()))
        });
    }

    // The same, with the record handed to the bus and its acknowledgement awaited.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let bus = InProcessBus::new(InProcessConfig::default(), &topics.all());
    let mut subscriber = bus.subscribe("bench", &topics.all()).expect("subscribe");
    runtime.spawn(async move {
        let mut batch = Vec::with_capacity(1024);
        while subscriber.next_batch(&mut batch, 1024).await.unwrap_or(0) > 0 {
            batch.clear();
        }
    });
    let frame = Bytes::from_static(METER_VALUES.as_bytes());
    group.throughput(Throughput::Bytes(METER_VALUES.len() as u64));
    group.bench_function("meter_values_3_samples/validate_answer_publish", |b| {
        b.iter(|| {
            let handled = handle_text(&ctx, METER_VALUES, &frame, Utc::now());
            let Outcome::Publish { record, answer, .. } = handled.outcome else {
                panic!("a valid MeterValues frame is published");
            };
            runtime.block_on(bus.publish(record)).expect("published");
            black_box(answer)
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = frame_path
}
criterion_main!(benches);
