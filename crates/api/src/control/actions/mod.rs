//! Chargers > Actions behind the REST API and the command line: an action is taken (stored
//! `pending`), published to the gateways addressed to the charger's session, and followed to
//! its end. The gateways report on the command-results topic; the materialiser stores the
//! reports, and every API process also follows them to wake the requests waiting on `?wait`.
//! What no gateway reports on in time, the sweep ends (see `background.rs`).

mod background;
mod named;

pub use crate::ingest::action_reports::new_action;
use crate::ingest::action_reports::report_change;
pub use background::{SWEEP_MARGIN, follow_reports, relay_cli_actions, sweep_overdue};
pub use named::{Named, charger_version, named, path_segment_v201, validate_request};

use cms_bus::{
    ActionName, ActionReport, ActionRequest, Publisher, RequestedBy, SecretsKey, Topics,
    command_record,
};
use cms_ocpp::OcppVersion;
use cms_ocpp::v16::secrets;
use cms_store::actions::ActionRow;
pub use cms_store::actions::ActionTimes;
use cms_store::{Store, StoreError, format_record_time};
use dashmap::DashMap;
use std::sync::Arc;
use tokio::sync::oneshot;

/// Takes actions and hands out their ends: one per API process.
pub struct Dispatch {
    pub store: Store,
    pub bus: Arc<dyn Publisher>,
    pub topics: Topics,
    pub times: ActionTimes,
    /// Seals the requests that carry a secret for the gateways (`--secrets-key`); without it
    /// such requests are refused.
    secrets_key: Option<SecretsKey>,
    /// Requests waiting for an action's final report, by action uuid.
    waiting: DashMap<String, oneshot::Sender<ActionReport>>,
    /// Told when a request starts waiting for an action's end (`follow_reports` reads the
    /// reports at once from then on).
    waiting_began: tokio::sync::Notify,
}

#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the action could not be published: {0}")]
    Bus(#[from] cms_bus::BusError),
    #[error("the request carries a secret, and this API has no --secrets-key to seal it with")]
    NoSecretsKey,
}

/// A charger an action is for, connected with `session`.
pub struct Target<'a> {
    pub charger_id: i64,
    pub identity: &'a str,
    pub session: &'a str,
}

impl Dispatch {
    pub fn new(
        store: Store,
        bus: Arc<dyn Publisher>,
        topics: Topics,
        times: ActionTimes,
        secrets_key: Option<SecretsKey>,
    ) -> Self {
        Dispatch {
            store,
            bus,
            topics,
            times,
            secrets_key,
            waiting: DashMap::new(),
            waiting_began: tokio::sync::Notify::new(),
        }
    }

    /// Whether this API can send requests that carry a secret (it has a key to seal them).
    pub fn can_seal(&self) -> bool {
        self.secrets_key.is_some()
    }

    /// Stores the action (`pending`) and publishes it to the gateways; returns its uuid and a
    /// receiver of its final report. A request that stops waiting just drops the receiver.
    pub async fn take(
        &self,
        target: &Target<'_>,
        action: ActionName,
        request: serde_json::Value,
        requested_by: RequestedBy,
    ) -> Result<(String, oneshot::Receiver<ActionReport>), DispatchError> {
        let uuid = uuid::Uuid::new_v4().to_string();
        self.take_as(uuid, target, action, request, requested_by)
            .await
    }

    /// [`Dispatch::take`] under a uuid chosen beforehand (by a caller that claims the action
    /// in the store before taking it, as the local-list keeper does).
    pub async fn take_as(
        &self,
        uuid: String,
        target: &Target<'_>,
        action: ActionName,
        request: serde_json::Value,
        requested_by: RequestedBy,
    ) -> Result<(String, oneshot::Receiver<ActionReport>), DispatchError> {
        let (command, ended) = self
            .take_command(uuid, target, action, request, requested_by, self.times)
            .await?;
        Ok((command.uuid, ended))
    }

    /// [`Dispatch::take_as`] with its own times (a call that is worthless late, such as a
    /// charging limit, gives up sooner than the default), giving back the command as published
    /// (what a caller that answers with the action's state right away shows, without reading
    /// it back).
    pub async fn take_command(
        &self,
        uuid: String,
        target: &Target<'_>,
        action: ActionName,
        request: serde_json::Value,
        requested_by: RequestedBy,
        times: ActionTimes,
    ) -> Result<(ActionRequest, oneshot::Receiver<ActionReport>), DispatchError> {
        let command = self.command(
            uuid,
            target.identity,
            target.session,
            action,
            (request, None),
            requested_by,
            times,
        )?;
        self.store
            .insert_action(&new_action(target.charger_id, &command, true))
            .await?;
        let ended = self.publish(&command).await?;
        Ok((command, ended))
    }

    /// Takes an action for the session charger `charger_id` (`identity`) is connected with
    /// now, found as the action is stored: one statement; `None` when it is not connected
    /// (nothing is stored or sent). Default times.
    pub async fn take_live(
        &self,
        charger_id: i64,
        identity: &str,
        action: ActionName,
        request: serde_json::Value,
        requested_by: RequestedBy,
    ) -> Result<Option<(ActionRequest, oneshot::Receiver<ActionReport>)>, DispatchError> {
        self.take_live_masked(charger_id, identity, action, request, None, requested_by)
            .await
    }

