//! A charger's last frames in `cms api` (the Kafka deployment): asked of the gateways with a
//! `frames_request` on the commands topic, keyed by the charger as its actions are; the gateway
//! keeping frames of it answers on the command results, which every replica follows outside
//! any group (`actions::follow_reports` hands the answers here), so the answer reaches the
//! replica that asked, which knows it by the request's id. Waited for a bounded time
//! (docs/decisions.md, "A charger's frames over Kafka").

use crate::control::diagnostics::{
    ChargerDiagnostics, ConnectionAttempt, Frame, FramesRead, FramesUnanswered,
};
use crate::ingest::connection_attempts::AttemptsFromBus;
use chrono::{DateTime, Utc};
use cms_bus::{FramesAnswer, FramesRequest, Publisher, Topics, frames_request_record};
use dashmap::DashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How long a connected charger's gateway has to answer (then 504).
pub const ANSWER_WITHIN: Duration = Duration::from_secs(3);
/// How long gateways that kept a disconnected charger's last session have to answer (then no
/// frames): shorter, since most such chargers have none kept anywhere.
pub const ENDED_WITHIN: Duration = Duration::from_secs(1);
/// How long to wait for other gateways' answers once one that kept an ended session answered:
/// a charger that moved between gateways within the hour is kept by both.
const OTHERS_WITHIN: Duration = Duration::from_millis(200);

pub struct FramesFromBus {
    bus: Arc<dyn Publisher>,
    topics: Topics,
    /// Requests of this replica waiting for answers, by request id.
    waiting: DashMap<String, mpsc::Sender<FramesAnswer>>,
}

impl FramesFromBus {
    pub fn new(bus: Arc<dyn Publisher>, topics: Topics) -> FramesFromBus {
        FramesFromBus {
            bus,
            topics,
            waiting: DashMap::new(),
        }
    }

    /// Whether a request of this replica waits for an answer (else answers are not parsed).
    pub fn has_waiters(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// Hands an answer to the request of this replica that waits for it, if any.
    pub fn offer(&self, answer: FramesAnswer) {
        if let Some(waiter) = self.waiting.get(&answer.request) {
            let _ = waiter.try_send(answer);
        }
    }

    /// The charger's frames, newest first: the live session's, from the gateway holding it
    /// (`connected`); else the newest ended session's a gateway kept, or none.
    pub async fn frames(
        &self,
        identity: &str,
        connected: bool,
    ) -> Result<Vec<Frame>, FramesUnanswered> {
        let id = uuid::Uuid::new_v4().to_string();
        let (tx, mut answers) = mpsc::channel(8);
        self.waiting.insert(id.clone(), tx);
        // Forgotten however the request ends (its client may go away meanwhile).
        let _waiting = Forget(&self.waiting, &id);
        let mut deadline = Instant::now()
            + match connected {
                true => ANSWER_WITHIN,
                false => ENDED_WITHIN,
            };
        let request = FramesRequest {
            request: id.clone(),
            identity: identity.to_string(),
            asked_at: cms_store::now_record_time(),
        };
        let record = frames_request_record(&self.topics, &request);
        match tokio::time::timeout_at(deadline, self.bus.publish(record)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                tracing::warn!(%identity, error = %e, "frames request not published");
                return Err(FramesUnanswered);
            }
            Err(_) => return Err(FramesUnanswered),
        }
        let mut newest: Option<FramesAnswer> = None;
        while let Ok(Some(answer)) = tokio::time::timeout_at(deadline, answers.recv()).await {
            if answer.live {
                return Ok(frames_of(answer));
            }
            deadline = deadline.min(Instant::now() + OTHERS_WITHIN);
            let newer = |a: &FramesAnswer| a.frames.first().map(|f| f.at.clone());
            if newest.as_ref().is_none_or(|n| newer(&answer) > newer(n)) {
                newest = Some(answer);
            }
        }
        match (newest, connected) {
            (Some(answer), _) => Ok(frames_of(answer)),
            (None, true) => Err(FramesUnanswered),
            (None, false) => Ok(Vec::new()),
        }
    }
}

struct Forget<'a>(&'a DashMap<String, mpsc::Sender<FramesAnswer>>, &'a str);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.remove(self.1);
    }
}

fn frames_of(answer: FramesAnswer) -> Vec<Frame> {
    answer
        .frames
        .into_iter()
        .map(|frame| Frame {
            at: DateTime::parse_from_rfc3339(&frame.at).map_or_else(|_| Utc::now(), |t| t.to_utc()),
            incoming: frame.direction == "in",
            // The gateway masked it before it left (secrets never cross the bus).
            shown: frame.frame,
        })
        .collect()
}

/// `cms api`: the attempts from the connections topic, the frames asked of the gateways.
pub struct FromBus {
    pub attempts: Arc<AttemptsFromBus>,
    pub frames: Arc<FramesFromBus>,
}

impl ChargerDiagnostics for FromBus {
    fn frames<'a>(&'a self, identity: &'a str, connected: bool) -> FramesRead<'a> {
        Box::pin(self.frames.frames(identity, connected))
    }

    fn attempts(&self, identity: &str) -> Vec<ConnectionAttempt> {
        self.attempts.attempts(identity)
    }
}
