//! Gateway metrics, as handles made once: no label per charger, no lookup per frame.

use crate::charger_action::ChargerAction;
use cms_bus::ActionStatus;
use cms_ocpp::ErrorCode;
use cms_ocpp::v16::Command;
use metrics::{Counter, Gauge, Histogram, counter, gauge, histogram};

/// Why a session ended; the label of `cms_gateway_disconnects_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisconnectReason {
    ClosedByCharger,
    ConnectionLost,
    IdleTimeout,
    Replaced,
    Shutdown,
    FrameTooLarge,
    ProtocolError,
    NoSubprotocol,
}

impl DisconnectReason {
    pub const ALL: [DisconnectReason; 8] = [
        DisconnectReason::ClosedByCharger,
        DisconnectReason::ConnectionLost,
        DisconnectReason::IdleTimeout,
        DisconnectReason::Replaced,
        DisconnectReason::Shutdown,
        DisconnectReason::FrameTooLarge,
        DisconnectReason::ProtocolError,
        DisconnectReason::NoSubprotocol,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DisconnectReason::ClosedByCharger => "closed_by_charger",
            DisconnectReason::ConnectionLost => "connection_lost",
            DisconnectReason::IdleTimeout => "idle_timeout",
            DisconnectReason::Replaced => "replaced",
            DisconnectReason::Shutdown => "shutdown",
            DisconnectReason::FrameTooLarge => "frame_too_large",
            DisconnectReason::ProtocolError => "protocol_error",
            DisconnectReason::NoSubprotocol => "no_subprotocol",
        }
    }
}

/// What an incoming frame was, for `cms_gateway_frames_in_total{action}`.
#[derive(Debug, Clone, Copy)]
pub enum FrameKind {
    Call(ChargerAction),
    CallResult,
    CallError,
    /// Not a frame, or a CALL of an action we do not know.
    Invalid,
}

pub struct GatewayMetrics {
    pub open: Gauge,
    pub connects: Counter,
    disconnects: Vec<Counter>,
    calls_in: Vec<Counter>,
    results_in: Counter,
    errors_in: Counter,
    invalid_in: Counter,
    results_out: Vec<Counter>,
    errors_out: Counter,
    error_codes: Vec<Counter>,
    pub publish_latency: Histogram,
    /// From a charger's CALL read off the socket to its answer handed to the socket, by action:
    /// parsing, the bus acknowledgement when the answer waits for it, and any proxy leader.
    answer_latency: Vec<Histogram>,
    pub publish_failures: Counter,
    /// From a ping the gateway sent to the pong that answered it.
    pub ping_rtt: Histogram,
    /// Sessions a draining gateway closed in turn (`Gateway::drain`).
    pub drained: Counter,
    /// Refused connections kept here but not put on the connections topic: past the second's
    /// budget (`diagnostics.rs`), so the `cms api` replicas do not list them.
    pub refusals_unpublished: Counter,
    /// Boots not followed by the configuration read, as the charger's configuration is larger
    /// than `--max-frame-size` (`BootConfigurationReads`).
    pub configuration_reads_skipped: Counter,
}

impl GatewayMetrics {
    /// Makes the handles; the metrics recorder must be installed before.
    pub fn new() -> Self {
        Self::register_at_zero();
        let frames_in =
            |action: &'static str| counter!("cms_gateway_frames_in_total", "action" => action);
        GatewayMetrics {
            open: gauge!("cms_gateway_connections_open"),
            connects: counter!("cms_gateway_connects_total"),
            disconnects: DisconnectReason::ALL
                .iter()
                .map(|r| counter!("cms_gateway_disconnects_total", "reason" => r.as_str()))
                .collect(),
            // One place per action of each version; a name both versions have shares its
            // series (the metrics are by action, not by version).
            calls_in: ChargerAction::all()
                .map(|a| frames_in(a.as_str()))
                .collect(),
            results_in: frames_in("CallResult"),
            errors_in: frames_in("CallError"),
            invalid_in: frames_in("invalid"),
            results_out: ChargerAction::all()
                .map(|a| counter!("cms_gateway_frames_out_total", "action" => a.as_str()))
                .collect(),
            errors_out: counter!("cms_gateway_frames_out_total", "action" => "CallError"),
            error_codes: ErrorCode::ALL
                .iter()
                .map(|c| counter!("cms_gateway_errors_total", "code" => c.as_str()))
                .collect(),
            publish_latency: histogram!("cms_gateway_publish_latency_seconds"),
            answer_latency: ChargerAction::all()
                .map(|a| histogram!("cms_gateway_answer_latency_seconds", "action" => a.as_str()))
                .collect(),
            publish_failures: counter!("cms_gateway_publish_failures_total"),
            ping_rtt: histogram!("cms_gateway_ws_ping_rtt_seconds"),
            drained: counter!("cms_gateway_drained_total"),
            refusals_unpublished: counter!("cms_gateway_refusals_unpublished_total"),
            configuration_reads_skipped: counter!("cms_gateway_configuration_reads_skipped_total"),
        }
    }

