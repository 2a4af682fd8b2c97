//! Admin commands for OAuth 2.0: registering client applications, and giving users the
//! password they log in with on the authorization page.

use crate::store_args::StoreArgs;

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
