//! What the price messages of both versions share (1.6's pricing whitepaper in
//! `price_display`, 2.0.1's tariff and cost in `price_display_v201`): their pace, and how a
//! cost is written.

use serde_json::Value;
use std::time::Duration;

/// A running transaction's cost is sent at most this often (on a kept meter reading).
pub(crate) const RUNNING_COST_EVERY: Duration = Duration::from_secs(300);

/// A decimal string as a JSON number, written as is.
pub(crate) fn number(decimal: &str) -> Result<Value, String> {
    serde_json::from_str::<serde_json::Number>(decimal)
        .map(Value::Number)
        .map_err(|e| format!("{decimal:?}: {e}"))
}