    /// [`Dispatch::take_live`] of a request whose secrets the caller knows (a 2.0.1 station's
    /// SetVariables of a write-only variable): given `masked`, it is kept and published so,
    /// and travels sealed for the gateway whole.
    pub async fn take_live_masked(
        &self,
        charger_id: i64,
        identity: &str,
        action: ActionName,
        request: serde_json::Value,
        masked: Option<serde_json::Value>,
        requested_by: RequestedBy,
    ) -> Result<Option<(ActionRequest, oneshot::Receiver<ActionReport>)>, DispatchError> {
        let uuid = uuid::Uuid::new_v4().to_string();
        let mut command = self.command(
            uuid,
            identity,
            "",
            action,
            (request, masked),
            requested_by,
            self.times,
        )?;
        let stored = self
            .store
            .insert_live_action(&new_action(charger_id, &command, true))
            .await?;
        let Some(session) = stored else {
            return Ok(None);
        };
        command.session = session;
        let ended = self.publish(&command).await?;
        Ok(Some((command, ended)))
    }

    /// The command to publish: a request that carries a secret is kept and published masked
    /// (as the caller masked it, when it did: `(request, masked)`), and travels sealed for the
    /// gateway (cms_bus::SecretsKey).
    #[allow(clippy::too_many_arguments)]
    fn command(
        &self,
        uuid: String,
        identity: &str,
        session: &str,
        action: ActionName,
        (mut request, masked): (serde_json::Value, Option<serde_json::Value>),
        requested_by: RequestedBy,
        times: ActionTimes,
    ) -> Result<ActionRequest, DispatchError> {
        let now = chrono::Utc::now();
        let ttl = chrono::Duration::from_std(times.ttl).unwrap_or_default();
        let mut sealed_request = None;
        // The 1.6 secrets (a ChangeConfiguration of a secret key), or what the caller masked
        // (a 2.0.1 SetVariables of a write-only or secret variable).
        if masked.is_some() || secrets::carries_secret(action.as_str(), &request) {
            let key = self
                .secrets_key
                .as_ref()
                .ok_or(DispatchError::NoSecretsKey)?;
            sealed_request = Some(key.seal(&uuid, request.to_string().as_bytes()));
            match masked {
                Some(masked) => request = masked,
                None => {
                    secrets::mask_request(action.as_str(), &mut request);
                }
            }
        }
        Ok(ActionRequest {
            uuid,
            identity: identity.to_string(),
            session: session.to_string(),
            // An unknown name is no call of either version: taken as 1.6's, as before.
            ocpp_version: action.version().unwrap_or(OcppVersion::V16),
            action,
            request,
            requested_by,
            created_at: format_record_time(now),
            expires_at: format_record_time(now + ttl),
            timeout_ms: times.timeout.as_millis() as u64,
            sealed_request,
        })
    }

    /// Publishes a stored action to the gateways; the receiver of its final report.
    async fn publish(
        &self,
        command: &ActionRequest,
    ) -> Result<oneshot::Receiver<ActionReport>, DispatchError> {
        let (tx, rx) = oneshot::channel();
        self.waiting.insert(command.uuid.clone(), tx);
        let published = self
            .bus
            .publish(command_record(&self.topics, command))
            .await;
        if let Err(e) = published {
            // Stored but never published: the sweep ends it `expired` (NotDelivered).
            self.waiting.remove(&command.uuid);
            return Err(e.into());
        }
        Ok(rx)
    }

    /// Whether any request of this process waits for an action's end.
    pub fn has_waiters(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// Forgets the request waiting for `uuid` (one that chose not to wait).
    pub fn stop_waiting(&self, uuid: &str) {
        self.waiting.remove(uuid);
    }

    /// Wakes whoever waits for this report's action, when it is final.
    pub fn report(&self, report: ActionReport) {
        if report.status.is_final()
            && let Some((_, waiter)) = self.waiting.remove(&report.command.uuid)
        {
            let _ = waiter.send(report);
        }
    }

    /// Waits until `deadline` for the end of the action `take` gave `ended` for. An end is
    /// stored at once (the materialiser will find it done), so that a read right after agrees
    /// with what the caller is told; `false` when the action goes on past the deadline.
    pub async fn wait_for_end(
        &self,
        uuid: &str,
        ended: oneshot::Receiver<ActionReport>,
        deadline: tokio::time::Instant,
    ) -> Result<bool, StoreError> {
        Ok(self.end_of(uuid, ended, deadline).await?.is_some())
    }

    /// [`Dispatch::wait_for_end`], with the final report itself.
    pub async fn end_of(
        &self,
        uuid: &str,
        ended: oneshot::Receiver<ActionReport>,
        deadline: tokio::time::Instant,
    ) -> Result<Option<ActionReport>, StoreError> {
        // A permit if the follower is not lingering now: its next linger ends at once.
        self.waiting_began.notify_one();
        match tokio::time::timeout_at(deadline, ended).await {
            Ok(Ok(report)) => {
                let at = cms_store::now_record_time();
                self.store.apply(&[report_change(&report, at)]).await?;
                Ok(Some(report))
            }
            _ => {
                self.waiting.remove(uuid);
                Ok(None)
            }
        }
    }
}

/// The command a stored action stands for (for the outbox, which publishes what the command
/// line stored).
pub fn command_of_row(row: &ActionRow) -> ActionRequest {
    // A version this code does not know is kept as 1.6: the gateway then ends a 2.x name
    // `NotImplemented` rather than the outbox holding it forever.
    let version = cms_bus::version_of_number(&row.ocpp_version).unwrap_or(OcppVersion::V16);
    ActionRequest {
        uuid: row.uuid.clone(),
        identity: row.identity.clone(),
        session: row.session.clone(),
        action: ActionName::new(&row.action, version),
        ocpp_version: version,
        request: serde_json::from_str(&row.request).unwrap_or(serde_json::Value::Null),
        requested_by: RequestedBy {
            kind: row.requested_by_type.clone(),
            email: row.requested_by_email.clone(),
        },
        created_at: row.created_at.clone(),
        expires_at: row.expires_at.clone(),
        timeout_ms: row.timeout_ms.max(0) as u64,
        sealed_request: None,
    }
}
