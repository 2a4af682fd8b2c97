//! A text frame's synchronous part: validated, answered, and its record handed to the bus. It
//! lives apart from `LiveSession::on_text` because an async fn keeps room for its locals across
//! every await, and the handled frame and its record are large (inline headers): here they are
//! gone before the session awaits anything, so a frame's future, which every session carries
//! inline, stays small. A relayed charger's frame, which waits for its leader proxy server's
//! answer, is finished here too, and so is an Authorize that waits for the eMSP of its OCPI
//! token.

use super::{LiveSession, message_id_of};
use crate::charger_action::ChargerAction;
use crate::charger_calls::asking::Asking;
use crate::charger_calls::{CallContext, ChargerAnswer, Outcome, handle_text};
use crate::charger_calls_v201::{call_error_v201, handle_text_v201};
use crate::relay::{LEADER_WAIT, LeaderAnswer};
use bytes::Bytes;
use chrono::Utc;
use cms_bus::{Header, Publishing, Record};
use cms_ocpp::v16::Action;
use cms_ocpp::v201;
use cms_ocpp::{ErrorCode, OcppVersion, call_error};
use std::time::Instant;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// What a text frame leaves for the session to do.
pub(super) enum Taken {
    /// Send this, if anything; nothing was published.
    Reply(Option<Utf8Bytes>),
    /// The charger answered a call of ours.
    Answer(ChargerAnswer),
    /// The bus is taking the record.
    Published(Published),
    /// A relayed charger's record, which waits for its leader's answer before the bus takes it
    /// (boxed: most chargers are not relayed).
    Relayed(Box<Relayed>),
    /// An Authorize whose record and answer wait for the eMSP of its token (boxed: rare).
    Asking(Box<Asking>),
}

/// A record the bus is taking, and the answer to send once (or while) it does.
pub(super) struct Published {
    pub action: ChargerAction,
    pub delivery: Publishing,
    pub answer: Utf8Bytes,
    pub started: Instant,
}

pub(super) struct Relayed {
    leader: oneshot::Receiver<LeaderAnswer>,
    action: ChargerAction,
    record: Record,
    answer: Utf8Bytes,
}

