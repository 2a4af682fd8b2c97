//! `cms`: a Charging Management Service for EV chargers (OCPP 1.6J and 2.0.1).

use clap::{Parser, Subcommand};
use cms::admin::{ChargerAddArgs, ChargerImportArgs, TokenCreateArgs, TokenIdArgs, TokenListArgs};
use cms::oauth_cli::{
    ClientCreateArgs, ClientListArgs, ClientRevokeArgs, GrantListArgs, GrantRevokeArgs,
    UserCreateArgs,
};
use cms::up::UpArgs;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cms",
    version,
    about = "Charging Management Service for EV chargers (OCPP 1.6J and 2.0.1)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run everything in one process on embedded defaults (in-process bus, SQLite).
    Up(Box<UpArgs>),
    /// Run an OCPP gateway publishing to Kafka (several may share a port).
    Gateway(Box<cms::gateway::GatewayCmdArgs>),
    /// Run the REST API consuming from Kafka (replicas share the work).
    Api(Box<cms::api::ApiCmdArgs>),
    /// Personal access tokens for the REST API.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Chargers that may connect.
    #[command(subcommand)]
    Charger(ChargerCommand),
    /// Users who log in to authorize OAuth clients.
    #[command(subcommand)]
    User(UserCommand),
    /// OAuth 2.0 client applications.
    #[command(subcommand)]
    Oauth(OauthCommand),
    /// Id tags: who may charge at a team's sites.
    #[command(subcommand)]
    IdTag(IdTagCommand),
    /// Records the store refused, set aside by the materialiser.
    #[command(subcommand)]
    DeadLetter(DeadLetterCommand),
}

#[derive(Subcommand)]
enum DeadLetterCommand {
    /// The newest dead letters, with their reasons.
    List(cms::dead_letters::DeadLetterListArgs),
}

#[derive(Subcommand)]
enum IdTagCommand {
    /// Create or replace a team's tags from a CSV file, all rows checked first; prints
    /// `imported N id tags (C created, U updated)`.
    Import(cms::id_tag_cli::IdTagImportArgs),
    /// List a team's tags, tab-separated.
    List(cms::id_tag_cli::IdTagListArgs),
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Create a token (and its user, when new); prints the token last.
    Create(TokenCreateArgs),
    /// List a user's tokens (never their secrets).
    List(TokenListArgs),
    /// Revoke a token: it stops working at once.
    Revoke(TokenIdArgs),
    /// Give a token a new secret (the old one stops working); prints the token last.
    Regenerate(TokenIdArgs),
}

#[derive(Subcommand)]
enum UserCommand {
    /// Create or update a user with a password; prints the user's uuid last.
    Create(UserCreateArgs),
}

#[derive(Subcommand)]
enum OauthCommand {
    /// OAuth client applications.
    #[command(subcommand)]
    Client(OauthClientCommand),
    /// Users' grants: the applications they authorized.
    #[command(subcommand)]
    Grant(OauthGrantCommand),
}

#[derive(Subcommand)]
enum OauthClientCommand {
    /// Register a client; prints `<client_id> <client_secret>` last (the secret only once).
    Create(ClientCreateArgs),
    /// List the live clients, with their live grants and pending authorization requests.
    List(ClientListArgs),
    /// Revoke a client: every token it holds stops working at once.
    Revoke(ClientRevokeArgs),
}

#[derive(Subcommand)]
enum OauthGrantCommand {
    /// List a user's live grants.
    List(GrantListArgs),
    /// Revoke a grant: the application's tokens from it stop working at once.
    Revoke(GrantRevokeArgs),
}

#[derive(Subcommand)]
enum ChargerCommand {
    /// Register a charger; prints its uuid last.
    Add(ChargerAddArgs),
    /// Register many chargers from a file (`identity[,password]` per line), all or none.
    Import(ChargerImportArgs),
    /// Move a charger to another site (another team's maybe) with new credentials: how the
    /// platform operators settle a claim to an identity someone else registered; prints its
    /// uuid last.
    Move(cms::admin::ChargerMoveArgs),
    /// Send a charger an OCPP action (Reset, ChangeConfiguration, ...) and print how it ended;
    /// exits 0 when answered, 1 for any other end or an error, 3 when still going after --wait.
    Action(cms::action_cli::ChargerActionArgs),
    /// Grant or withdraw a charger's licences (smart: load management; pro: proxy relaying and
    /// prices on the charger) and print those it holds.
    Licenses(cms::admin::ChargerLicensesArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Up(args) => cms::up::run(*args).await.map_err(|e| e.to_string()),
            Command::Gateway(args) => cms::gateway::run(*args).await,
            Command::Api(args) => cms::api::run(*args).await,
            Command::Token(TokenCommand::Create(args)) => cms::admin::token_create(args).await,
            Command::Token(TokenCommand::List(args)) => cms::admin::token_list(args).await,
            Command::Token(TokenCommand::Revoke(args)) => cms::admin::token_revoke(args).await,
            Command::Token(TokenCommand::Regenerate(args)) => {
                cms::admin::token_regenerate(args).await
            }
            Command::User(UserCommand::Create(args)) => cms::oauth_cli::user_create(args).await,
            Command::Oauth(OauthCommand::Client(OauthClientCommand::Create(args))) => {
                cms::oauth_cli::client_create(args).await
            }
            Command::Oauth(OauthCommand::Client(OauthClientCommand::List(args))) => {
                cms::oauth_cli::client_list(args).await
            }
            Command::Oauth(OauthCommand::Client(OauthClientCommand::Revoke(args))) => {
                cms::oauth_cli::client_revoke(args).await
            }
            Command::Oauth(OauthCommand::Grant(OauthGrantCommand::List(args))) => {
                cms::oauth_cli::grant_list(args).await
            }
            Command::Oauth(OauthCommand::Grant(OauthGrantCommand::Revoke(args))) => {
                cms::oauth_cli::grant_revoke(args).await
            }
            Command::Charger(ChargerCommand::Add(args)) => cms::admin::charger_add(args).await,
            Command::IdTag(IdTagCommand::Import(args)) => cms::id_tag_cli::import(args).await,
            Command::IdTag(IdTagCommand::List(args)) => cms::id_tag_cli::list(args).await,
            Command::DeadLetter(DeadLetterCommand::List(args)) => {
                cms::dead_letters::list(args).await
            }
            Command::Charger(ChargerCommand::Action(args)) => cms::action_cli::run(args).await,
            Command::Charger(ChargerCommand::Licenses(args)) => {
                cms::admin::charger_licenses(args).await
            }
            Command::Charger(ChargerCommand::Import(args)) => {
                cms::admin::charger_import(args).await
            }
            Command::Charger(ChargerCommand::Move(args)) => cms::admin::charger_move(args).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
