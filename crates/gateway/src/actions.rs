//! Actions for chargers, from the bus to the session that holds the charger: every gateway
//! follows the commands topic, and only the one holding the session an action is addressed to
//! queues it, in that session's inbox. So an action is sent at most once, and never by a
//! gateway that merely held the charger once.

use crate::Shared;
use crate::charger_calls::ChargerAnswer;
use crate::identity::ChargerIdentity;
use crate::record_time::record_time;
use chrono::Utc;
use cms_bus::{
    ActionError, ActionName, ActionReport, ActionRequest, ActionStatus, Message, Subscriber,
    command_of, report_record,
};
use cms_ocpp::v16::secrets;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, oneshot};

/// Actions one session may hold queued; past it an action fails at once (`QueueFull`) rather
/// than wait behind hundreds of others and reach the charger long after it was asked for.
pub const MAX_QUEUED: usize = 1_000;
/// Calls of a charger's leader proxy server waiting (or in flight) at once; past it the leader
/// is refused, so that its calls never fill the queue cms's own actions share.
pub const MAX_RELAYED: usize = 16;

/// The actions waiting for one session, in the order they were taken.
#[derive(Default)]
pub struct ActionInbox {
    state: Mutex<InboxState>,
    /// Wakes the session when an action arrives, or its charger's registration changed.
    pub ready: Notify,
    /// Set with `ready` when the charger's registration changed (its proxy set-up): one wake-up
    /// for both, so that a session's loop waits on no more than it did before relaying.
    registration_changed: AtomicBool,
    /// Where the charger's answer to a call relayed from its leader proxy server goes, by the
    /// call's uuid (besides the report every call ends with).
    replies: Mutex<HashMap<String, oneshot::Sender<ChargerAnswer>>>,
}

#[derive(Default)]
struct InboxState {
    queue: VecDeque<ActionRequest>,
    /// Set when the session ends: nothing is queued after its queue was drained.
    closed: bool,
}

/// Why an inbox did not take an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Full,
    Closed,
}

/// An action an inbox did not take, handed back to be reported.
#[derive(Debug)]
pub struct Refused {
    pub command: ActionRequest,
    pub why: Refusal,
}

impl ActionInbox {
    pub fn push(&self, command: ActionRequest) -> Result<(), Box<Refused>> {
        {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let refusal = if state.closed {
                Some(Refusal::Closed)
            } else if state.queue.len() >= MAX_QUEUED {
                Some(Refusal::Full)
            } else {
                None
            };
            if let Some(why) = refusal {
                return Err(Box::new(Refused { command, why }));
            }
            state.queue.push_back(command);
        }
        queue_depth().increment(1.0);
        self.ready.notify_one();
        Ok(())
    }

    /// Tells the session that its charger's registration changed.
    pub fn registration_changed(&self) {
        self.registration_changed.store(true, Ordering::Release);
        self.ready.notify_one();
    }

    /// Whether the registration changed since last asked.
    pub fn take_registration_change(&self) -> bool {
        self.registration_changed.swap(false, Ordering::AcqRel)
    }

    /// Queues a call of the charger's leader proxy server: the charger's answer goes to
    /// `reply` (dropped unanswered when the call ends another way).
    pub fn push_relayed(
        &self,
        command: ActionRequest,
        reply: oneshot::Sender<ChargerAnswer>,
    ) -> Result<(), Box<Refused>> {
        let uuid = command.uuid.clone();
        {
            let mut replies = self.replies.lock().unwrap_or_else(|e| e.into_inner());
            // A leader may not crowd out cms's own actions: a few of its calls wait at a time.
            if replies.len() >= MAX_RELAYED {
                return Err(Box::new(Refused {
                    command,
                    why: Refusal::Full,
                }));
            }
            replies.insert(uuid.clone(), reply);
        }
        self.push(command).inspect_err(|_| {
            self.take_reply(&uuid);
        })
    }

    /// The reply channel of a relayed call, once.
    pub fn take_reply(&self, uuid: &str) -> Option<oneshot::Sender<ChargerAnswer>> {
        let mut replies = self.replies.lock().unwrap_or_else(|e| e.into_inner());
        replies.remove(uuid)
    }

    pub fn pop(&self) -> Option<ActionRequest> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let popped = state.queue.pop_front();
        if state.queue.is_empty() && state.queue.capacity() > 0 {
            // Most chargers get a call now and then (the configuration read after each boot):
            // an empty queue holds no room, or every idle session keeps a kilobyte for it.
            state.queue = VecDeque::new();
        }
        drop(state);
        if popped.is_some() {
            queue_depth().decrement(1.0);
        }
        popped
    }

    /// Takes every queued action and refuses any later one: the session is ending.
    pub fn close(&self) -> Vec<ActionRequest> {
        let drained: Vec<ActionRequest> = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            state.closed = true;
            state.queue.drain(..).collect()
        };
        queue_depth().decrement(drained.len() as f64);
        self.replies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        drained
    }
}

