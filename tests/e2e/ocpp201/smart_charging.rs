//! A mixed site balanced under one CT-meter limit (issue 45, block K): the smart-charging
//! simulation of tests/e2e/smart_charging.rs with four of its ten chargers OCPP 2.0.1 stations
//! (tests/interop/ocpp201_smart.py: the Python `ocpp` package's v201 ChargePoint, its schema
//! validation on), one of them on a 10 A connector, one among the cars that leave. The same
//! assertions as the 1.6 simulation: the limit held from the meter, equal shares, the minimum
//! or a pause, the paused served first, the fail-safe while the meter is quiet; and what the
//! 2.0.1 stations told (NotifyChargingLimit, NotifyEVChargingNeeds) shown by the API.
//!
//! Its plot is the one in docs/smart-charging.md:
//!
//! ```text
//! CMS_SMART_CHARGING_MIXED_PLOT=docs/img/smart-charging-mixed.png CARGO_INCREMENTAL=0 \
//!     cargo nextest run --locked --test e2e mixed_site
//! ```

use crate::smart_charging::simulate;

/// EV chargers 1, 4, 7 and 10 speak 2.0.1 (10 is one of the two 10 A connectors).
const V201: [usize; 4] = [1, 4, 7, 10];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_site_of_1_6_and_2_0_1_chargers_shares_one_grid_connection() {
    simulate(&V201, "CMS_SMART_CHARGING_MIXED_PLOT").await;
}
