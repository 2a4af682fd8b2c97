//! OAuth 2.0 authorization code flow as a client application and its user's browser see it:
//! `cms user create` and `cms oauth client create`, the login and approval pages, the redirect
//! back with the code, the token endpoint, the access token on the REST API, and the user's and
//! the operator's view of the grants (listing and revoking them). The helpers serve the abuse
//! cases too (`abuse::oauth`).

use crate::support::{Api, Cms, REPLY_TIMEOUT, on_both_stores};
use reqwest::header::{LOCATION, RETRY_AFTER};
use serde_json::{Value, json};

pub(crate) const REDIRECT: &str = "https://app.example.com/callback";
pub(crate) const EMAIL: &str = "driver@example.com";
pub(crate) const PASSWORD: &str = "correct horse battery";
/// RFC 7636 Appendix B.
pub(crate) const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub(crate) const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
/// The PKCE parameters every authorization request carries.
pub(crate) const PKCE: [(&str, &str); 2] = [
    ("code_challenge", CHALLENGE),
    ("code_challenge_method", "S256"),
];

/// A registered client, a user with a password, and a browser that does not follow redirects.
pub(crate) struct App {
    base: String,
    pub(crate) http: reqwest::Client,
    pub(crate) client_id: String,
    pub(crate) client_secret: String,
}

/// An HTTP answer: status, the `Location` and `Retry-After` headers, the body, and the body as
/// JSON.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) location: Option<String>,
    pub(crate) retry_after: Option<String>,
    pub(crate) body: String,
    pub(crate) json: Value,
}

impl Reply {
    pub(crate) async fn from(response: reqwest::Response) -> Reply {
        let status = response.status().as_u16();
        let header = |name| {
            response
                .headers()
                .get(name)
                .map(|v: &reqwest::header::HeaderValue| {
                    v.to_str().expect("an ASCII header").to_string()
                })
        };
        let location = header(LOCATION);
        let retry_after = header(RETRY_AFTER);
        let body = response.text().await.expect("a body");
        let json = serde_json::from_str(&body).unwrap_or(Value::Null);
        Reply {
            status,
            location,
            retry_after,
            body,
            json,
        }
    }

    /// The query parameters of the redirect, which must go to the client's redirect URI.
    pub(crate) fn redirect_params(&self) -> Vec<(String, String)> {
        assert_eq!(self.status, 302, "expected a redirect: {}", self.body);
        let location = self.location.as_deref().expect("a Location header");
        let url = reqwest::Url::parse(location).expect("an absolute Location");
        assert!(
            location.starts_with(&format!("{REDIRECT}?")),
            "redirected to the client: {location}"
        );
        url.query_pairs().into_owned().collect()
    }

