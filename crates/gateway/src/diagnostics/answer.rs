//! A charger's frames for an API replica of the Kafka deployment: a `frames_request` on the
//! commands topic is answered by the gateway keeping frames of the charger (its live session's,
//! or its last one's), on the command results. Read by the commands follower, never a shard,
//! and published from a task of its own, so that neither the chargers' frames nor the actions
//! behind it wait for the broker (docs/decisions.md, "A charger's frames over Kafka").

use crate::Shared;
use crate::record_time::record_time;
use cms_bus::{FramesAnswer, FramesRequest, SentFrame, frames_answer_record};
use std::sync::Arc;

/// Answers `request` when this gateway keeps frames of its charger; says nothing otherwise
/// (another gateway may).
pub(crate) fn answer(shared: &Arc<Shared>, request: FramesRequest) {
    let Some((live, ring)) = shared.kept_ring(&request.identity) else {
        return;
    };
    let frames = ring
        .frames()
        .into_iter()
        .map(|frame| SentFrame {
            at: record_time(frame.at),
            direction: if frame.incoming { "in" } else { "out" }.into(),
            // Masked here: a charger's secrets never cross the bus.
            frame: cms_ocpp::masking::shown(&frame.bytes, frame.len),
            len: frame.len,
        })
        .collect();
    let answer = FramesAnswer {
        request: request.request,
        identity: request.identity,
        gateway: shared.config.node_id.clone(),
        live,
        frames,
    };
    let record = frames_answer_record(&shared.topics, &answer);
    let shared = shared.clone();
    tokio::spawn(async move {
        if let Err(e) = shared.bus.publish(record).await {
            tracing::warn!(identity = %answer.identity, error = %e, "frames answer not published");
        }
    });
}
