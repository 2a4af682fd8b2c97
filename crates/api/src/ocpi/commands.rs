//! The commands module, CPO receiver (2.2.1 "commands"): `POST /ocpi/2.2.1/commands/{command}`.
//! A command becomes an action on the charger (as `POST /api/v3/chargers/{uuid}/actions/...`
//! takes one), kept in `ocpi_commands` with the action's uuid; cms answers at once with a
//! CommandResponse (ACCEPTED once the action is taken), and the CommandResult follows when the
//! action ends (cms_roaming::translate::commands). docs/ocpi.md "Commands".

mod requests;
mod reserve;
mod session;
mod target;

use super::auth::Registered;
use super::reply::{OcpiError, body, ok};
use crate::http::AppState;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::post;
use cms_bus::{ActionName, ActionReport, RequestedBy};
use cms_ocpi::commands::{CommandResponse, CommandResponseType, CommandType};
use cms_store::ocpi::commands::NewCommand;
use cms_store::ocpi::parties::Party;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::oneshot;

pub fn routes() -> Router<AppState> {
    Router::new().route("/2.2.1/commands/{command}", post(receive))
}

/// `POST /ocpi/2.2.1/commands/{command}`: a command of the five, or NOT_SUPPORTED.
async fn receive(
    State(state): State<AppState>,
    Registered(party): Registered,
    Path(command): Path<String>,
    bytes: Bytes,
) -> Result<Response, OcpiError> {
    let Some(command) = CommandType::parse(&command) else {
        // A command OCPI 2.2.1 does not have: the spec's answer for a command "not supported
        // by this CPO", in a successful envelope (the request itself was understood).
        return Ok(ok(CommandResponse::new(
            CommandResponseType::NotSupported,
            0,
            format!("{command} is not a command of OCPI 2.2.1."),
        )));
    };
    let answer = match command {
        CommandType::StartSession => session::start(&state, &party, read(&bytes)?).await?,
        CommandType::StopSession => session::stop(&state, &party, read(&bytes)?).await?,
        CommandType::UnlockConnector => session::unlock(&state, &party, read(&bytes)?).await?,
        CommandType::ReserveNow => reserve::reserve(&state, &party, read(&bytes)?).await?,
        CommandType::CancelReservation => reserve::cancel(&state, &party, read(&bytes)?).await?,
    };
    Ok(ok(answer))
}

/// A command's body, read and checked: 2001 naming what is wrong.
trait Checked: DeserializeOwned {
    fn problem(&self) -> Option<String>;
}

macro_rules! checked {
    ($($body:ty),*) => {$(
        impl Checked for $body {
            fn problem(&self) -> Option<String> {
                <$body>::problem(self)
            }
        }
    )*};
}
checked!(
    cms_ocpi::commands::StartSession,
    cms_ocpi::commands::StopSession,
    cms_ocpi::commands::UnlockConnector,
    cms_ocpi::commands::ReserveNow,
    cms_ocpi::commands::CancelReservation
);

fn read<T: Checked>(bytes: &[u8]) -> Result<T, OcpiError> {
    let command: T = body(bytes)?;
    match command.problem() {
        Some(problem) => Err(OcpiError::invalid(problem)),
        None => Ok(command),
    }
}

/// How long an eMSP may wait for a command's result: the charger's time to answer once the
/// call is sent (`--action-timeout`); a connected charger is sent it at once.
fn timeout(state: &AppState) -> u64 {
    state.dispatch.times.timeout.as_secs().max(1)
}

fn accepted(state: &AppState) -> CommandResponse {
    CommandResponse::new(
        CommandResponseType::Accepted,
        timeout(state),
        "The command was sent to the charger.",
    )
}

fn rejected(state: &AppState, why: impl Into<String>) -> CommandResponse {
    CommandResponse::new(CommandResponseType::Rejected, timeout(state), why)
}

/// A command's action, taken.
struct Taken {
    uuid: String,
    /// The action's final report, for a caller that follows it (else dropped).
    ended: oneshot::Receiver<ActionReport>,
}

/// Keeps `new` and takes its action on charger `charger_id` (`identity`): the request is
/// built from the command's row id (a 2.0.1 remoteStartId). `None` when the charger is not
/// connected (nothing was sent; the command is kept REJECTED).
async fn take(
    state: &AppState,
    new: NewCommand,
    (charger_id, identity): (i64, &str),
    request: impl FnOnce(i64) -> (ActionName, Value),
) -> Result<Option<Taken>, OcpiError> {
    let store = &state.store;
    let id = store.ocpi_add_command(&new).await?;
    let (action, request) = request(id);
    if let Err(violations) = crate::control::actions::validate_request(&action, &request) {
        // The checks before this keep every field within its schema; should one slip, the
        // command is refused rather than sent broken.
        tracing::error!(?violations, command = %new.command, "an OCPI command broke its schema");
        store.ocpi_command_answered(id, None, "REJECTED").await?;
        return Err(OcpiError::server(
            "The command could not be made into an OCPP call.",
        ));
    }
    // cms itself, on the eMSP's behalf: the command's row names the party.
    let requested_by = RequestedBy {
        kind: "system".into(),
        email: None,
    };
    let taken = (state.dispatch)
        .take_live(charger_id, identity, action, request, requested_by)
        .await
        .map_err(|e| OcpiError::server(e.to_string()))?;
    let Some((taken, ended)) = taken else {
        store.ocpi_command_answered(id, None, "REJECTED").await?;
        return Ok(None);
    };
    store
        .ocpi_command_answered(id, Some(&taken.uuid), "ACCEPTED")
        .await?;
    Ok(Some(Taken {
        uuid: taken.uuid,
        ended,
    }))
}

/// The command's row as first kept: who sent it, what it names.
fn new_command(party: &Party, command: CommandType, response_url: &str) -> NewCommand {
    NewCommand {
        provider_id: party.provider_id,
        command: command.as_str().into(),
        response_url: response_url.into(),
        ..NewCommand::default()
    }
}

const NOT_CONNECTED: &str = "The charger is not connected.";