    /// The metrics counted where they happen (not through a handle of this struct), made at 0
    /// before their first event: a panel then reads 0, not "no data", and an alert on their
    /// increase sees the first one (Prometheus cannot see a series' first sample rise).
    fn register_at_zero() {
        for reason in HANDSHAKE_REJECTIONS {
            counter!("cms_gateway_handshake_rejections_total", "reason" => reason).absolute(0);
        }
        for command in Command::ALL {
            for status in ActionStatus::ALL.into_iter().filter(|s| s.is_final()) {
                counter!(
                    "cms_gateway_commands_total",
                    "action" => command.as_str(),
                    "status" => status.as_str()
                )
                .absolute(0);
            }
        }
        let _ = histogram!("cms_gateway_command_latency_seconds");
        for outcome in crate::authorization::REAL_TIME_OUTCOMES {
            counter!("cms_gateway_ocpi_authorizations_total", "outcome" => outcome).absolute(0);
        }
    }

    pub fn disconnected(&self, reason: DisconnectReason) {
        let i = DisconnectReason::ALL
            .iter()
            .position(|r| *r == reason)
            .unwrap_or(0);
        self.disconnects[i].increment(1);
    }

    pub fn frame_in(&self, kind: FrameKind) {
        match kind {
            FrameKind::Call(action) => self.calls_in[action.index()].increment(1),
            FrameKind::CallResult => self.results_in.increment(1),
            FrameKind::CallError => self.errors_in.increment(1),
            FrameKind::Invalid => self.invalid_in.increment(1),
        }
    }

    pub fn result_out(&self, action: ChargerAction) {
        self.results_out[action.index()].increment(1);
    }

    /// The answer to a CALL of `action` read at `read` is on its way to the charger.
    pub fn answered(&self, action: ChargerAction, read: std::time::Instant) {
        self.answer_latency[action.index()].record(read.elapsed());
    }

    /// A CALLERROR sent, counted by its code.
    pub fn error_out(&self, code: ErrorCode) {
        self.errors_out.increment(1);
        let i = ErrorCode::ALL.iter().position(|c| *c == code).unwrap_or(0);
        self.error_codes[i].increment(1);
    }
}

/// Every reason a handshake is refused for: the labels of
/// `cms_gateway_handshake_rejections_total` (docs/operations.md).
pub const HANDSHAKE_REJECTIONS: [&str; 20] = [
    "bad_request",
    "unknown_charger",
    "directory_unavailable",
    "probe",
    "client_gone",
    "timeout",
    "no_subprotocol",
    "at_capacity",
    "unauthenticated_takeover",
    "unauthorized",
    "tls_required",
    "client_certificate_required",
    "client_certificate_mismatch",
    "client_certificate_organization_mismatch",
    "client_certificate_invalid",
    "tls_busy",
    "tls_handshake_failed",
    "tls_per_address",
    "tls_slow_start",
    "client_certificate_revoked",
];

/// Handshakes that did not become sessions, by reason.
pub fn handshake_rejected(reason: &'static str) {
    debug_assert!(
        HANDSHAKE_REJECTIONS.contains(&reason),
        "{reason} is not in HANDSHAKE_REJECTIONS"
    );
    counter!("cms_gateway_handshake_rejections_total", "reason" => reason).increment(1);
}
