//! The console's sign-in as its browser does it: the public client `cms-console`, present in
//! every store, with PKCE and a redirect URI on the API's own origin, tokens without a client
//! secret, and sign-out revoking the token (RFC 7009).

use crate::oauth::{CHALLENGE, EMAIL, PASSWORD, Reply, VERIFIER};
use crate::support::{Api, Cms, REPLY_TIMEOUT, on_both_stores};

const CONSOLE: &str = "cms-console";

/// A browser at the console's origin, with a user who can sign in.
struct Browser {
    base: String,
    http: reqwest::Client,
}

impl Browser {
    async fn open(cms: &Cms) -> Browser {
        let user = cms
            .cli(&["user", "create", "--email", EMAIL, "--password", PASSWORD])
            .await;
        assert!(user.status.success(), "user create: {}", user.stderr);
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(REPLY_TIMEOUT)
            .build()
            .expect("http client");
        Browser {
            base: cms.http_url(""),
            http,
        }
    }

    /// Where the console lives, as `auth.js` names it: `${location.origin}/console/`.
    fn console(&self) -> String {
        format!("{}/console/", self.base)
    }

    async fn authorize(&self, redirect_uri: &str, pkce: bool) -> Reply {
        let mut query = vec![
            ("response_type", "code"),
            ("client_id", CONSOLE),
            ("redirect_uri", redirect_uri),
            ("scope", "*"),
            ("state", "st4te"),
        ];
        if pkce {
            query.extend([
                ("code_challenge", CHALLENGE),
                ("code_challenge_method", "S256"),
            ]);
        }
        let request = self
            .http
            .get(format!("{}/oauth/authorize", self.base))
            .query(&query);
        Reply::from(request.send().await.expect("GET /oauth/authorize")).await
    }

    async fn post_form(&self, path: &str, form: &[(&str, &str)]) -> Reply {
        let request = self.http.post(format!("{}{path}", self.base)).form(form);
        Reply::from(request.send().await.expect("POST")).await
    }

    /// The query of a redirect back to the console.
    fn back_at_console(&self, reply: &Reply) -> Vec<(String, String)> {
        assert_eq!(reply.status, 302, "a redirect: {}", reply.body);
        let location = reply.location.as_deref().expect("a Location");
        assert!(
            location.starts_with(&format!("{}?", self.console())),
            "back at the console: {location}"
        );
        reqwest::Url::parse(location)
            .expect("an absolute Location")
            .query_pairs()
            .into_owned()
            .collect()
    }

    /// Authorize, log in, approve when asked: the code.
    async fn code(&self) -> String {
        let login = self.authorize(&self.console(), true).await;
        assert_eq!(login.status, 200, "{}", login.body);
        let mut page = self
            .post_form(
                "/oauth/login",
                &[
                    ("request", &login.request_field()),
                    ("email", EMAIL),
                    ("password", PASSWORD),
                ],
            )
            .await;
        if page.status == 200 && page.has_request_field() {
            let request = page.request_field();
            page = self
                .post_form(
                    "/oauth/authorize",
                    &[("request", &request), ("decision", "approve")],
                )
                .await;
        }
        let query = self.back_at_console(&page);
        let param = |name: &str| {
            query
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(param("state").as_deref(), Some("st4te"));
        param("code").expect("a code")
    }

    /// `POST /oauth/token` as the console sends it: its client id, no secret.
    async fn token(&self, form: &[(&str, &str)]) -> Reply {
        let form = [&[("client_id", CONSOLE)], form].concat();
        self.post_form("/oauth/token", &form).await
    }

    async fn exchange(&self, code: &str) -> Reply {
        self.token(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", &self.console()),
            ("code_verifier", VERIFIER),
        ])
        .await
    }

    async fn revoke(&self, token: &str) -> Reply {
        self.post_form("/oauth/revoke", &[("token", token), ("client_id", CONSOLE)])
            .await
    }
}

