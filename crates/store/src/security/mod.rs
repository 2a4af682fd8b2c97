//! Security of the stations (docs/ocpp201.md "Security"): their security events, kept per
//! station (the newest [`EVENTS_KEPT`]), and the certificates cms signed for them, tracked to
//! their end so that they are renewed before it.

mod certificates;
mod events;

pub use certificates::{EndingCertificate, SignedCertificate, StationCertificateRow};
pub(crate) use events::keep_event;
pub use events::{EVENTS_KEPT, SecurityEvent, SecurityEventRow, is_critical};

#[cfg(test)]
mod tests;