fn queue_depth() -> metrics::Gauge {
    metrics::gauge!("cms_gateway_command_queue_depth")
}

/// Follows the commands topic until the bus closes, queueing each action in the inbox of the
/// session it is addressed to, when this gateway holds that session.
pub async fn follow(shared: Arc<Shared>, mut commands: Box<dyn Subscriber>) {
    let mut batch = Vec::new();
    loop {
        batch.clear();
        match commands.next_batch(&mut batch, 256).await {
            Ok(0) => return,
            Ok(_) => {
                for message in &batch {
                    // An API replica asking for a charger's frames: no action.
                    match cms_bus::FramesRequest::of(&message.record) {
                        Some(request) => crate::diagnostics::answer::answer(&shared, request),
                        None => deliver(&shared, message).await,
                    }
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot read the commands topic; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

async fn deliver(shared: &Shared, message: &Message) {
    let Some(command) = command_of(message) else {
        tracing::warn!(
            partition = message.partition,
            offset = message.offset,
            "skipping a commands record that is not an action"
        );
        return;
    };
    let Ok(identity) = ChargerIdentity::parse(&command.identity) else {
        return;
    };
    let live = (shared.sessions.get(&identity))
        .filter(|entry| entry.session.as_ref() == command.session.as_bytes())
        .map(|entry| entry.inbox.clone());
    let refused = match live {
        Some(inbox) => inbox.push(command),
        // Ours, but it ended before the action came: it can never be sent.
        None if shared.ended.contains(command.session.as_bytes()) => Err(Box::new(Refused {
            command,
            why: Refusal::Closed,
        })),
        // Another gateway's session: not ours to send, nor to report.
        None => return,
    };
    if let Err(refused) = refused {
        let Refused { command, why } = *refused;
        let (status, error) = match why {
            Refusal::Full => (
                ActionStatus::Failed,
                ActionError::new(
                    "QueueFull",
                    format!("{MAX_QUEUED} actions already wait for this charger"),
                ),
            ),
            Refusal::Closed => (ActionStatus::Expired, disconnected()),
        };
        publish_report(
            shared,
            finished(shared, command, status, None, Some(error), None),
        )
        .await;
    }
}

pub fn disconnected() -> ActionError {
    ActionError::new(
        "Disconnected",
        "the charger's connection ended before the action was sent",
    )
}

/// A final report of `command`, finished now.
pub fn finished(
    shared: &Shared,
    command: ActionRequest,
    status: ActionStatus,
    response: Option<serde_json::Value>,
    error: Option<ActionError>,
    sent_at: Option<String>,
) -> ActionReport {
    metrics::counter!(
        "cms_gateway_commands_total",
        "action" => action_label(&command.action),
        "status" => status.as_str()
    )
    .increment(1);
    ActionReport {
        command,
        status,
        gateway: shared.config.node_id.clone(),
        response,
        error,
        sent_at,
        finished_at: Some(record_time(Utc::now())),
    }
}

/// The action's name as a metric label: one of the commands, never free text from the bus.
fn action_label(action: &ActionName) -> &'static str {
    action.command().map_or("unknown", |c| c.as_str())
}

/// Publishes a report; a report the bus refuses is logged, and the API ends the action itself
/// once it is overdue. No secret leaves in it: neither the sealed request, nor a secret key's
/// value in the request (a leader proxy server's call is queued unmasked) or in a
/// GetConfiguration answer (the charger's own, the configuration read after a boot included).
///
/// Boxed: a report is rare beside the frames, and its state, inlined, would be part of every
/// session's future, so of every idle connection's memory, for the connection's whole life.
pub fn publish_report(
    shared: &Shared,
    mut report: ActionReport,
) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
    Box::pin(async move {
        masked(&mut report);
        let record = report_record(&shared.topics, &report);
        if let Err(e) = shared.bus.publish(record).await {
            tracing::error!(identity = %report.command.identity, error = %e,
                action = %report.command.uuid, status = report.status.as_str(),
                "action report not published");
            shared.metrics.publish_failures.increment(1);
        }
    })
}

/// `report` with its secrets masked (see [`publish_report`]).
pub fn masked(report: &mut ActionReport) {
    let command = &mut report.command;
    command.sealed_request = None;
    secrets::mask_request(command.action.as_str(), &mut command.request);
    if let Some(response) = &mut report.response {
        secrets::mask_response(command.action.as_str(), response);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cms_bus::RequestedBy;

    fn command(n: u32) -> ActionRequest {
        ActionRequest {
            uuid: format!("action-{n}"),
            identity: "CP-1".into(),
            session: "s-1".into(),
            action: "Reset".into(),
            ocpp_version: cms_ocpp::OcppVersion::V16,
            request: serde_json::json!({"type": "Soft"}),
            requested_by: RequestedBy::system(),
            created_at: "2026-11-21T10:00:00.000000Z".into(),
            expires_at: "2026-11-21T10:01:00.000000Z".into(),
            timeout_ms: 30_000,
            sealed_request: None,
        }
    }

    #[test]
    fn a_report_carries_no_secret_of_the_request_or_the_answer() {
        let mut change = ActionReport {
            command: ActionRequest {
                action: "ChangeConfiguration".into(),
                request: serde_json::json!({"key": "WifiPassword", "value": "s3cret-wifi"}),
                sealed_request: Some("c2VhbGVk".into()),
                ..command(1)
            },
            status: ActionStatus::Answered,
            gateway: "gw-1".into(),
            response: Some(serde_json::json!({"status": "Accepted"})),
            error: None,
            sent_at: None,
            finished_at: None,
        };
        masked(&mut change);
        assert_eq!(change.command.request["value"], "***");
        assert_eq!(change.command.sealed_request, None);
        let mut read = ActionReport {
            command: ActionRequest {
                action: "GetConfiguration".into(),
                request: serde_json::json!({}),
                ..command(2)
            },
            response: Some(serde_json::json!({"configurationKey": [
                {"key": "AuthorizationKey", "readonly": false, "value": "s3cret-s3cret-s3"}
            ]})),
            ..change
        };
        masked(&mut read);
        let shown = serde_json::to_string(&read).unwrap();
        assert!(!shown.contains("s3cret"), "{shown}");
    }

    #[test]
    fn an_emptied_queue_keeps_no_room_for_the_idle_session() {
        let inbox = ActionInbox::default();
        inbox.push(command(1)).unwrap();
        inbox.push(command(2)).unwrap();
        assert_eq!(inbox.pop().map(|c| c.uuid), Some("action-1".to_string()));
        let state = |inbox: &ActionInbox| inbox.state.lock().unwrap().queue.capacity();
        assert!(state(&inbox) > 0, "one still queued");
        assert_eq!(inbox.pop().map(|c| c.uuid), Some("action-2".to_string()));
        assert_eq!(state(&inbox), 0, "an empty queue gave its memory back");
        assert!(inbox.pop().is_none());
    }

    #[test]
    fn an_inbox_gives_actions_back_in_the_order_they_came() {
        let inbox = ActionInbox::default();
        for n in 0..3 {
            inbox.push(command(n)).unwrap();
        }
        let order: Vec<String> = std::iter::from_fn(|| inbox.pop()).map(|c| c.uuid).collect();
        assert_eq!(order, ["action-0", "action-1", "action-2"]);
    }

    #[test]
    fn a_full_inbox_refuses_and_a_closed_one_takes_nothing_more() {
        let inbox = ActionInbox::default();
        for n in 0..MAX_QUEUED as u32 {
            inbox.push(command(n)).unwrap();
        }
        let refused = inbox.push(command(9_999)).unwrap_err();
        assert_eq!(
            (refused.command.uuid.as_str(), refused.why),
            ("action-9999", Refusal::Full)
        );
        assert_eq!(
            inbox.close().len(),
            MAX_QUEUED,
            "closing hands back what waited"
        );
        assert_eq!(inbox.push(command(1)).unwrap_err().why, Refusal::Closed);
        assert!(inbox.pop().is_none());
    }

    #[test]
    fn a_leader_has_a_few_calls_waiting_at_most_and_cms_keeps_its_room() {
        let inbox = ActionInbox::default();
        for n in 0..MAX_RELAYED as u32 {
            inbox
                .push_relayed(command(n), oneshot::channel().0)
                .unwrap();
        }
        let refused = inbox
            .push_relayed(command(99), oneshot::channel().0)
            .unwrap_err();
        assert_eq!(refused.why, Refusal::Full);
        assert!(
            inbox.push(command(100)).is_ok(),
            "cms's own actions still fit"
        );
        assert!(inbox.take_reply(&command(0).uuid).is_some());
        assert!(inbox.take_reply(&command(99).uuid).is_none());
    }
}
