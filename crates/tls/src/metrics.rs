//! The crate's metrics, labelled by listener (`ocpp`, `http`): a handful of series per process.

use chrono::{DateTime, Utc};

/// `cms_tls_reloads_total{listener,result}`: `result` is `ok` or `error`; an error means the
/// listener still serves its previous certificate.
pub(crate) fn count_reload(listener: &'static str, ok: bool) {
    let result = if ok { "ok" } else { "error" };
    metrics::counter!("cms_tls_reloads_total", "listener" => listener, "result" => result)
        .increment(1);
}

/// `cms_tls_certificate_expiry_timestamp_seconds{listener}`: the served chain's earliest
/// notAfter, for an alert such as `... - time() < 14 * 86400`.
pub(crate) fn set_expiry(listener: &'static str, not_after: DateTime<Utc>) {
    metrics::gauge!("cms_tls_certificate_expiry_timestamp_seconds", "listener" => listener)
        .set(not_after.timestamp() as f64);
}