    pub(crate) fn redirect_param(&self, name: &str) -> Option<String> {
        self.redirect_params()
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    /// Whether the page has a hidden `request` field (a login or approval page does).
    pub(crate) fn has_request_field(&self) -> bool {
        self.body.contains(r#"name="request" value=""#)
    }

    /// The hidden `request` field of a login or approval page.
    pub(crate) fn request_field(&self) -> String {
        let marker = r#"name="request" value=""#;
        let start = self.body.find(marker).unwrap_or_else(|| {
            panic!("a page with a request field: {}", self.body);
        }) + marker.len();
        let end = self.body[start..].find('"').expect("a closing quote");
        self.body[start..start + end].to_string()
    }
}

impl App {
    pub(crate) async fn register(cms: &Cms) -> App {
        let user = cms
            .cli(&["user", "create", "--email", EMAIL, "--password", PASSWORD])
            .await;
        assert!(user.status.success(), "user create: {}", user.stderr);
        let client = cms
            .cli(&[
                "oauth",
                "client",
                "create",
                "--name",
                "Fleet <App>",
                "--redirect-uri",
                REDIRECT,
            ])
            .await;
        assert!(client.status.success(), "client create: {}", client.stderr);
        let (client_id, client_secret) = client
            .last_line()
            .split_once(' ')
            .expect("`<client_id> <client_secret>` last");
        assert_eq!(client_secret.len(), 40, "{}", client.stdout);
        App {
            base: cms.http_url(""),
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .timeout(REPLY_TIMEOUT)
                .build()
                .expect("http client"),
            client_id: client_id.to_string(),
            client_secret: client_secret.to_string(),
        }
    }

    /// The same application in a browser at another loopback address (`127.0.0.2`, ...), which
    /// the login limits count as another client.
    pub(crate) fn at_address(&self, ip: &str) -> App {
        App {
            base: self.base.clone(),
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .timeout(REPLY_TIMEOUT)
                .local_address(ip.parse::<std::net::IpAddr>().expect("an IP address"))
                .build()
                .expect("http client"),
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
        }
    }

    /// `GET <path>` (a path with its query string) in the browser.
    pub(crate) async fn get(&self, path: &str) -> Reply {
        let request = self.http.get(format!("{}{path}", self.base));
        Reply::from(request.send().await.expect("GET")).await
    }

    pub(crate) async fn authorize(&self, params: &[(&str, &str)]) -> Reply {
        let request = self
            .http
            .get(format!("{}/oauth/authorize", self.base))
            .query(params);
        Reply::from(request.send().await.expect("GET /oauth/authorize")).await
    }

    /// The usual parameters of an authorization request, without PKCE.
    pub(crate) fn params<'a>(&'a self, scope: &'a str) -> Vec<(&'a str, &'a str)> {
        vec![
            ("client_id", self.client_id.as_str()),
            ("redirect_uri", REDIRECT),
            ("response_type", "code"),
            ("scope", scope),
            ("state", "st4te"),
        ]
    }

    /// The authorization request with the usual parameters and PKCE, plus `extra`.
    pub(crate) async fn authorize_with(&self, scope: &str, extra: &[(&str, &str)]) -> Reply {
        let mut params = self.params(scope);
        params.extend_from_slice(&PKCE);
        params.extend_from_slice(extra);
        self.authorize(&params).await
    }

    pub(crate) async fn post_form(&self, path: &str, form: &[(&str, &str)]) -> Reply {
        let request = self.http.post(format!("{}{path}", self.base)).form(form);
        Reply::from(request.send().await.expect("POST form")).await
    }

    pub(crate) async fn login(&self, request: &str, email: &str, password: &str) -> Reply {
        self.post_form(
            "/oauth/login",
            &[
                ("request", request),
                ("email", email),
                ("password", password),
            ],
        )
        .await
    }

    pub(crate) async fn decide(&self, request: &str, decision: &str) -> Reply {
        self.post_form(
            "/oauth/authorize",
            &[("request", request), ("decision", decision)],
        )
        .await
    }

    /// Through the pages to the code: authorize (with PKCE), log in, approve.
    pub(crate) async fn code(&self, scope: &str) -> String {
        let login_page = self.authorize_with(scope, &[]).await;
        assert_eq!(login_page.status, 200, "{}", login_page.body);
        let approval = self
            .login(&login_page.request_field(), EMAIL, PASSWORD)
            .await;
        assert_eq!(approval.status, 200, "{}", approval.body);
        let back = self.decide(&approval.request_field(), "approve").await;
        assert_eq!(back.redirect_param("state").as_deref(), Some("st4te"));
        back.redirect_param("code").expect("a code")
    }

    /// `POST /oauth/token`, form-encoded, with the client's id and secret in the body.
    pub(crate) async fn token(&self, params: &[(&str, &str)]) -> Reply {
        let mut form = vec![
            ("client_id", self.client_id.as_str()),
            ("client_secret", self.client_secret.as_str()),
        ];
        form.extend_from_slice(params);
        self.post_form("/oauth/token", &form).await
    }

    /// Exchanges `code` with the redirect URI and the PKCE verifier.
    pub(crate) async fn exchange(&self, code: &str) -> Reply {
        self.token(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
        ])
        .await
    }

    /// Through the pages and the token endpoint: `(access token, refresh token)`.
    pub(crate) async fn tokens(&self, scope: &str) -> (String, String) {
        let code = self.code(scope).await;
        assert_tokens(&self.exchange(&code).await, scope)
    }

    pub(crate) async fn refresh(&self, refresh_token: &str) -> Reply {
        self.token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
        ])
        .await
    }
}

