//! `cms charger action IDENTITY ACTION 'JSON'`: an operator's action, with the REST API's
//! semantics. The command line has no bus of its own (in `cms up` the bus lives in the running
//! process), so it stores the action unpublished and the running service's API publishes it
//! (its outbox is read four times a second); then it waits on the store for the action's end.
//! An action taken without `--action-ttl` or `--action-timeout` gets the publishing service's.

use crate::duration::{parse_duration, positive_duration};
use crate::store_args::StoreArgs;
use cms_api::ActionTimes;
use cms_api::Named;
use cms_bus::{ActionRequest, RequestedBy};
use cms_ocpp::OcppVersion;
use cms_store::actions::SERVICE_TIMES;
use cms_store::format_record_time;
use serde_json::Value;
use std::time::Duration;

#[derive(Debug, Clone, clap::Args)]
pub struct ChargerActionArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The charger's identity.
    pub identity: String,
    /// The OCPP action, by name (`Reset`) or as in the REST path (`reset`), of the charger's
    /// OCPP version (1.6, or 2.0.1 for a station that connected speaking it).
    pub action: String,
    /// The OCPP request payload, a JSON object.
    #[arg(default_value = "{}")]
    pub payload: String,
    /// How long to wait for the action to end.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub wait: Duration,
    /// How long the action may wait to be sent; past it, it is never sent and ends `expired`.
    /// Default: the `--action-ttl` of the service that sends it (with `--action-timeout`, unless
    /// one of the two is given here).
    #[arg(long, env = "CMS_ACTION_TTL", value_parser = positive_duration)]
    pub action_ttl: Option<Duration>,
    /// How long the charger has to answer once the call is sent; past it, the action ends
    /// `timed_out`. Default: the service's `--action-timeout` (see `--action-ttl`).
    #[arg(long, env = "CMS_ACTION_TIMEOUT", value_parser = positive_duration)]
    pub action_timeout: Option<Duration>,
}

/// How often the store is read while waiting.
const POLL: Duration = Duration::from_millis(100);

/// Prints the action as JSON; the exit status says how it ended: 0 answered, 1 any other end
/// (or an error), 3 still pending or sent after `--wait` (2 is a usage error).
pub async fn run(args: ChargerActionArgs) -> Result<(), String> {
    let request: Value =
        serde_json::from_str(&args.payload).map_err(|e| format!("the payload is not JSON: {e}"))?;
    if !request.is_object() {
        return Err("the payload must be a JSON object".into());
    }
    if cms_api::named(&args.action, OcppVersion::V16) == Named::Unknown {
        return Err(format!(
            "{:?} is not a central system action of OCPP 1.6 or 2.0.1",
            args.action
        ));
    }
    let store = args.store.open().await.map_err(|e| e.to_string())?;
    let (charger_id, session) = store
        .charger_by_identity(&args.identity)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("there is no charger {:?}", args.identity))?;
    // The call of the charger's version: `Reset` is one of each.
    let version = store
        .charger_ocpp_version(charger_id)
        .await
        .map_err(|e| e.to_string())?;
    let command = match cms_api::named(&args.action, cms_api::charger_version(version.as_deref())) {
        Named::Call(command) => command,
        Named::OtherVersion(why) => return Err(why),
        Named::Unknown => unreachable!("a name of neither version was refused above"),
    };
    if let Err(refused) = cms_api::validate_request(&command, &request) {
        let reasons: Vec<String> = refused
            .iter()
            .map(|v| v.violation.description.clone())
            .collect();
        return Err(format!(
            "the payload breaks the {} schema: {}",
            command.as_str(),
            reasons.join("; ")
        ));
    }
    // The command line stores what it takes for the service to publish: a secret would sit in
    // the store in the clear. The REST API seals it for the gateway instead (docs/actions.md).
    if cms_ocpp::v16::secrets::carries_secret(command.as_str(), &request) {
        return Err(format!(
            "{} is a write-only secret: change it through the REST API (PUT \
             /api/v3/chargers/{{uuid}}/settings, or .../security for AuthorizationKey)",
            request["key"].as_str().unwrap_or_default()
        ));
    }
    let session =
        session.ok_or_else(|| format!("the charger {} is not connected", args.identity))?;
    let now = chrono::Utc::now();
    // Without times of its own the action takes those of the service that publishes it (the
    // command line cannot know the flags it runs with); until then its deadline is the
    // default's. Given one, the other is the default.
    let defaults = ActionTimes::default();
    let (ttl, timeout_ms) = match (args.action_ttl, args.action_timeout) {
        (None, None) => (defaults.ttl, SERVICE_TIMES as u64),
        (ttl, timeout) => (
            ttl.unwrap_or(defaults.ttl),
            timeout.unwrap_or(defaults.timeout).as_millis() as u64,
        ),
    };
    let ttl = chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::MAX);
    let action = ActionRequest {
        uuid: uuid::Uuid::new_v4().to_string(),
        identity: args.identity.clone(),
        session,
        ocpp_version: command.version().unwrap_or(OcppVersion::V16),
        action: command,
        request,
        requested_by: RequestedBy {
            kind: "cli".into(),
            email: None,
        },
        created_at: format_record_time(now),
        expires_at: format_record_time(now.checked_add_signed(ttl).unwrap_or(now)),
        timeout_ms,
        sealed_request: None,
    };
    store
        .insert_action(&cms_api::new_action(charger_id, &action, false))
        .await
        .map_err(|e| e.to_string())?;
    let deadline = tokio::time::Instant::now() + args.wait;
    let row = loop {
        let row = store
            .action(charger_id, &action.uuid)
            .await
            .map_err(|e| e.to_string())?
            .ok_or("the action vanished from the store")?;
        let open = matches!(row.status.as_str(), "pending" | "sent");
        if !open || tokio::time::Instant::now() >= deadline {
            break row;
        }
        tokio::time::sleep(POLL).await;
    };
    store.close().await;
    let status = row.status.clone();
    let body = cms_api::ActionBody::from(row);
    println!(
        "{}",
        serde_json::to_string(&body).map_err(|e| e.to_string())?
    );
    match status.as_str() {
        "answered" => Ok(()),
        // 3, not 2: 2 is what a usage error exits with (clap, as every getopt tool), and a
        // script must not read a mistyped flag as "taken, still going".
        "pending" | "sent" => std::process::exit(3),
        other => Err(format!("the action ended {other}")),
    }
}
