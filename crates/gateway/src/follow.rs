//! Following a compacted topic into memory (the charger registry, the id tags): read from its
//! beginning, marked caught up once at the end as it stood at start, then followed.

use cms_bus::{Message, Subscriber};

/// A view of a compacted topic held in memory.
pub trait Materialised {
    /// Names the view in logs ("charger registry").
    const WHAT: &'static str;
    fn apply(&self, message: &Message);
    /// Entries held, for the log line once loaded.
    fn entries(&self) -> usize;
    fn set_caught_up(&self);
    fn is_caught_up(&self) -> bool;
}

/// Follows `subscriber` into `view` until the bus closes; the view is caught up once the
/// subscriber is ([`Subscriber::caught_up`]: the end of the topic as it stood at start).
pub async fn follow<V: Materialised, S: Subscriber>(view: &V, mut subscriber: S) {
    let caught_up = subscriber.caught_up();
    let mut batch = Vec::new();
    loop {
        if !view.is_caught_up() && caught_up.is_caught_up() {
            tracing::info!(entries = view.entries(), "{} loaded", V::WHAT);
            view.set_caught_up();
        }
        batch.clear();
        match subscriber.next_batch(&mut batch, 1024).await {
            Ok(0) => return,
            Ok(_) => batch.iter().for_each(|m| view.apply(m)),
            Err(e) => {
                tracing::error!(error = %e, "cannot read the {}; retrying", V::WHAT);
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
        }
    }
}
