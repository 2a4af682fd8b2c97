//! An Authorize that waits for the eMSP of its OCPI token (docs/ocpi.md, "Tokens"), in either
//! version: its record and its answer are made once the verdict is known, so the record tells
//! a refusal as every Authorize's does.

use crate::authorization::{Ask, Verdict};
use crate::charger_action::ChargerAction;
use cms_bus::{Record, push_authorize_refused};
use cms_ocpp::v201::AuthorizationStatus;
use cms_ocpp::v201::answer::IdTokenInfo;
use tokio_tungstenite::tungstenite::Utf8Bytes;

pub struct Asking {
    pub ask: Ask,
    pub waiting: Waiting,
}

/// What is left to answer once the verdict is known.
pub struct Waiting {
    pub action: ChargerAction,
    record: Record,
    message_id: String,
}

impl Asking {
    pub(crate) fn new(action: ChargerAction, record: Record, message_id: &str, ask: Ask) -> Self {
        Asking {
            ask,
            waiting: Waiting {
                action,
                record,
                message_id: message_id.to_string(),
            },
        }
    }
}

impl Waiting {
    /// The record and the answer frame for `verdict`; `price_text` is the personal message of
    /// a 2.0.1 driver accepted at a site that shows prices.
    pub fn answered(self, verdict: &Verdict, price_text: Option<String>) -> (Record, Utf8Bytes) {
        let Waiting {
            action,
            mut record,
            message_id,
        } = self;
        if !verdict.is_accepted() {
            push_authorize_refused(&mut record.headers, verdict.status);
        }
        let payload = match action {
            ChargerAction::V201(_) => {
                // Every status of 1.6's idTagInfo is one of 2.0.1's too.
                let status = AuthorizationStatus::from_name(verdict.status)
                    .unwrap_or(AuthorizationStatus::Invalid);
                let accepted = status == AuthorizationStatus::Accepted;
                let info = IdTokenInfo {
                    status,
                    cache_expiry: verdict.expiry_date,
                    group_id_token: verdict.parent_id_tag.as_deref(),
                    personal_message: price_text.as_deref().filter(|_| accepted),
                };
                cms_ocpp::v201::answer::id_token_answer(&info)
            }
            ChargerAction::V16(_) => cms_ocpp::v16::answer::id_tag_answer(&verdict.id_tag_info()),
        };
        (record, cms_ocpp::call_result(&message_id, &payload).into())
    }
}
