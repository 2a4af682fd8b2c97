//! The materialiser's write of one batch of readings: 1,000 chargers, one reading each, as a
//! batch holds them when 1,000 chargers send meter values flat out (`Store::apply`, one
//! transaction). On SQLite always; on PostgreSQL too when `CMS_TEST_POSTGRES_URL` names a server
//! (`scripts/test` prints the one it starts):
//!
//! `cargo bench -p cms-store --features test-util --bench store_batch`

use cms_store::{NewCharger, StateChange, Store};
use criterion::{Criterion, criterion_group, criterion_main};
use tokio::runtime::Runtime;

const CHARGERS: usize = 1_000;

fn identity(n: usize) -> String {
    format!("BENCH-{n:05}")
}

/// A 3-sample reading in the REST form the materialiser stores.
fn batch() -> Vec<StateChange> {
    (0..CHARGERS)
        .map(|n| StateChange::MeterValue {
            identity: identity(n),
            connector_id: 1,
            meter_value: format!(
                r#"[{{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{{"value":"{n}.5","measurand":"Energy.Active.Import.Register","unit":"Wh"}},{{"value":"16.1","measurand":"Current.Import","phase":"L1","unit":"A"}},{{"value":"230.2","measurand":"Voltage","phase":"L1-N","unit":"V"}}]}}]"#
            ),
            measured_at: "2026-11-21T10:00:00.000000Z".into(),
            energy: None,
            at: "2026-11-21T10:00:00.100000Z".into(),
        })
        .collect()
}

async fn registered(store: Store) -> Store {
    let chargers: Vec<NewCharger> = (0..CHARGERS)
        .map(|n| NewCharger {
            identity: identity(n),
            ..Default::default()
        })
        .collect();
    store.add_chargers(&chargers).await.unwrap();
    store
}

fn bench(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut stores = vec![(
        "sqlite",
        rt.block_on(async { registered(Store::open(dir.path()).await.unwrap()).await }),
    )];
    if let Ok(url) = std::env::var("CMS_TEST_POSTGRES_URL") {
        let store = rt.block_on(async {
            let url = cms_store::testing::fresh_schema(&url).await.unwrap();
            registered(Store::open_url(&url).await.unwrap()).await
        });
        stores.push(("postgres", store));
    }
    let batch = batch();
    let mut group = c.benchmark_group("store_batch/1000_readings");
    group.sample_size(20);
    for (backend, store) in &stores {
        group.bench_function(*backend, |b| {
            b.iter(|| rt.block_on(store.apply(&batch)).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