/// A token response: the shape Passport answers with.
pub(crate) fn assert_tokens(reply: &Reply, scope: &str) -> (String, String) {
    assert_eq!(reply.status, 200, "{}", reply.body);
    let json = &reply.json;
    assert_eq!(json["token_type"], "Bearer");
    assert_eq!(json["expires_in"], 3600);
    assert_eq!(json["scope"], scope);
    let access = json["access_token"].as_str().expect("access_token");
    let refresh = json["refresh_token"].as_str().expect("refresh_token");
    assert!(!access.contains('|') && access.len() >= 40, "{access}");
    assert_ne!(access, refresh);
    (access.to_string(), refresh.to_string())
}

/// An RFC 6749 error: status, `error`, and a description also in `message`.
pub(crate) fn assert_oauth_error(reply: &Reply, status: u16, error: &str) {
    assert_eq!(reply.status, status, "{}", reply.body);
    assert_eq!(reply.json["error"], error, "{}", reply.body);
    assert!(
        reply.json["error_description"].is_string(),
        "{}",
        reply.body
    );
    assert_eq!(reply.json["message"], reply.json["error_description"]);
}

on_both_stores!(
    the_authorization_code_flow_yields_a_working_access_token,
    |cms| {
        let app = App::register(&cms).await;
        let login_page = app.authorize_with("chargers:read", &[]).await;
        assert_eq!(login_page.status, 200, "{}", login_page.body);
        assert!(
            login_page.body.contains("<form") && login_page.body.contains(r#"name="password""#)
        );
        assert!(
            login_page.body.contains("Fleet &lt;App&gt;"),
            "the client's name is escaped: {}",
            login_page.body
        );

        let approval = app
            .login(&login_page.request_field(), EMAIL, PASSWORD)
            .await;
        assert_eq!(approval.status, 200, "{}", approval.body);
        assert!(approval.body.contains("chargers:read"), "{}", approval.body);
        assert!(
            approval.body.contains("Read chargers"),
            "scopes are described: {}",
            approval.body
        );
        let back = app.decide(&approval.request_field(), "approve").await;
        assert_eq!(back.redirect_param("state").as_deref(), Some("st4te"));
        let code = back.redirect_param("code").expect("a code");

        let (access, _) = assert_tokens(&app.exchange(&code).await, "chargers:read");
        let api = Api::new(&cms, &access);
        let chargers = api.get_ok("/api/v3/chargers").await;
        assert!(chargers["data"].is_array(), "{chargers}");
        // The token carries only the approved scope.
        let uuid = cms.add_charger("CP-OAUTH-1").await;
        let reading = api.latest_meter_value(&uuid, 1).await;
        assert_eq!(reading.status, 403, "{}", reading.body);
        assert_eq!(api.get("/api/v3/user/tokens").await.status, 403);
    }
);

/// An application a user authorized with `tokens:write` may list and revoke the user's personal
/// access tokens, not mint one (nor a new secret for one): it would outlive the grant.
#[tokio::test]
async fn an_oauth_application_cannot_mint_personal_access_tokens() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;
    let code = app.code("tokens:read tokens:write").await;
    let (access, _) = assert_tokens(&app.exchange(&code).await, "tokens:read tokens:write");
    let api = Api::new(&cms, &access);
    let new_token = json!({"name": "from the app", "scopes": ["tokens:read"]});
    let answer = api.post("/api/v3/user/tokens", &new_token).await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert!(
        answer.json["message"]
            .as_str()
            .is_some_and(|m| m.contains("OAuth")),
        "{}",
        answer.body
    );
    // A token the user made themself: the application sees it, and may not renew it.
    cms.create_token(EMAIL, Some("tokens:read")).await;
    let listed = api.get_ok("/api/v3/user/tokens").await;
    let id = listed["data"][0]["id"].clone();
    assert!(id.is_i64(), "the user's own token is listed: {listed}");
    let answer = api
        .post(&format!("/api/v3/user/tokens/{id}/regenerate"), &json!({}))
        .await;
    assert_eq!(answer.status, 403, "{}", answer.body);
}

