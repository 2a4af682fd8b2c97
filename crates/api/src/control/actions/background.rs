//! What every API process runs beside the HTTP server for actions: it follows the reports (to
//! wake waiting requests), publishes the actions the command line took (the outbox), and ends
//! the actions no gateway reported on in time.

use super::{Dispatch, command_of_row};
use crate::control::frames_from_bus::FramesFromBus;
use cms_bus::{ActionStatus, FramesAnswer, Subscriber, command_record, header, report_of};
use cms_store::Store;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the outbox is read: an action taken by `cms charger action` is on its way to the
/// gateways within this.
const RELAY_EVERY: Duration = Duration::from_millis(250);
/// How often overdue actions are looked for.
const SWEEP_EVERY: Duration = Duration::from_secs(5);
/// How long past its deadline (or its answer's time-out) an action may go unreported before
/// the API ends it: room for the bus's latency and for clocks a little apart.
pub const SWEEP_MARGIN: Duration = Duration::from_secs(30);

/// How long the reports may gather while no request of this process waits for one.
const UNAWAITED_LINGER: Duration = Duration::from_millis(20);

/// Follows the command results until the bus closes, handing final reports to the waiters,
/// and gateways' answers with a charger's frames to the requests of this replica asking.
pub async fn follow_reports(
    dispatch: Arc<Dispatch>,
    frames: Arc<FramesFromBus>,
    mut reports: Box<dyn Subscriber>,
) {
    const MAX: usize = 1024;
    let mut batch = Vec::new();
    loop {
        batch.clear();
        match reports.next_batch(&mut batch, MAX).await {
            Ok(0) => return,
            Ok(_) => {
                if !dispatch.has_waiters() && !frames.has_waiters() {
                    // Nobody to wake: the reports that follow gather and are read in one
                    // wake-up, not one each (two a command, from the gateways' threads;
                    // docs/performance.md, "Commands in flight"). A request that starts
                    // waiting cuts this short; with no reports, nothing wakes at all.
                    tokio::select! {
                        _ = dispatch.waiting_began.notified() => {}
                        _ = tokio::time::sleep(UNAWAITED_LINGER) => {}
                    }
                    crate::ingest::arrived::take_arrived(&mut *reports, &mut batch, MAX);
                }
                // Only a final report wakes a request, and only one that a request of this
                // process waits for: the rest are not parsed. (A request waits before its
                // action is published, so no report in hand is for a request not yet waiting.)
                if frames.has_waiters() {
                    for message in &batch {
                        if let Some(answer) = FramesAnswer::of(&message.record) {
                            frames.offer(answer);
                        }
                    }
                }
                let waited_for = batch.iter().filter(|message| {
                    dispatch.has_waiters()
                        && message.record.header(header::KIND).is_none()
                        && message.record.header_str(header::STATUS)
                            != Some(ActionStatus::Sent.as_str())
                });
                for report in waited_for.filter_map(report_of) {
                    dispatch.report(report);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot follow the command results; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// Publishes the actions the command line stored, until `stop`.
pub async fn relay_cli_actions(dispatch: Arc<Dispatch>, stop: CancellationToken) {
    while !stop.is_cancelled() {
        match dispatch
            .store
            // An action the command line took without times of its own takes this service's.
            .claim_unpublished_actions(chrono::Utc::now(), 100, dispatch.times)
            .await
        {
            Ok(claimed) => {
                for row in claimed {
                    let record = command_record(&dispatch.topics, &command_of_row(&row));
                    if let Err(e) = dispatch.bus.publish(record).await {
                        // Claimed, so no one else publishes it: the sweep ends it.
                        tracing::error!(error = %e, action = %row.uuid, "cannot publish an action");
                    }
                }
            }
            Err(e) => tracing::error!(error = %e, "cannot read the actions outbox"),
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(RELAY_EVERY) => {}
        }
    }
}

/// Ends overdue actions every few seconds, until `stop`. Every API process may run it: the
/// updates are conditional, so an action is ended once.
pub async fn sweep_overdue(store: Store, stop: CancellationToken) {
    let ended = metrics::counter!("cms_api_actions_expired_total");
    let margin = chrono::Duration::from_std(SWEEP_MARGIN).unwrap_or_default();
    while !stop.is_cancelled() {
        match store
            .expire_overdue_actions(chrono::Utc::now(), margin)
            .await
        {
            Ok(0) => {}
            Ok(n) => {
                tracing::warn!(actions = n, "ended actions no gateway reported on in time");
                ended.increment(n);
            }
            Err(e) => tracing::error!(error = %e, "cannot sweep overdue actions"),
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(SWEEP_EVERY) => {}
        }
    }
}
