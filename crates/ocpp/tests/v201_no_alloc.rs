//! A valid 2.0.1 MeterValues or TransactionEvent(Updated) without escapes is checked without a
//! single heap allocation: counted by a global allocator of this test binary's own.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use cms_ocpp::v201::{Action, Checked, check_request};

/// The system allocator, counting allocations.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const METER_VALUES: &str = r#"{"evseId":1,"meterValue":[{"timestamp":"2026-11-21T10:15:00.000Z","sampledValue":[{"value":15243.7,"context":"Sample.Periodic","measurand":"Energy.Active.Import.Register","location":"Outlet","unitOfMeasure":{"unit":"Wh"}},{"value":16.1,"context":"Sample.Periodic","measurand":"Current.Import","phase":"L1","location":"Outlet","unitOfMeasure":{"unit":"A"}},{"value":229.8,"context":"Sample.Periodic","measurand":"Voltage","phase":"L1-N","location":"Outlet","unitOfMeasure":{"unit":"V"}}]}]}"#;

const TRANSACTION_EVENT_UPDATED: &str = r#"{"eventType":"Updated","timestamp":"2026-11-21T10:15:00.000Z","triggerReason":"MeterValuePeriodic","seqNo":4,"offline":false,"transactionInfo":{"transactionId":"f8a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8","chargingState":"Charging"},"evse":{"id":1,"connectorId":1},"idToken":{"idToken":"04A2B3C4D5E680","type":"ISO14443"},"meterValue":[{"timestamp":"2026-11-21T10:15:00.000Z","sampledValue":[{"value":15243.7,"context":"Sample.Periodic","measurand":"Energy.Active.Import.Register","location":"Outlet","unitOfMeasure":{"unit":"Wh"}},{"value":16.1,"context":"Sample.Periodic","measurand":"Current.Import","phase":"L1","location":"Outlet","unitOfMeasure":{"unit":"A"}}]}]}"#;

/// Heap allocations of one `check_request`, once the schemas are compiled.
fn allocations(action: Action, payload: &str) -> u64 {
    // The first call compiles the schemas (once per process).
    assert!(check_request(action, payload).is_ok(), "{payload}");
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let checked = check_request(action, payload);
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    assert!(
        matches!(
            checked,
            Ok(Checked::MeterValues { .. } | Checked::TransactionEvent(_))
        ),
        "{checked:?}"
    );
    after - before
}

// One test only: the counter is global, and a second test thread would count too.
#[test]
fn valid_meter_values_and_transaction_events_are_checked_without_allocating() {
    assert_eq!(allocations(Action::MeterValues, METER_VALUES), 0);
    assert_eq!(
        allocations(Action::TransactionEvent, TRANSACTION_EVENT_UPDATED),
        0
    );
    // The counter counts: the tree path, taken for a refusal, allocates.
    let refused = METER_VALUES.replace(r#""evseId":1"#, r#""evseId":"1""#);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    assert!(check_request(Action::MeterValues, &refused).is_err());
    assert!(ALLOCATIONS.load(Ordering::Relaxed) > before);
}