#[tokio::test]
async fn a_json_token_request_and_basic_client_authentication_work_too() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;
    let code = app.code("teams:read").await;
    let body = json!({
        "grant_type": "authorization_code",
        "client_id": app.client_id,
        "client_secret": app.client_secret,
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": VERIFIER,
    });
    let reply = Reply::from(
        app.http
            .post(format!("{}/oauth/token", app.base))
            .json(&body)
            .send()
            .await
            .expect("POST /oauth/token"),
    )
    .await;
    assert_tokens(&reply, "teams:read");

    let code = app.code("teams:read").await;
    let reply = Reply::from(
        app.http
            .post(format!("{}/oauth/token", app.base))
            .basic_auth(&app.client_id, Some(&app.client_secret))
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", code.as_str()),
                ("redirect_uri", REDIRECT),
                ("code_verifier", VERIFIER),
            ])
            .send()
            .await
            .expect("POST /oauth/token"),
    )
    .await;
    assert_tokens(&reply, "teams:read");
}

#[tokio::test]
async fn pkce_needs_the_matching_verifier() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;
    let code = app.code("chargers:read").await;
    let wrong = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXx";
    let base = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
    ];
    let without = app.token(&base).await;
    assert_oauth_error(&without, 400, "invalid_request");
    let mismatch = app
        .token(&[&base[..], &[("code_verifier", wrong)]].concat())
        .await;
    assert_oauth_error(&mismatch, 400, "invalid_grant");
    let matching = app
        .token(&[&base[..], &[("code_verifier", VERIFIER)]].concat())
        .await;
    let (access, _) = assert_tokens(&matching, "chargers:read");
    assert_eq!(
        Api::new(&cms, &access).get("/api/v3/chargers").await.status,
        200
    );

    // A malformed challenge goes back to the client as invalid_request.
    let mut params = app.params("chargers:read");
    params.extend([
        ("code_challenge", "short"),
        ("code_challenge_method", "S256"),
    ]);
    let bad = app.authorize(&params).await;
    assert_eq!(
        bad.redirect_param("error").as_deref(),
        Some("invalid_request")
    );
}

#[tokio::test]
async fn a_code_is_single_use_and_bound_to_its_client_and_redirect_uri() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;

    let code = app.code("chargers:read").await;
    let elsewhere = app
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", "https://app.example.com/other"),
            ("code_verifier", VERIFIER),
        ])
        .await;
    assert_oauth_error(&elsewhere, 400, "invalid_grant");
    let (access, _) = assert_tokens(&app.exchange(&code).await, "chargers:read");
    assert_oauth_error(&app.exchange(&code).await, 400, "invalid_grant");
    // A replayed code revokes what it yielded.
    let api = Api::new(&cms, &access);
    assert_eq!(api.get("/api/v3/chargers").await.status, 401);

    let code = app.code("chargers:read").await;
    let wrong_secret = app
        .post_form(
            "/oauth/token",
            &[
                ("client_id", &app.client_id),
                ("client_secret", "not-the-secret"),
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", VERIFIER),
            ],
        )
        .await;
    assert_oauth_error(&wrong_secret, 401, "invalid_client");
    assert_oauth_error(&app.exchange("nonsense").await, 400, "invalid_grant");
    let unsupported = app.token(&[("grant_type", "password")]).await;
    assert_oauth_error(&unsupported, 400, "unsupported_grant_type");
    // The code was not spent by the refused requests.
    assert_tokens(&app.exchange(&code).await, "chargers:read");
}

#[tokio::test]
async fn a_bad_client_or_redirect_uri_gets_an_error_page_not_a_redirect() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;
    let mismatch = app
        .authorize(&[
            ("client_id", &app.client_id),
            ("redirect_uri", "https://evil.example.com/steal"),
            ("response_type", "code"),
            ("scope", "chargers:read"),
        ])
        .await;
    assert_eq!(mismatch.status, 400, "{}", mismatch.body);
    assert_eq!(mismatch.location, None);
    assert!(mismatch.body.contains("redirect_uri"), "{}", mismatch.body);
    let unknown = app
        .authorize(&[
            ("client_id", "00000000-0000-0000-0000-000000000000"),
            ("redirect_uri", REDIRECT),
            ("response_type", "code"),
            ("scope", "chargers:read"),
        ])
        .await;
    assert_eq!((unknown.status, unknown.location), (400, None));

    // A parameter given twice is ambiguous: refused on a page too.
    let repeated = app
        .authorize_with("chargers:read", &[("response_type", "token")])
        .await;
    assert_eq!((repeated.status, repeated.location), (400, None));

    // Once the client and redirect URI are good (here: the registered one, by default),
    // errors go back to the client.
    let unsupported = app
        .authorize(&[
            ("client_id", &app.client_id),
            ("response_type", "token"),
            ("scope", "chargers:read"),
            ("state", "s"),
        ])
        .await;
    assert_eq!(
        unsupported.redirect_param("error").as_deref(),
        Some("unsupported_response_type")
    );
    assert_eq!(unsupported.redirect_param("state").as_deref(), Some("s"));
    let unknown_scope = app.authorize_with("chargers:read root", &[]).await;
    assert_eq!(
        unknown_scope.redirect_param("error").as_deref(),
        Some("invalid_scope")
    );
}

