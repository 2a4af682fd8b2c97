//! Admin commands that work on the store, also while `cms up` runs on it (SQLite in WAL mode
//! lets both processes in; the service reads what they write at once).

use crate::paging::every_page;
use crate::quota_args::{QuotaArgs, explain};
use crate::store_args::StoreArgs;
use cms_credentials::charger_credentials;
use cms_gateway::ChargerIdentity;
use cms_store::{NewCharger, Scope};
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct TokenCreateArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The user's e-mail; the user (and a personal team) is created when absent.
    #[arg(long)]
    pub email: String,
    /// A name to recognise the token by.
    #[arg(long)]
    pub name: String,
    /// Create the user outside the operators' team: they see only what their own teams own or
    /// are granted (an existing user keeps their teams).
    #[arg(long)]
    pub guest: bool,
    /// Comma-separated scopes; default: all (`*`).
    #[arg(long, value_delimiter = ',', default_value = Scope::ALL)]
    pub scopes: Vec<String>,
    #[command(flatten)]
    pub quotas: QuotaArgs,
}

#[derive(Debug, Clone, clap::Args)]
pub struct TokenListArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Whose tokens.
    #[arg(long)]
    pub email: String,
}

#[derive(Debug, Clone, clap::Args)]
pub struct TokenIdArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The token's id: the part before `|` (`cms token list` shows it).
    #[arg(long)]
    pub id: i64,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ChargerAddArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The identity the charger connects with: ws://.../ocpp/{identity}.
    #[arg(long)]
    pub identity: String,
    /// Basic-auth password (security profile 1), 16 to 40 printable characters without `:`;
    /// without one, a strong password is generated and printed once.
    #[arg(long, env = "CMS_CHARGER_PASSWORD", hide_env_values = true)]
    pub password: Option<String>,
    /// OCPP security profile: 1 = Basic auth (the default); 2 = Basic auth over wss only; 3 =
    /// a client certificate over wss (subject CN = identity), no password; 0 = no credentials
    /// at all, only for test benches on a closed network (anyone who knows the identity can
    /// connect).
    #[arg(long, default_value_t = 1)]
    pub security_profile: u8,
    /// The site to put it in; default: the operators' default site.
    #[arg(long)]
    pub site: Option<String>,
    /// A free-text reference shown in the API.
    #[arg(long)]
    pub reference: Option<String>,
    #[command(flatten)]
    pub quotas: QuotaArgs,
}

/// Prints the new token as the last line of stdout.
pub async fn token_create(args: TokenCreateArgs) -> Result<(), String> {
    if !args.email.contains('@') {
        return Err(format!("{:?} is not an e-mail address", args.email));
    }
    let store = args.quotas.open(&args.store).await?;
    let user = store
        .ensure_user_in(&args.email, !args.guest)
        .await
        .map_err(|e| e.to_string())?;
    let scopes: Vec<String> = args.scopes.iter().map(|s| s.trim().to_string()).collect();
    let token = store
        .create_token(user.id, &args.name, &scopes)
        .await
        .map_err(explain)?;
    store.close().await;
    println!(
        "Personal access token {:?} for {} (scopes: {}). It is shown only once:",
        args.name,
        user.email,
        scopes.join(",")
    );
    println!("{token}");
    Ok(())
}

/// Prints the user's live tokens, newest first, one a line: id, name, scopes, last used,
/// created, separated by tabs, after a header line. Never a secret.
pub async fn token_list(args: TokenListArgs) -> Result<(), String> {
    const PAGE: i64 = 100;
    let store = args.store.open().await.map_err(|e| e.to_string())?;
    let user = store
        .user_by_email(&args.email)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("there is no user {:?}", args.email))?;
    let tokens = every_page(PAGE, |limit, offset| {
        store.personal_access_tokens(user.id, limit, offset)
    })
    .await?;
    let mut out = String::from("id\tname\tscopes\tlast_used_at\tcreated_at\n");
    for t in &tokens {
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\n",
            t.id,
            // A name may hold anything the API took: keep it on its line and column.
            t.name.replace(char::is_control, " "),
            t.scopes.join(","),
            t.last_used_at.as_deref().unwrap_or("never"),
            t.created_at
        ));
    }
    store.close().await;
    print!("{out}");
    Ok(())
}

