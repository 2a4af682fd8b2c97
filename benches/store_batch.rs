//! The materialiser's writes of one batch (`Store::apply`, one transaction):
//! - `1000_readings`: 1,000 chargers, one reading each, as a batch holds them when 1,000
//!   chargers send meter values flat out;
//! - `200_reports`: the final reports of 200 actions while 1,000 more are still open, as a
//!   batch holds them with a command a second per charger in flight (the actions are stored
//!   before each run, untimed).
//!
//! On SQLite always; on PostgreSQL too when `CMS_TEST_POSTGRES_URL` names a server
//! (`scripts/test` prints the one it starts):
//!
//! `cargo bench -p cms-store --features test-util --bench store_batch`

use cms_store::actions::{ActionReported, NewAction};
use cms_store::{NewCharger, StateChange, Store};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use tokio::runtime::Runtime;

const CHARGERS: usize = 1_000;
/// Actions reported in one batch, and actions left open beside them.
const REPORTED: usize = 200;
const OPEN: usize = 1_000;

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

/// A pending action for the charger `charger_id`.
fn action(charger_id: i64, uuid: String) -> NewAction {
    NewAction {
        uuid,
        charger_id,
        session: "s-1".into(),
        action: "DataTransfer".into(),
        request: r#"{"vendorId":"cms.bench"}"#.into(),
        requested_by_type: "user".into(),
        requested_by_email: Some("op@example.com".into()),
        timeout_ms: 30_000,
        created_at: "2026-11-21T10:00:00.000000Z".into(),
        expires_at: "2026-11-21T10:01:00.000000Z".into(),
        ocpp_version: "1.6".into(),
        published: true,
    }
}

/// `REPORTED` new pending actions, stored; their final reports, as a batch holds them.
async fn stored_actions(store: &Store, charger_id: i64, run: usize) -> Vec<StateChange> {
    let mut reports = Vec::with_capacity(REPORTED);
    for n in 0..REPORTED {
        let action = action(charger_id, format!("run-{run}-{n}"));
        store.insert_action(&action).await.unwrap();
        reports.push(StateChange::ActionReported(Box::new(ActionReported {
            identity: identity(0),
            action,
            status: "answered".into(),
            response: Some(r#"{"status":"Accepted"}"#.into()),
            error_code: None,
            error_description: None,
            sent_at: Some("2026-11-21T10:00:00.010000Z".into()),
            finished_at: Some("2026-11-21T10:00:00.020000Z".into()),
            settings: None,
            credential: None,
            at: "2026-11-21T10:00:00.100000Z".into(),
        })));
    }
    reports
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

    let mut group = c.benchmark_group("store_batch/200_reports");
    group.sample_size(20);
    // Numbers each run's actions, whose uuids must be new.
    let mut runs = 0..;
    for (backend, store) in &stores {
        let charger_id = rt.block_on(async {
            let (id, _) = store
                .charger_by_identity(&identity(0))
                .await
                .unwrap()
                .unwrap();
            for n in 0..OPEN {
                store
                    .insert_action(&action(id, format!("open-{n}")))
                    .await
                    .unwrap();
            }
            id
        });
        group.bench_function(*backend, |b| {
            b.iter_batched(
                || rt.block_on(stored_actions(store, charger_id, runs.next().unwrap())),
                |reports| rt.block_on(store.apply(&reports)).unwrap(),
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