impl LiveSession<'_> {
    pub(super) fn take_text(&self, text: &str, frame: &Bytes) -> Taken {
        let shared = self.shared;
        let ctx = CallContext {
            identity: self.identity,
            identity_key: &self.identity_key,
            session: self.session,
            node: &shared.node,
            version: self.version,
            topics: &shared.topics,
            transaction_ids: &shared.transaction_ids,
            authority: &shared.authority,
            heartbeat_interval_secs: shared.config.heartbeat_interval.as_secs() as u32,
        };
        let handled = match self.version {
            OcppVersion::V16 => handle_text(&ctx, text, frame, Utc::now()),
            OcppVersion::V201 => handle_text_v201(&ctx, text, frame, Utc::now()),
        };
        shared.metrics.frame_in(handled.kind);
        match handled.outcome {
            Outcome::Answer(answer) => Taken::Answer(answer),
            Outcome::Refuse { reply, code } => {
                tracing::debug!(
                    identity = self.identity,
                    code = code.as_str(),
                    "frame refused"
                );
                shared.metrics.error_out(code);
                Taken::Reply(Some(reply.into()))
            }
            Outcome::Ask(asking) => {
                let Some(relay) = self.relay.as_ref() else {
                    return Taken::Asking(asking);
                };
                let Asking { ask, waiting } = *asking;
                let action = waiting.action;
                // Relayed: the leader answers; cms's own answer, for when it is late, is what
                // cms says without the eMSP.
                let (record, answer) = waiting.answered(ask.fallback(), self.price_text());
                match relay.relay(action, &record.value) {
                    Some(leader) => Taken::Relayed(Box::new(Relayed {
                        leader,
                        action,
                        record,
                        answer,
                    })),
                    None => Taken::Published(self.publish(action, record, answer)),
                }
            }
            Outcome::Publish {
                action,
                record,
                answer,
            } => {
                let relayed = match self.relay.as_ref() {
                    Some(relay) => relay.relay(action, &record.value),
                    None => None,
                };
                match relayed {
                    Some(leader) => Taken::Relayed(Box::new(Relayed {
                        leader,
                        action,
                        record,
                        answer,
                    })),
                    None => Taken::Published(self.publish(action, record, answer)),
                }
            }
        }
    }

    /// A relayed charger's frame: its leader's answer (or its own, when the leader is late)
    /// goes back to the charger, and the record says which.
    pub(super) async fn relayed(&self, text: &str, relayed: Relayed) -> Published {
        let Relayed {
            leader,
            action,
            record,
            answer,
        } = relayed;
        let own_id = transaction_id_of(&record);
        let (record, answer, missed) =
            leader_answer(leader, text, self.version, action, record, answer).await;
        if let (Some(own), Some(leaders)) = (own_id, transaction_id_of(&record))
            && own != leaders
        {
            let accepted = record.header_str(cms_bus::header::ID_TAG_STATUS) == Some("Accepted");
            let authority = &self.shared.authority;
            authority.leader_started(self.identity, own, leaders, accepted);
        }
        if let (true, Some(relay)) = (missed, &self.relay) {
            relay.leader_missed();
        }
        self.publish(action, record, answer)
    }

    /// An Authorize for an OCPI token: answered once its eMSP was asked (at most
    /// `--ocpi-authorize-timeout`), the record carrying the verdict.
    pub(super) async fn asked(&self, asking: Asking) -> Published {
        let Asking { ask, waiting } = asking;
        let verdict = self.shared.authority.ask(ask).await;
        let action = waiting.action;
        let (record, answer) = waiting.answered(&verdict, self.price_text());
        self.publish(action, record, answer)
    }

    /// The price a 2.0.1 station shows an accepted driver, if its site shows prices.
    fn price_text(&self) -> Option<String> {
        match self.version {
            OcppVersion::V201 => self.shared.authority.price_text(self.identity),
            OcppVersion::V16 => None,
        }
    }

    fn publish(&self, action: ChargerAction, record: Record, answer: Utf8Bytes) -> Published {
        Published {
            action,
            started: Instant::now(),
            delivery: self.shared.bus.publish(record),
            answer,
        }
    }
}

/// The charger's answer when its leader proxy server answers it: the leader's, under the
/// charger's message id, within [`LEADER_WAIT`]; cms's own otherwise (the charger keeps
/// working), and then `true` when the wait ran out. A StartTransaction is recorded under the
/// transactionId the leader gave, which is the one the charger will use, and with the leader's
/// verdict on the tag; a 2.0.1 TransactionEvent (whose transactionId is the station's own) with
/// the leader's verdict on its token.
async fn leader_answer(
    leader: oneshot::Receiver<LeaderAnswer>,
    text: &str,
    version: OcppVersion,
    action: ChargerAction,
    mut record: Record,
    own: Utf8Bytes,
) -> (Record, Utf8Bytes, bool) {
    let answer = match tokio::time::timeout(LEADER_WAIT, leader).await {
        Ok(Ok(answer)) => answer,
        waited => {
            metrics::counter!("cms_proxy_leader_fallbacks_total").increment(1);
            // Timed out (not merely dropped because the leader went away): it lags.
            return (record, own, waited.is_err());
        }
    };
    let id = message_id_of(text);
    let frame = match answer {
        LeaderAnswer::Result(payload) => {
            take_leaders_verdict(&mut record, action, &payload);
            cms_ocpp::call_result(&id, &payload)
        }
        LeaderAnswer::Error { code, description } => {
            let code = ErrorCode::from_name(&code).unwrap_or(ErrorCode::GenericError);
            match version {
                OcppVersion::V16 => call_error(&id, code, &description),
                OcppVersion::V201 => call_error_v201(&id, code, &description),
            }
        }
    };
    (record, frame.into(), false)
}

