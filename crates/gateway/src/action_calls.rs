//! The calls a session sends its charger: one in flight at a time (the OCPP-J rule), the rest
//! waiting in the session's inbox in the order they were taken. Each ends in one report: an
//! answer matched by message id, a CALLERROR, a time-out, or, for one never sent, its deadline
//! or the session's end.

use crate::Shared;
use crate::actions::{ActionInbox, disconnected, finished, publish_report};
use crate::boot_configuration::{configuration_too_large, is_configuration_read};
use crate::charger_calls::ChargerAnswer;
use crate::record_time::record_time;
use chrono::{DateTime, Utc};
use cms_bus::{ActionError, ActionName, ActionReport, ActionRequest, ActionStatus};
use cms_ocpp::v16::SchemaViolation;
use cms_ocpp::{ErrorCode, OcppVersion};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A call written to the charger, waiting for its answer.
struct InFlight {
    command: ActionRequest,
    sent_at: String,
    sent: Instant,
    answer_by: Instant,
}

pub struct ActionCalls {
    pub inbox: Arc<ActionInbox>,
    /// The session's OCPP version: only an action taken for it is sent.
    version: OcppVersion,
    /// Boxed: an idle session holds none, and would otherwise hold its room all its life.
    in_flight: Option<Box<InFlight>>,
}

impl ActionCalls {
    pub fn new(inbox: Arc<ActionInbox>, version: OcppVersion) -> Self {
        ActionCalls {
            inbox,
            version,
            in_flight: None,
        }
    }

    /// Whether a call waits for its answer (no other may be sent meanwhile).
    pub fn busy(&self) -> bool {
        self.in_flight.is_some()
    }

    /// When the call in flight times out.
    pub fn answer_by(&self) -> Option<Instant> {
        self.in_flight.as_ref().map(|f| f.answer_by)
    }

    /// The next call to write, as frame text, once it is in flight; actions past their deadline
    /// (or whose request the schema refuses) end on the way without being sent.
    pub async fn next_call(&mut self, shared: &Shared) -> Option<String> {
        if self.busy() {
            return None;
        }
        while let Some(command) = self.inbox.pop() {
            let now = Utc::now();
            let opened = match opened_request(shared, &command) {
                Ok(opened) => opened,
                Err(error) => {
                    self.end_unsent(shared, command, ActionStatus::Failed, error)
                        .await;
                    continue;
                }
            };
            let request = opened.as_ref().unwrap_or(&command.request);
            if let Some((status, error)) = unsendable(self.version, &command, request, now) {
                self.end_unsent(shared, command, status, error).await;
                continue;
            }
            // The action's uuid is the message id: 36 characters, the most OCPP-J allows.
            let frame =
                cms_ocpp::call(&command.uuid, command.action.as_str(), &request.to_string());
            // A frame over the limit this gateway holds chargers' frames to would not fit the
            // socket's write buffer (the session would end) and could not be expected to fit
            // the charger's: not sent, and the charger stays connected.
            let limit = shared.config.max_frame_size;
            if frame.len() > limit {
                let error = ActionError::new(
                    "FrameTooLarge",
                    format!(
                        "the call is {} bytes, over the gateway's frame limit of {limit} \
                         (--max-frame-size); it was not sent",
                        frame.len()
                    ),
                );
                self.end_unsent(shared, command, ActionStatus::Failed, error)
                    .await;
                continue;
            }
            // A time-out of 0 is a command-line action whose service times an API of an
            // older version published unstamped (`cms_store::actions::SERVICE_TIMES`): this
            // gateway's own time-out then, never an answer due the moment it is asked.
            let timeout = match command.timeout_ms {
                0 => shared.config.command_timeout,
                ms => Duration::from_millis(ms),
            };
            self.in_flight = Some(Box::new(InFlight {
                command,
                sent_at: record_time(now),
                sent: Instant::now(),
                answer_by: Instant::now() + timeout,
            }));
            return Some(frame);
        }
        None
    }

    /// Ends an action never sent: its report, and the leader proxy server that made it told.
    async fn end_unsent(
        &self,
        shared: &Shared,
        command: ActionRequest,
        status: ActionStatus,
        error: ActionError,
    ) {
        self.tell_leader(&command.uuid, &error);
        let report = finished(shared, command, status, None, Some(error), None);
        publish_report(shared, report).await;
    }