/// Revokes a token: the next request with it is refused.
pub async fn token_revoke(args: TokenIdArgs) -> Result<(), String> {
    let store = args.store.open().await.map_err(|e| e.to_string())?;
    let owner = token_owner(&store, args.id).await?;
    let revoked = store
        .revoke_personal_access_token(owner, args.id)
        .await
        .map_err(|e| e.to_string())?;
    store.close().await;
    if !revoked {
        return Err(format!("there is no live token {}", args.id));
    }
    println!("Personal access token {} revoked.", args.id);
    Ok(())
}

/// Gives a token a new secret (same id, name and scopes; the old secret stops working at once)
/// and prints the new token as the last line of stdout.
pub async fn token_regenerate(args: TokenIdArgs) -> Result<(), String> {
    let store = args.store.open().await.map_err(|e| e.to_string())?;
    let owner = token_owner(&store, args.id).await?;
    let (token, plain) = store
        .regenerate_personal_access_token(owner, args.id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("there is no live token {}", args.id))?;
    store.close().await;
    println!(
        "Personal access token {:?} regenerated (scopes: {}); the old one no longer works. \
         It is shown only once:",
        token.name,
        token.scopes.join(",")
    );
    println!("{plain}");
    Ok(())
}

async fn token_owner(store: &cms_store::Store, id: i64) -> Result<i64, String> {
    store
        .personal_access_token_owner(id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("there is no live token {id}"))
}

/// Prints the new charger's uuid as the last line of stdout.
pub async fn charger_add(args: ChargerAddArgs) -> Result<(), String> {
    let identity = ChargerIdentity::parse(&args.identity).map_err(|e| e.to_string())?;
    let credentials = charger_credentials(args.security_profile, args.password.as_deref())
        .map_err(|e| e.to_string())?;
    let store = args.quotas.open(&args.store).await?;
    let new = NewCharger {
        identity: identity.to_string(),
        reference: args.reference,
        password_hash: credentials.password_hash,
        security_profile: i64::from(args.security_profile),
        site_uuid: args.site,
    };
    let uuid = store.add_charger(&new).await.map_err(explain)?;
    store.close().await;
    println!(
        "Charger {identity} registered; {}",
        how_it_connects(&identity, args.security_profile)
    );
    print_credentials(
        &identity,
        args.security_profile,
        &credentials.generated_password,
    );
    println!("{uuid}");
    Ok(())
}

/// Where and how a charger of `security_profile` connects.
fn how_it_connects(identity: &ChargerIdentity, security_profile: u8) -> String {
    let scheme = if security_profile >= 2 {
        "wss://<ocpp-tls-addr>"
    } else {
        "ws://<ocpp-addr>"
    };
    format!("it connects to {scheme}/ocpp/{identity}")
}

/// The credentials a charger connects with: a generated password, printed this once.
fn print_credentials(identity: &ChargerIdentity, security_profile: u8, generated: &Option<String>) {
    match (generated, security_profile) {
        (Some(password), _) => println!(
            "with HTTP Basic auth, user {identity} and this password, shown only once: {password}"
        ),
        (None, 0) => println!("without credentials (security profile 0): for test benches only"),
        (None, 3) => println!(
            "over wss with a client certificate of the gateway's client CA whose subject CN is {identity}"
        ),
        (None, _) => println!("with HTTP Basic auth, user {identity} and the given password"),
    }
}

#[derive(Debug, Clone, clap::Args)]
pub struct ChargerMoveArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The charger's identity.
    #[arg(long)]
    pub identity: String,
    /// The uuid of the site to move it to (its owner team's charger quota applies).
    #[arg(long)]
    pub site: String,
    /// Its new Basic-auth password, 16 to 40 printable characters without `:`; without one a
    /// strong password is generated and printed once. The old one stops working.
    #[arg(long, env = "CMS_CHARGER_PASSWORD", hide_env_values = true)]
    pub password: Option<String>,
    /// Its security profile from now on (1, 2 or 3; 0 only for a test bench).
    #[arg(long, default_value_t = 1)]
    pub security_profile: u8,
    #[command(flatten)]
    pub quotas: QuotaArgs,
}

