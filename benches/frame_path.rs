//! The gateway's frame path beyond parsing: one charger frame in, validated, answered, and its
//! bus record handed to the in-process bus (which a drained consumer group reads), as
//! `cms up` does for every CALL. Regressions on the way from socket bytes to bus show here,
//! as time (criterion) and as heap allocations per frame (counted by the allocator below and
//! printed before the timings, one line per message kind).

use bytes::Bytes;
use chrono::Utc;
use cms_bus::{Bus, InProcessBus, InProcessConfig, Publisher, Topics};
use cms_gateway::charger_calls::{CallContext, Handled, Outcome, handle_text};
use cms_gateway::charger_calls_v201::handle_text_v201;
use cms_gateway::{TransactionIds, open_authority};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const METER_VALUES: &str = r#"[2,"4f1c","MeterValues",{"connectorId":1,"transactionId":18342,"meterValue":[{"timestamp":"2026-11-21T10:15:00.000Z","sampledValue":[{"value":"15243.7","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"},{"value":"16.1","context":"Sample.Periodic","format":"Raw","measurand":"Current.Import","phase":"L1","location":"Outlet","unit":"A"},{"value":"229.8","context":"Sample.Periodic","format":"Raw","measurand":"Voltage","phase":"L1-N","location":"Outlet","unit":"V"}]}]}]"#;
const HEARTBEAT: &str = r#"[2,"4f1d","Heartbeat",{}]"#;

/// One frame of each charger message, as real chargers send them.
const FRAMES: [(&str, &str); 10] = [
    ("meter_values_3_samples", METER_VALUES),
    ("heartbeat", HEARTBEAT),
    (
        "boot_notification",
        r#"[2,"4f1e","BootNotification",{"chargePointVendor":"Alfen BV","chargePointModel":"NG920-61001","chargePointSerialNumber":"ACE0001234","firmwareVersion":"6.1.0-4159","meterType":"Eastron SDM630"}]"#,
    ),
    (
        "status_notification",
        r#"[2,"4f1f","StatusNotification",{"connectorId":1,"errorCode":"NoError","status":"Charging","timestamp":"2026-11-21T10:15:00.000Z"}]"#,
    ),
    (
        "authorize",
        r#"[2,"4f20","Authorize",{"idTag":"04A2B3C4D5E680"}]"#,
    ),
    (
        "start_transaction",
        r#"[2,"4f21","StartTransaction",{"connectorId":1,"idTag":"04A2B3C4D5E680","meterStart":15243,"timestamp":"2026-11-21T10:15:00.000Z"}]"#,
    ),
    (
        "stop_transaction",
        r#"[2,"4f22","StopTransaction",{"transactionId":18342,"idTag":"04A2B3C4D5E680","meterStop":25243,"timestamp":"2026-11-21T11:15:00.000Z","reason":"Local"}]"#,
    ),
    (
        "data_transfer",
        r#"[2,"4f23","DataTransfer",{"vendorId":"com.alfen","messageId":"diag","data":"{\"temp\":41}"}]"#,
    ),
    (
        "firmware_status_notification",
        r#"[2,"4f24","FirmwareStatusNotification",{"status":"Installed"}]"#,
    ),
    (
        "diagnostics_status_notification",
        r#"[2,"4f25","DiagnosticsStatusNotification",{"status":"Uploaded"}]"#,
    ),
];