/// The record of a call the leader answered says what the leader decided, which is what the
/// charger goes by: a StartTransaction's transactionId and verdict on its tag, a 2.0.1
/// TransactionEvent's verdict on its token, and an Authorize's refusal (its header is there only
/// for a refusal, as cms's own).
fn take_leaders_verdict(record: &mut Record, action: ChargerAction, payload: &str) {
    let info = match action {
        ChargerAction::V16(Action::StartTransaction | Action::Authorize) => "idTagInfo",
        ChargerAction::V201(v201::Action::TransactionEvent | v201::Action::Authorize) => {
            "idTokenInfo"
        }
        _ => return,
    };
    let leaders: serde_json::Value = serde_json::from_str(payload).unwrap_or_default();
    if action == ChargerAction::V16(Action::StartTransaction)
        && let Some(id) = leaders["transactionId"].as_i64()
    {
        set_header(record, cms_bus::header::TRANSACTION_ID, id.to_string());
    }
    let Some(status) = leaders[info]["status"].as_str() else {
        return;
    };
    let authorize = matches!(
        action,
        ChargerAction::V16(Action::Authorize) | ChargerAction::V201(v201::Action::Authorize)
    );
    if authorize && status == "Accepted" {
        record
            .headers
            .retain(|h| h.name != cms_bus::header::ID_TAG_STATUS);
    } else {
        set_header(record, cms_bus::header::ID_TAG_STATUS, status.to_string());
    }
}

/// The transactionId a StartTransaction record was given.
fn transaction_id_of(record: &Record) -> Option<i32> {
    record
        .header_str(cms_bus::header::TRANSACTION_ID)?
        .parse()
        .ok()
}

fn set_header(record: &mut Record, name: &'static str, value: String) {
    record.headers.retain(|h| h.name != name);
    record.headers.push(Header::new(name, value));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(status: Option<&str>) -> Record {
        let mut record = Record {
            topic: "t.ocpp.messages".into(),
            key: Bytes::from_static(b"CP-1"),
            headers: Default::default(),
            value: Bytes::from_static(b"{}"),
        };
        if let Some(status) = status {
            set_header(&mut record, cms_bus::header::ID_TAG_STATUS, status.into());
        }
        record
    }

    #[test]
    fn a_record_the_leader_answered_carries_the_leaders_verdict() {
        let event = ChargerAction::V201(v201::Action::TransactionEvent);
        let mut started = record(Some("Invalid"));
        let answer = r#"{"idTokenInfo":{"status":"Accepted"}}"#;
        take_leaders_verdict(&mut started, event, answer);
        assert_eq!(started.header_str("id_tag_status"), Some("Accepted"));

        // An Authorize's header tells a refusal only: the leader's acceptance removes cms's.
        let authorize = ChargerAction::V201(v201::Action::Authorize);
        let mut refused_by_cms = record(Some("Invalid"));
        take_leaders_verdict(&mut refused_by_cms, authorize, answer);
        assert_eq!(refused_by_cms.header_str("id_tag_status"), None);
        let mut refused_by_leader = record(None);
        let blocked = r#"{"idTokenInfo":{"status":"Blocked"}}"#;
        take_leaders_verdict(&mut refused_by_leader, authorize, blocked);
        assert_eq!(
            refused_by_leader.header_str("id_tag_status"),
            Some("Blocked")
        );

        let start = ChargerAction::V16(Action::StartTransaction);
        let mut start_record = record(Some("Accepted"));
        let leaders = r#"{"transactionId":9001,"idTagInfo":{"status":"Expired"}}"#;
        take_leaders_verdict(&mut start_record, start, leaders);
        assert_eq!(start_record.header_str("transaction_id"), Some("9001"));
        assert_eq!(start_record.header_str("id_tag_status"), Some("Expired"));
    }
}