#[tokio::test]
async fn a_wrong_password_or_a_denial_yields_no_code() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;
    let login_page = app.authorize_with("chargers:read", &[]).await;
    let request = login_page.request_field();
    let wrong = app.login(&request, EMAIL, "not the password").await;
    assert_eq!(wrong.status, 401, "{}", wrong.body);
    assert_eq!(wrong.location, None);
    assert!(wrong.body.contains("do not match"), "{}", wrong.body);
    assert!(
        !wrong.body.contains(r#"name="decision""#),
        "no approval yet: {}",
        wrong.body
    );
    // Not logged in: the login page's request cannot approve.
    let sneaky = app.decide(&request, "approve").await;
    assert_eq!((sneaky.status, sneaky.location.as_deref()), (400, None));

    let approval = app.login(&wrong.request_field(), EMAIL, PASSWORD).await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    let denied = app.decide(&approval.request_field(), "deny").await;
    assert_eq!(
        denied.redirect_param("error").as_deref(),
        Some("access_denied")
    );
    assert_eq!(denied.redirect_param("state").as_deref(), Some("st4te"));
    assert_eq!(denied.redirect_param("code"), None);
    // Decided once: the page cannot be submitted again.
    let again = app.decide(&approval.request_field(), "approve").await;
    assert_eq!((again.status, again.location), (400, None));
}

#[tokio::test]
async fn refreshing_rotates_the_refresh_token() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;
    let code = app.code("chargers:read teams:read").await;
    let (first_access, first_refresh) =
        assert_tokens(&app.exchange(&code).await, "chargers:read teams:read");
    let refreshed = app
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &first_refresh),
            ("scope", "chargers:read"),
        ])
        .await;
    let (access, refresh) = assert_tokens(&refreshed, "chargers:read");
    assert_ne!(refresh, first_refresh);
    assert_eq!(
        Api::new(&cms, &access).get("/api/v3/chargers").await.status,
        200
    );
    assert_eq!(
        Api::new(&cms, &first_access)
            .get("/api/v3/chargers")
            .await
            .status,
        401,
        "the old access token stops with its refresh token"
    );
    let replay = app
        .token(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &first_refresh),
        ])
        .await;
    assert_oauth_error(&replay, 400, "invalid_grant");
}

#[tokio::test]
async fn the_openapi_document_lists_the_authentication_endpoints() {
    let cms = Cms::up().await;
    let document = Api::new(&cms, "").get_ok("/api/openapi.json").await;
    for (path, method) in [
        ("/oauth/authorize", "get"),
        ("/oauth/authorize", "post"),
        ("/oauth/login", "post"),
        ("/oauth/token", "post"),
        ("/api/v3/user/tokens", "get"),
        ("/api/v3/user/tokens", "post"),
        ("/api/v3/user/tokens/{token_id}", "delete"),
        ("/api/v3/user/tokens/{token_id}/regenerate", "post"),
        ("/api/v3/user/oauth-grants", "get"),
        ("/api/v3/user/oauth-grants/{grant_id}", "delete"),
    ] {
        assert!(
            document["paths"][path][method].is_object(),
            "{method} {path} is documented"
        );
    }
    // The grants' endpoints, like every API endpoint, need a token.
    let anonymous = Api::new(&cms, "none");
    for (method, path) in [
        ("GET", GRANTS.to_string()),
        ("DELETE", format!("{GRANTS}/1")),
    ] {
        let answer = anonymous.send_authorized(method, &path, None, None).await;
        assert_eq!(answer.status, 401, "{method} {path}: {}", answer.body);
    }
}

const GRANTS: &str = "/api/v3/user/oauth-grants";

