//! What `Publisher::publish` gives back. A gateway publishes every frame it answers, so the
//! common outcomes cost no heap allocation: the in-process bus usually knows at once that its
//! queues took the record, and Kafka's acknowledgement arrives on a oneshot channel. A boxed
//! future remains for the rest (a queue that makes the publisher wait).

use crate::{BoxFuture, BusError, Delivered};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::oneshot;

/// The outcome of a publish, as a future: awaiting it tells when the bus has taken the record.
#[must_use = "a publish is confirmed only by awaiting it"]
pub struct Publishing(State);

enum State {
    /// Settled when `publish` returned (taken, or refused); `None` once handed out.
    Done(Option<Result<Delivered, BusError>>),
    /// Settled when the publisher sends the outcome; a publisher gone without sending it means
    /// the bus was torn down before the record was taken.
    Acknowledgement(oneshot::Receiver<Result<Delivered, BusError>>),
    /// Anything else.
    Waiting(BoxFuture<'static, Result<Delivered, BusError>>),
}

impl Publishing {
    /// An outcome known now.
    pub fn done(outcome: Result<Delivered, BusError>) -> Self {
        Publishing(State::Done(Some(outcome)))
    }

    /// An outcome the publisher will send on this channel.
    pub fn acknowledgement(rx: oneshot::Receiver<Result<Delivered, BusError>>) -> Self {
        Publishing(State::Acknowledgement(rx))
    }

    /// An outcome that needs a future of its own.
    pub fn waiting(
        future: impl Future<Output = Result<Delivered, BusError>> + Send + 'static,
    ) -> Self {
        Publishing(State::Waiting(Box::pin(future)))
    }
}

impl Future for Publishing {
    type Output = Result<Delivered, BusError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.get_mut().0 {
            State::Done(outcome) => {
                Poll::Ready(outcome.take().expect("a publish's outcome is awaited once"))
            }
            State::Acknowledgement(rx) => Pin::new(rx)
                .poll(cx)
                .map(|got| got.unwrap_or(Err(BusError::Closed))),
            State::Waiting(future) => future.as_mut().poll(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;

    fn delivered(offset: i64) -> Delivered {
        Delivered {
            partition: 0,
            offset,
        }
    }

    #[tokio::test]
    async fn each_kind_of_outcome_resolves_to_what_the_publisher_said() {
        assert_eq!(Publishing::done(Ok(delivered(1))).await, Ok(delivered(1)));
        assert_eq!(
            Publishing::waiting(async { Err(BusError::Closed) }).await,
            Err(BusError::Closed)
        );
        let (tx, rx) = oneshot::channel();
        let mut publishing = Publishing::acknowledgement(rx);
        // Pending until the publisher speaks.
        let early = poll_fn(|cx| Poll::Ready(Pin::new(&mut publishing).poll(cx))).await;
        assert!(early.is_pending());
        tx.send(Ok(delivered(7))).unwrap();
        assert_eq!(publishing.await, Ok(delivered(7)));
    }

    #[tokio::test]
    async fn a_publisher_gone_without_an_answer_is_a_closed_bus() {
        let (tx, rx) = oneshot::channel();
        drop(tx);
        assert_eq!(Publishing::acknowledgement(rx).await, Err(BusError::Closed));
    }
}
