//! Every HTTP listener of cms: the REST API's, the ops listeners (`--ops-addr`) and a
//! gateway's probes. [`server`] is hyper's HTTP/1 with the limits a stranger must not get past
//! (a connection cap, header and request timeouts, a bounded head); [`request_metrics`] counts
//! what each router answers; [`probes`] is the `/healthz`, `/readyz`, `/metrics` router of a
//! process without the REST API. Nothing here knows the REST API: a gateway serves its probes
//! without linking it.
#![forbid(unsafe_code)]

pub mod probes;
pub mod request_metrics;
pub mod server;

pub use probes::{ops_router, prometheus_text};
pub use server::{
    AnswerBy, DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_REQUEST_TIMEOUT, HttpLimits,
    OPS_LIMITS, Served, UriRewrite, serve, serve_as, serve_with,
};
