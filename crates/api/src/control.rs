//! The control side: what the API sends chargers and gateways. Actions through `Dispatch`, the
//! local authorisation lists, smart charging, prices on the charger, the costs of sessions,
//! and the registry the gateways hold (and, in `cms up`, its gateway reading each change).

pub(crate) mod actions;
pub(crate) mod certificates;
pub(crate) mod diagnostics;
pub(crate) mod frames_from_bus;
pub(crate) mod gateway_in_process;
pub(crate) mod local_lists;
pub(crate) mod price_display;
pub(crate) mod price_display_v201;
pub(crate) mod price_messages;
pub(crate) mod pricing;
pub(crate) mod registry;
pub(crate) mod reservations;
pub(crate) mod smart_charging;
