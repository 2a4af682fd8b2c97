//! Admin commands for OAuth 2.0: registering, listing and revoking client applications,
//! listing and revoking users' grants, and giving users the password they log in with on the
//! authorization page. Clients are registered only here, never through the API.

use crate::paging::every_page;
use crate::store_args::StoreArgs;
use chrono::Utc;

/// Shortest password `cms user create` accepts (Laravel's default rule).
pub const MIN_PASSWORD_LEN: usize = 8;

#[derive(Debug, Clone, clap::Args)]
pub struct ClientCreateArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The application's name, shown to users on the approval page.
    #[arg(long)]
    pub name: String,
    /// Where users are sent back with the code: the authorization request's `redirect_uri`
    /// must be exactly this. `http(s)://...` or a native app's `com.example.app:/path`.
    #[arg(long)]
    pub redirect_uri: String,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ClientListArgs {
    #[command(flatten)]
    pub store: StoreArgs,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ClientRevokeArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The client's id (a uuid, as `cms oauth client list` shows it).
    #[arg(long)]
    pub client_id: String,
}

#[derive(Debug, Clone, clap::Args)]
pub struct GrantListArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Whose grants.
    #[arg(long)]
    pub email: String,
}

#[derive(Debug, Clone, clap::Args)]
pub struct GrantRevokeArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The grant's id (`cms oauth grant list` shows it).
    #[arg(long)]
    pub id: i64,
}

#[derive(Debug, Clone, clap::Args)]
pub struct UserCreateArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The user's e-mail; the user (and a personal team) is created when absent, else updated.
    #[arg(long)]
    pub email: String,
    /// The display name; default: the part of the e-mail before `@` (for a new user).
    #[arg(long)]
    pub name: Option<String>,
    /// The password to log in with on the OAuth authorization page, at least 8 characters.
    #[arg(long, env = "CMS_USER_PASSWORD", hide_env_values = true)]
    pub password: String,
    /// Create the user outside the operators' team (as `cms token create --guest`).
    #[arg(long)]
    pub guest: bool,
}

/// Registers a client; prints `<client_id> <client_secret>` as the last line of stdout (the
/// secret is stored hashed and shown only this once).
pub async fn client_create(args: ClientCreateArgs) -> Result<(), String> {
    let name = args.name.trim();
    if name.is_empty() || name.chars().count() > 255 {
        return Err("the name must be 1 to 255 characters".into());
    }
    cms_store::oauth::check_redirect_uri(&args.redirect_uri)?;
    let store = args.store.open().await.map_err(|e| e.to_string())?;
    let (client, secret) = store
        .create_oauth_client(name, &args.redirect_uri)
        .await
        .map_err(|e| e.to_string())?;
    store.close().await;
    println!(
        "OAuth client {:?} registered with redirect URI {}. Its client id and secret \
         (the secret is shown only once):",
        client.name, client.redirect_uri
    );
    println!("{} {secret}", client.client_id);
    Ok(())
}

/// Lists the live clients, one a line, tab-separated: id, name, redirect URI, live grants,
/// pending authorization requests, created.
pub async fn client_list(args: ClientListArgs) -> Result<(), String> {
    let store = args.store.open().await.map_err(|e| e.to_string())?;
    let clients = store
        .oauth_clients(Utc::now())
        .await
        .map_err(|e| e.to_string())?;
    store.close().await;
    let mut out = String::from("client_id\tname\tredirect_uri\tgrants\tpending\tcreated_at\n");
    for c in &clients {
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            c.client.client_id,
            one_line(&c.client.name),
            c.client.redirect_uri,
            c.live_grants,
            c.pending_requests,
            c.created_at
        ));
    }
    print!("{out}");
    Ok(())
}

/// Revokes a client: its tokens stop working at once, its pending codes and authorization
/// requests are dropped, and it can start no new authorization.
pub async fn client_revoke(args: ClientRevokeArgs) -> Result<(), String> {
    let store = args.store.open().await.map_err(|e| e.to_string())?;
    let revoked = store
        .revoke_oauth_client(args.client_id.trim(), Utc::now())
        .await
        .map_err(|e| e.to_string())?;
    store.close().await;
    if !revoked {
        return Err(format!(
            "there is no live OAuth client {:?}",
            args.client_id
        ));
    }
    println!(
        "OAuth client {} revoked: its tokens no longer work.",
        args.client_id.trim()
    );
    Ok(())
}

/// Lists a user's live grants, one a line, tab-separated: id, client id, client name, scopes,
/// created, last used to obtain tokens.
pub async fn grant_list(args: GrantListArgs) -> Result<(), String> {
    const PAGE: i64 = 100;
    let store = args.store.open().await.map_err(|e| e.to_string())?;
    let user = store
        .user_by_email(&args.email)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("there is no user {:?}", args.email))?;
    let now = Utc::now();
    let grants = every_page(PAGE, |limit, offset| {
        store.oauth_grants(user.id, limit, offset, now)
    })
    .await?;
    let mut out = String::from("id\tclient_id\tclient\tscopes\tcreated_at\tupdated_at\n");
    for g in &grants {
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            g.id,
            g.client_id,
            one_line(&g.client_name),
            g.scopes.join(","),
            g.created_at,
            g.updated_at
        ));
    }
    store.close().await;
    print!("{out}");
    Ok(())
}

/// Revokes a grant (any user's): the application's tokens from it stop working at once.
pub async fn grant_revoke(args: GrantRevokeArgs) -> Result<(), String> {
    let store = args.store.open().await.map_err(|e| e.to_string())?;
    let now = Utc::now();
    let owner = store
        .oauth_grant_owner(args.id, now)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("there is no live OAuth grant {}", args.id))?;
    let revoked = store
        .revoke_oauth_grant(owner, args.id, now)
        .await
        .map_err(|e| e.to_string())?;
    store.close().await;
    if !revoked {
        return Err(format!("there is no live OAuth grant {}", args.id));
    }
    println!(
        "OAuth grant {} revoked: its tokens no longer work.",
        args.id
    );
    Ok(())
}

/// A name may hold anything it was registered with: keep it on its line and column.
fn one_line(text: &str) -> String {
    text.replace(char::is_control, " ")
}

/// Creates or updates a user with a password; prints the user's uuid as the last line.
pub async fn user_create(args: UserCreateArgs) -> Result<(), String> {
    if !email_like(&args.email) {
        return Err(format!("{:?} is not an e-mail address", args.email));
    }
    if args.password.chars().count() < MIN_PASSWORD_LEN {
        return Err(format!(
            "the password must be at least {MIN_PASSWORD_LEN} characters"
        ));
    }
    let name = args.name.as_deref().map(str::trim);
    if name.is_some_and(|n| n.is_empty() || n.chars().count() > 255) {
        return Err("the name must be 1 to 255 characters".into());
    }
    let store = args.store.open().await.map_err(|e| e.to_string())?;
    let user = store
        .ensure_user_in(&args.email, !args.guest)
        .await
        .map_err(|e| e.to_string())?;
    store
        .set_user_login(user.id, name, &args.password)
        .await
        .map_err(|e| e.to_string())?;
    store.close().await;
    println!(
        "User {} can log in with the password given to authorize OAuth clients.",
        user.email
    );
    println!("{}", user.uuid);
    Ok(())
}

/// One `@` with something on each side and no spaces: enough to catch a mistyped argument.
fn email_like(text: &str) -> bool {
    matches!(text.split_once('@'), Some((local, domain))
        if !local.is_empty() && !domain.is_empty() && !domain.contains('@'))
        && !text.chars().any(char::is_whitespace)
}