    /// Tells the leader proxy server that made call `uuid`, if one did, why it ended without the
    /// charger's answer.
    fn tell_leader(&self, uuid: &str, error: &ActionError) {
        if let Some(reply) = self.inbox.take_reply(uuid) {
            let _ = reply.send(ChargerAnswer::Error {
                message_id: uuid.to_string(),
                code: error.code.clone(),
                description: error.description.clone(),
            });
        }
    }

    /// Reports the call just written as sent.
    pub async fn report_sent(&self, shared: &Shared) {
        let Some(in_flight) = &self.in_flight else {
            return;
        };
        let report = ActionReport {
            command: in_flight.command.clone(),
            status: ActionStatus::Sent,
            gateway: shared.config.node_id.clone(),
            response: None,
            error: None,
            sent_at: Some(in_flight.sent_at.clone()),
            finished_at: None,
        };
        publish_report(shared, report).await;
    }

    /// Matches an answer from the charger to the call in flight; one that matches none (an
    /// unknown id, or an answer after its call timed out) is counted and dropped. `identity`
    /// names the charger in the log.
    pub async fn on_answer(&mut self, shared: &Shared, identity: &str, answer: ChargerAnswer) {
        let matches = self
            .in_flight
            .as_ref()
            .is_some_and(|f| f.command.uuid == answer.message_id());
        // Taken only when it matches: a stray or late answer must not end the call in flight.
        let Some(in_flight) = self.in_flight.take_if(|_| matches) else {
            metrics::counter!("cms_gateway_unmatched_answers_total").increment(1);
            tracing::debug!(
                identity,
                message_id = answer.message_id(),
                "answer to no call in flight"
            );
            return;
        };
        metrics::histogram!("cms_gateway_command_latency_seconds").record(in_flight.sent.elapsed());
        if let Some(reply) = self.inbox.take_reply(&in_flight.command.uuid) {
            let _ = reply.send(answer.clone());
        }
        let (status, response, error) = match answer {
            ChargerAnswer::Result { payload, .. } => {
                match checked_response(self.version, &in_flight.command, &payload) {
                    Ok(response) => (ActionStatus::Answered, Some(response), None),
                    Err(error) => (ActionStatus::Failed, None, Some(error)),
                }
            }
            ChargerAnswer::Error {
                code, description, ..
            } => (
                ActionStatus::Failed,
                None,
                Some(ActionError::new(&code, description)),
            ),
        };
        let sent_at = Some(in_flight.sent_at);
        let report = finished(shared, in_flight.command, status, response, error, sent_at);
        publish_report(shared, report).await;
    }

    /// Ends the call in flight as timed out if its time is up.
    pub async fn on_timer(&mut self, shared: &Shared, now: Instant) {
        if self.answer_by().is_some_and(|at| now >= at) {
            let error = ActionError::new("Timeout", "the charger did not answer in time");
            self.end_in_flight(shared, ActionStatus::TimedOut, error)
                .await;
        }
    }

    /// A frame over the size limit ends the session. When the call in flight is the
    /// configuration read after a boot, that frame was, all but surely, the charger's whole
    /// configuration: the read ends `failed` with the remedy rather than `timed_out`, and
    /// `true` tells the session to read it no more. Any other call ends with the session.
    pub async fn end_oversized_configuration_read(&mut self, shared: &Shared) -> bool {
        let reading = self
            .in_flight
            .as_ref()
            .is_some_and(|f| is_configuration_read(&f.command));
        if reading {
            let error = configuration_too_large(shared.config.max_frame_size);
            self.end_in_flight(shared, ActionStatus::Failed, error)
                .await;
        }
        reading
    }

    /// The session is over: the call in flight can no longer be answered, and what waited is
    /// never sent.
    pub async fn end(&mut self, shared: &Shared) {
        let error = ActionError::new(
            "ConnectionLost",
            "the connection ended before the charger answered",
        );
        self.end_in_flight(shared, ActionStatus::TimedOut, error)
            .await;
        for command in self.inbox.close() {
            let report = finished(
                shared,
                command,
                ActionStatus::Expired,
                None,
                Some(disconnected()),
                None,
            );
            publish_report(shared, report).await;
        }
    }