fn tokens(reply: &Reply) -> (String, String) {
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json["scope"], "*", "{}", reply.body);
    let field = |name: &str| reply.json[name].as_str().expect(name).to_string();
    (field("access_token"), field("refresh_token"))
}

on_both_stores!(the_console_signs_in_with_pkce_and_no_secret, |cms| {
    let browser = Browser::open(&cms).await;
    let listed = cms.cli(&["oauth", "client", "list"]).await;
    assert!(listed.stdout.contains(CONSOLE), "listed: {}", listed.stdout);
    let revoke = ["oauth", "client", "revoke", "--client-id", CONSOLE];
    let refused = cms.cli(&revoke).await;
    assert!(!refused.status.success(), "the console's client stays");
    assert!(
        refused.stderr.contains("cannot be revoked"),
        "{}",
        refused.stderr
    );

    let code = browser.code().await;
    let (access, refresh) = tokens(&browser.exchange(&code).await);
    Api::new(&cms, &access).get_ok("/api/v2/teams").await;
    let refreshed = browser
        .token(&[("grant_type", "refresh_token"), ("refresh_token", &refresh)])
        .await;
    let (access, _) = tokens(&refreshed);
    let api = Api::new(&cms, &access);
    api.get_ok("/api/v2/teams").await;

    // Sign-out: the token stops working from the next request on.
    let revoked = browser.revoke(&access).await;
    assert_eq!((revoked.status, revoked.body.as_str()), (200, ""));
    assert_eq!(api.get("/api/v2/teams").await.status, 401);
    // Revoking it again, or a token never issued, is answered alike.
    for token in [access.as_str(), "not-a-token", "abc.def"] {
        let again = browser.revoke(token).await;
        assert_eq!((again.status, again.body.as_str()), (200, ""), "{token}");
    }
});

on_both_stores!(revoking_the_refresh_token_ends_its_access_token, |cms| {
    let browser = Browser::open(&cms).await;
    let (access, refresh) = tokens(&browser.exchange(&browser.code().await).await);
    let revoked = browser.revoke(&refresh).await;
    assert_eq!((revoked.status, revoked.body.as_str()), (200, ""));
    assert_eq!(
        Api::new(&cms, &access).get("/api/v2/teams").await.status,
        401
    );
    let refreshed = browser
        .token(&[("grant_type", "refresh_token"), ("refresh_token", &refresh)])
        .await;
    assert_eq!(refreshed.status, 400, "{}", refreshed.body);
});

#[tokio::test]
async fn the_console_is_sent_back_only_to_its_own_origin_and_only_with_pkce() {
    let cms = Cms::up().await;
    let browser = Browser::open(&cms).await;
    let elsewhere = browser
        .authorize("https://evil.example/console/", true)
        .await;
    assert_eq!(elsewhere.status, 400, "an error page: {}", elsewhere.body);
    assert_eq!(elsewhere.location, None);
    let other_path = browser
        .authorize(&format!("{}/elsewhere/", browser.base), true)
        .await;
    assert_eq!(other_path.status, 400, "{}", other_path.body);

    let without_pkce = browser.authorize(&browser.console(), false).await;
    let query = browser.back_at_console(&without_pkce);
    assert!(
        query.contains(&("error".to_string(), "invalid_request".to_string())),
        "{query:?}"
    );

    // Without a verifier, or from another client without its secret: no token.
    let code = browser.code().await;
    let without_verifier = browser
        .token(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &browser.console()),
        ])
        .await;
    assert_eq!(without_verifier.status, 400, "{}", without_verifier.body);
    let created = cms
        .cli(&[
            "oauth",
            "client",
            "create",
            "--name",
            "App",
            "--redirect-uri",
            "https://app.example.com/cb",
        ])
        .await;
    let (other_id, _) = created.last_line().split_once(' ').expect("id and secret");
    let secretless = browser
        .post_form(
            "/oauth/token",
            &[
                ("client_id", other_id),
                ("grant_type", "refresh_token"),
                ("refresh_token", "a.b"),
            ],
        )
        .await;
    assert_eq!(secretless.status, 401, "{}", secretless.body);
}