/// Moves a charger to another site, another team's maybe, with new credentials and without the
/// proxy servers its former holder set: how the platform operators settle a claim to an
/// identity registered by someone else (docs/api.md "Claiming a charger"). Prints its uuid last.
pub async fn charger_move(args: ChargerMoveArgs) -> Result<(), String> {
    let identity = ChargerIdentity::parse(&args.identity).map_err(|e| e.to_string())?;
    let credentials = charger_credentials(args.security_profile, args.password.as_deref())
        .map_err(|e| e.to_string())?;
    let store = args.quotas.open(&args.store).await?;
    let moved = store
        .move_charger(
            identity.as_str(),
            &args.site,
            i64::from(args.security_profile),
            credentials.password_hash.as_deref(),
        )
        .await;
    store.close().await;
    let uuid = moved.map_err(explain)?;
    println!(
        "Charger {identity} moved to site {}; {}",
        args.site,
        how_it_connects(&identity, args.security_profile)
    );
    print_credentials(
        &identity,
        args.security_profile,
        &credentials.generated_password,
    );
    println!("{uuid}");
    Ok(())
}

#[derive(Debug, Clone, clap::Args)]
pub struct ChargerImportArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// One charger per line, `identity` or `identity,password`; `#` starts a comment; `-` reads
    /// standard input. A line without a password gets a generated one.
    #[arg(long)]
    pub file: PathBuf,
    /// 1 = Basic auth (the default), 2 = Basic auth over wss, 3 = client certificate; 0 = no
    /// credentials, only for test benches. With 0 and 3 every line must be an identity alone.
    #[arg(long, default_value_t = 1)]
    pub security_profile: u8,
    /// The site to put them in; default: the operators' default site.
    #[arg(long)]
    pub site: Option<String>,
    #[command(flatten)]
    pub quotas: QuotaArgs,
}

/// Registers many chargers in one transaction (all or none); prints `uuid identity` per line,
/// followed by the password when it was generated (shown this once).
pub async fn charger_import(args: ChargerImportArgs) -> Result<(), String> {
    let text = if args.file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(|e| e.to_string())?
    } else {
        std::fs::read_to_string(&args.file)
            .map_err(|e| format!("cannot read {}: {e}", args.file.display()))?
    };
    let mut chargers = Vec::new();
    let mut generated = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at_line = |e: String| format!("line {}: {e}", n + 1);
        let (identity, password) = match line.split_once(',') {
            Some((identity, password)) => (identity.trim(), Some(password.trim())),
            None => (line, None),
        };
        let identity = ChargerIdentity::parse(identity).map_err(|e| at_line(e.to_string()))?;
        let credentials = charger_credentials(args.security_profile, password)
            .map_err(|e| at_line(e.to_string()))?;
        chargers.push(NewCharger {
            identity: identity.to_string(),
            reference: None,
            password_hash: credentials.password_hash,
            security_profile: i64::from(args.security_profile),
            site_uuid: args.site.clone(),
        });
        generated.push(credentials.generated_password);
    }
    let store = args.quotas.open(&args.store).await?;
    let uuids = store.add_chargers(&chargers).await;
    store.close().await;
    let uuids = uuids.map_err(explain)?;
    let mut out = String::with_capacity(uuids.len() * 64);
    for ((uuid, charger), password) in uuids.iter().zip(&chargers).zip(&generated) {
        match password {
            Some(password) => out.push_str(&format!("{uuid} {} {password}\n", charger.identity)),
            None => out.push_str(&format!("{uuid} {}\n", charger.identity)),
        }
    }
    print!("{out}");
    eprintln!("registered {} chargers", uuids.len());
    Ok(())
}

#[derive(Debug, Clone, clap::Args)]
pub struct ChargerLicensesArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The charger's identity.
    pub identity: String,
    /// Site load management (smart charging): without it the charger is left out of its
    /// site's balancing and charges at its own limit.
    #[arg(long)]
    pub smart: Option<bool>,
    /// Proxy relaying and prices shown on the charger.
    #[arg(long)]
    pub pro: Option<bool>,
}

/// Grants or withdraws a charger's licences (the platform operator's part) and prints those it
/// holds then.
pub async fn charger_licenses(args: ChargerLicensesArgs) -> Result<(), String> {
    let store = args.store.open().await.map_err(|e| e.to_string())?;
    let result = async {
        let id = store
            .charger_by_identity(&args.identity)
            .await?
            .map(|(id, _session)| id)
            .ok_or_else(|| cms_store::StoreError::NotFound("charger".into()))?;
        store.set_charger_licenses(id, args.smart, args.pro).await
    }
    .await;
    store.close().await;
    match result.map_err(|e| e.to_string())? {
        Some(held) => {
            println!("{}: smart {}, pro {}", args.identity, held.smart, held.pro);
            Ok(())
        }
        None => Err(format!("no charger {}", args.identity)),
    }
}