    /// Ends the call in flight, unanswered, as `status`.
    async fn end_in_flight(&mut self, shared: &Shared, status: ActionStatus, error: ActionError) {
        if let Some(in_flight) = self.in_flight.take() {
            // A leader proxy server waiting for this call's answer learns it will not come.
            self.tell_leader(&in_flight.command.uuid, &error);
            let sent_at = Some(in_flight.sent_at);
            let report = finished(
                shared,
                in_flight.command,
                status,
                None,
                Some(error),
                sent_at,
            );
            publish_report(shared, report).await;
        }
    }
}

/// When the API sealed the request for its secret (the command shows it masked), the request
/// to write to the charger, opened with this gateway's key; `None`: the command's own.
fn opened_request(
    shared: &Shared,
    command: &ActionRequest,
) -> Result<Option<serde_json::Value>, ActionError> {
    let Some(sealed) = &command.sealed_request else {
        return Ok(None);
    };
    let opened = (shared.config.secrets_key.as_ref())
        .and_then(|key| key.open(&command.uuid, sealed))
        .and_then(|plain| serde_json::from_slice(&plain).ok());
    opened.map(Some).ok_or_else(|| {
        ActionError::new(
            "SecretUnreadable",
            "the action carries a secret sealed with a key this gateway does not have \
             (--secrets-key must be the same on the API and its gateways); it was not sent",
        )
    })
}

/// Why an action may not be sent now, and how it ends: past its deadline (expired), taken for
/// another OCPP version than the session's (the station reconnected speaking the other: failed,
/// never sent as a call it would read otherwise), or not a request (`request`, as it is to be
/// sent) of a known action that fits its schema (failed; checked again here because any
/// producer can write the topic), the code spelled as the session's version spells it.
fn unsendable(
    version: OcppVersion,
    command: &ActionRequest,
    request: &serde_json::Value,
    now: DateTime<Utc>,
) -> Option<(ActionStatus, ActionError)> {
    let deadline = DateTime::parse_from_rfc3339(&command.expires_at).ok();
    if deadline.is_none_or(|deadline| now >= deadline) {
        let error = ActionError::new("Expired", "its deadline passed before it could be sent");
        return Some((ActionStatus::Expired, error));
    }
    if command.ocpp_version != version {
        let error = ActionError::new(
            "VersionMismatch",
            format!(
                "taken for {}, but the charger's session speaks {} (it reconnected speaking the \
                 other version); it was not sent",
                command.ocpp_version.subprotocol(),
                version.subprotocol()
            ),
        );
        return Some((ActionStatus::Failed, error));
    }
    let refused = match &command.action {
        ActionName::V16(action) => action.validate_request(request),
        ActionName::V201(action) => action.validate_request(request),
        ActionName::Unknown(_) => {
            let why = format!(
                "not an OCPP {} central system action",
                cms_bus::version_number(version)
            );
            let code = ErrorCode::NotImplemented.spelled(version);
            return Some((ActionStatus::Failed, ActionError::new(code, why)));
        }
    };
    let refused = refused.err()?;
    Some((ActionStatus::Failed, violation(version, refused.first())))
}

/// A schema violation as an action's error, its code spelled for `version`.
fn violation(version: OcppVersion, refused: &SchemaViolation) -> ActionError {
    let first = &refused.violation;
    ActionError::new(first.code.spelled(version), first.description.clone())
}

/// The charger's answer, if it fits the action's response schema of the session's version.
fn checked_response(
    version: OcppVersion,
    command: &ActionRequest,
    payload: &str,
) -> Result<serde_json::Value, ActionError> {
    let response: serde_json::Value = serde_json::from_str(payload).map_err(|e| {
        let code = ErrorCode::FormationViolation.spelled(version);
        ActionError::new(code, format!("the answer is not JSON: {e}"))
    })?;
    let checked = match &command.action {
        ActionName::V16(action) => action.validate_response(&response),
        ActionName::V201(action) => action.validate_response(&response),
        ActionName::Unknown(_) => Ok(()),
    };
    checked.map_err(|refused| violation(version, refused.first()))?;
    Ok(response)
}
