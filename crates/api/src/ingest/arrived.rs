//! Taking from a subscriber what it already holds, without waiting: how the materialiser and
//! the reports' follower fill a batch after their linger.

use cms_bus::{Message, Subscriber};
use futures_util::FutureExt;

/// Adds to `batch`, up to `max` messages, what the subscriber has already, without waiting.
pub(crate) fn take_arrived(subscriber: &mut dyn Subscriber, batch: &mut Vec<Message>, max: usize) {
    while batch.len() < max {
        match subscriber
            .next_batch(batch, max - batch.len())
            .now_or_never()
        {
            Some(Ok(n)) if n > 0 => {}
            // Nothing more yet, closed, or an error the next full read will report.
            _ => break,
        }
    }
}