on_both_stores!(
    a_user_sees_and_revokes_the_applications_they_authorized,
    |cms| {
        let app = App::register(&cms).await;
        let (first_access, _) = app.tokens("chargers:read").await;
        let (access, refresh) = app.tokens("teams:read sites:read").await;
        let user = Api::new(&cms, &cms.create_token(EMAIL, None).await);
        let listed = user.get_ok(GRANTS).await;
        let grants = listed["data"].as_array().expect("a data array");
        assert_eq!(grants.len(), 2, "{listed}");
        let newest = &grants[0];
        assert_eq!(newest["client"]["id"], app.client_id.as_str());
        assert_eq!(newest["client"]["name"], "Fleet <App>");
        assert_eq!(newest["scopes"], json!(["teams:read", "sites:read"]));
        assert!(newest["created_at"].is_string() && newest["updated_at"].is_string());
        assert_eq!(listed["meta"]["per_page"], 25);
        assert_eq!(listed["links"]["next"], Value::Null);

        // Another user sees none of them and cannot revoke them.
        let stranger = Api::new(&cms, &cms.create_token("other@example.com", None).await);
        assert_eq!(stranger.get_ok(GRANTS).await["data"], json!([]));
        let path = format!("{GRANTS}/{}", newest["id"]);
        stranger.expect(404, "DELETE", &path, None).await;
        user.expect(404, "DELETE", &format!("{GRANTS}/999999"), None)
            .await;

        assert_eq!(user.expect(200, "DELETE", &path, None).await, json!({}));
        assert_eq!(Api::new(&cms, &access).get(GRANTS).await.status, 401);
        assert_oauth_error(&app.refresh(&refresh).await, 400, "invalid_grant");
        assert_eq!(
            Api::new(&cms, &first_access)
                .get("/api/v3/chargers")
                .await
                .status,
            200,
            "the other grant goes on"
        );
        let left = user.get_ok(GRANTS).await;
        assert_eq!(left["data"].as_array().map(Vec::len), Some(1), "{left}");
        user.expect(404, "DELETE", &path, None).await;
    }
);

#[tokio::test]
async fn operators_list_and_revoke_grants_and_clients_from_the_command_line() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;
    let (access, _) = app.tokens("chargers:read").await;
    let pending = app.authorize_with("chargers:read", &[]).await;
    assert_eq!(pending.status, 200, "{}", pending.body);

    let clients = cms.cli(&["oauth", "client", "list"]).await;
    assert!(clients.status.success(), "{}", clients.stderr);
    let row = clients
        .stdout
        .lines()
        .find(|line| line.starts_with(&app.client_id))
        .unwrap_or_else(|| panic!("the client is listed: {}", clients.stdout));
    let columns: Vec<&str> = row.split('\t').collect();
    assert_eq!(
        columns[1..5],
        ["Fleet <App>", REDIRECT, "1", "1"],
        "name, redirect URI, live grants, pending requests: {row}"
    );

    let grants = cms.cli(&["oauth", "grant", "list", "--email", EMAIL]).await;
    assert!(grants.status.success(), "{}", grants.stderr);
    let grant = grants.stdout.lines().nth(1).expect("one grant").to_string();
    let columns: Vec<&str> = grant.split('\t').collect();
    assert_eq!(
        columns[1..4],
        [app.client_id.as_str(), "Fleet <App>", "chargers:read"]
    );
    let revoked = cms
        .cli(&["oauth", "grant", "revoke", "--id", columns[0]])
        .await;
    assert!(revoked.status.success(), "{}", revoked.stderr);
    let api = Api::new(&cms, &access);
    assert_eq!(api.get("/api/v3/chargers").await.status, 401);
    let again = cms
        .cli(&["oauth", "grant", "revoke", "--id", columns[0]])
        .await;
    assert!(!again.status.success(), "a revoked grant is no longer live");

    let revoked = cms
        .cli(&["oauth", "client", "revoke", "--client-id", &app.client_id])
        .await;
    assert!(revoked.status.success(), "{}", revoked.stderr);
    let clients = cms.cli(&["oauth", "client", "list"]).await;
    assert!(
        !clients.stdout.contains(&app.client_id),
        "a revoked client is not listed: {}",
        clients.stdout
    );
    let gone = app.login(&pending.request_field(), EMAIL, PASSWORD).await;
    assert_eq!(gone.status, 400, "its pending request ended: {}", gone.body);
}