/// One frame of each 2.0.1 station message on the hot path and the common others, with the
/// readings of [`METER_VALUES`] (2.0.1 writes values as numbers).
const FRAMES_201: [(&str, &str); 5] = [
    (
        "v201_meter_values_3_samples",
        r#"[2,"4f30","MeterValues",{"evseId":1,"meterValue":[{"timestamp":"2026-11-21T10:15:00.000Z","sampledValue":[{"value":15243.7,"context":"Sample.Periodic","measurand":"Energy.Active.Import.Register","location":"Outlet","unitOfMeasure":{"unit":"Wh"}},{"value":16.1,"context":"Sample.Periodic","measurand":"Current.Import","phase":"L1","location":"Outlet","unitOfMeasure":{"unit":"A"}},{"value":229.8,"context":"Sample.Periodic","measurand":"Voltage","phase":"L1-N","location":"Outlet","unitOfMeasure":{"unit":"V"}}]}]}]"#,
    ),
    (
        "v201_transaction_event_updated",
        r#"[2,"4f31","TransactionEvent",{"eventType":"Updated","timestamp":"2026-11-21T10:15:00.000Z","triggerReason":"MeterValuePeriodic","seqNo":7,"transactionInfo":{"transactionId":"a1b2c3d4-e5f6-4711-8899-aabbccddeeff","chargingState":"Charging"},"evse":{"id":1,"connectorId":1},"meterValue":[{"timestamp":"2026-11-21T10:15:00.000Z","sampledValue":[{"value":15243.7,"context":"Sample.Periodic","measurand":"Energy.Active.Import.Register","location":"Outlet","unitOfMeasure":{"unit":"Wh"}},{"value":16.1,"context":"Sample.Periodic","measurand":"Current.Import","phase":"L1","location":"Outlet","unitOfMeasure":{"unit":"A"}},{"value":229.8,"context":"Sample.Periodic","measurand":"Voltage","phase":"L1-N","location":"Outlet","unitOfMeasure":{"unit":"V"}}]}]}]"#,
    ),
    ("v201_heartbeat", r#"[2,"4f32","Heartbeat",{}]"#),
    (
        "v201_status_notification",
        r#"[2,"4f33","StatusNotification",{"timestamp":"2026-11-21T10:15:00.000Z","connectorStatus":"Occupied","evseId":1,"connectorId":1}]"#,
    ),
    (
        "v201_transaction_event_started",
        r#"[2,"4f34","TransactionEvent",{"eventType":"Started","timestamp":"2026-11-21T10:15:00.000Z","triggerReason":"Authorized","seqNo":0,"transactionInfo":{"transactionId":"a1b2c3d4-e5f6-4711-8899-aabbccddeeff"},"idToken":{"idToken":"04A2B3C4D5E680","type":"ISO14443"},"evse":{"id":1,"connectorId":1}}]"#,
    ),
];

/// The system allocator, counting what the bench thread asks of it.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static ALLOCATED_BYTES: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED_BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        ALLOCATED_BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Heap allocations and bytes asked for per call of `f`, averaged over many calls after a warm
/// up (steady state: caches filled, transaction ids known).
fn allocations_per_call(mut f: impl FnMut()) -> (f64, f64) {
    const CALLS: u64 = 1_000;
    for _ in 0..CALLS {
        f();
    }
    let (count, bytes) = (
        ALLOCATIONS.load(Ordering::Relaxed),
        ALLOCATED_BYTES.load(Ordering::Relaxed),
    );
    for _ in 0..CALLS {
        f();
    }
    let count = ALLOCATIONS.load(Ordering::Relaxed) - count;
    let bytes = ALLOCATED_BYTES.load(Ordering::Relaxed) - bytes;
    (count as f64 / CALLS as f64, bytes as f64 / CALLS as f64)
}

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
        version: cms_ocpp::OcppVersion::V16,
        topics: &topics,
        transaction_ids: &transaction_ids,
        authority: &authority,
        heartbeat_interval_secs: 300,
    };

    let ctx_201 = CallContext {
        version: cms_ocpp::OcppVersion::V201,
        ..ctx
    };
    // Each frame with the handler of its version.
    type Handler = fn(&CallContext<'_>, &str, &Bytes, chrono::DateTime<Utc>) -> Handled;
    let v16: Handler = handle_text;
    let v201: Handler = handle_text_v201;
    let all = || {
        let ones = FRAMES.iter().map(|&(name, text)| (name, text, &ctx, v16));
        ones.chain(
            FRAMES_201
                .iter()
                .map(|&(name, text)| (name, text, &ctx_201, v201)),
        )
    };

    println!("heap allocations per frame, validate_and_answer (count, bytes):");
    for (name, text, ctx, handle) in all() {
        let frame = Bytes::from_static(text.as_bytes());
        let (count, bytes) = allocations_per_call(|| {
            let handled = handle(ctx, black_box(text), &frame, Utc::now());
            assert!(
                matches!(handled.outcome, Outcome::Publish { .. }),
                "{name} is a valid frame"
            );
            black_box(handled);
        });
        println!("  {name:<32} {count:>6.2} {bytes:>7.0}");
    }

    let mut group = c.benchmark_group("frame_path");
    for (name, text, ctx, handle) in all() {
        let frame = Bytes::from_static(text.as_bytes());
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(format!("{name}/validate_and_answer"), |b| {
            b.iter(|| handle(ctx, black_box(text), &frame, Utc::now()))
        });
    }

    // The same, with the record handed to the bus and its acknowledgement awaited. The consumer
    // below runs only once the queue is full (a publish with room is ready at once), so the
    // queue's blocks, one per 32 records, are counted here; a running cms up, whose consumer
    // keeps up, reuses them.
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
    let publish = || {
        let handled = handle_text(&ctx, METER_VALUES, &frame, Utc::now());
        let Outcome::Publish { record, answer, .. } = handled.outcome else {
            panic!("a valid MeterValues frame is published");
        };
        runtime.block_on(bus.publish(record)).expect("published");
        black_box(answer)
    };
    let (count, bytes) = allocations_per_call(|| drop(publish()));
    println!("heap allocations per frame, validate_answer_publish (count, bytes):");
    println!(
        "  {:<32} {count:>6.2} {bytes:>7.0}",
        "meter_values_3_samples"
    );
    group.throughput(Throughput::Bytes(METER_VALUES.len() as u64));
    group.bench_function("meter_values_3_samples/validate_answer_publish", |b| {
        b.iter(publish)
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = frame_path
}
criterion_main!(benches);
