//! The authorization pages: log in, approve or deny, and the error page for requests that
//! cannot be sent back to the client. Plain server-rendered HTML, no script; every value from a
//! request or the store is escaped.

use super::codec::escape_html;
use axum::http::StatusCode;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderName};
use axum::response::{IntoResponse, Response};
use cms_store::Scope;

/// The login form: e-mail and password, the request's secret in a hidden field.
pub fn login(
    status: StatusCode,
    client_name: &str,
    request: &str,
    error: Option<&str>,
) -> Response {
    let error = error
        .map(|e| format!(r#"<p class="error" role="alert">{}</p>"#, escape_html(e)))
        .unwrap_or_default();
    let body = format!(
        r#"<h1>Log in</h1>
<p><strong>{client}</strong> asks for access to your account. Log in to continue.</p>
{error}
<form method="post" action="/oauth/login">
<input type="hidden" name="request" value="{request}">
<label>E-mail <input type="email" name="email" autocomplete="username" required autofocus></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<button type="submit">Log in</button>
</form>"#,
        client = escape_html(client_name),
        request = escape_html(request),
    );
    page(status, "Log in", &body)
}

/// The decision form: what the client asks for, scope by scope, and two buttons.
pub fn approve(client_name: &str, scopes: &[String], request: &str) -> Response {
    let items: String = scopes
        .iter()
        .map(|scope| {
            let description = Scope::DESCRIBED
                .iter()
                .find(|(name, _)| name == scope)
                .map(|(_, description)| *description)
                .unwrap_or("");
            format!(
                "<li><code>{}</code>: {}</li>\n",
                escape_html(scope),
                escape_html(description)
            )
        })
        .collect();
    let body = format!(
        r#"<h1>Authorization request</h1>
<p><strong>{client}</strong> is requesting permission to access your account. It will be able to:</p>
<ul>
{items}</ul>
<form method="post" action="/oauth/authorize">
<input type="hidden" name="request" value="{request}">
<button type="submit" name="decision" value="approve">Authorize</button>
<button type="submit" name="decision" value="deny">Cancel</button>
</form>"#,
        client = escape_html(client_name),
        request = escape_html(request),
    );
    page(StatusCode::OK, "Authorization request", &body)
}

/// An error the browser's user sees, because the client cannot safely be told.
pub fn error(status: StatusCode, message: &str) -> Response {
    let body = format!(
        "<h1>Authorization failed</h1>\n<p class=\"error\" role=\"alert\">{}</p>",
        escape_html(message)
    );
    page(status, "Authorization failed", &body)
}

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 32rem; margin: 3rem auto; padding: 0 1rem; }}
label {{ display: block; margin: .75rem 0; }}
input {{ display: block; width: 100%; padding: .4rem; box-sizing: border-box; }}
button {{ margin: .75rem .5rem 0 0; padding: .4rem 1rem; }}
.error {{ color: #a00; }}
</style>
</head>
<body>
{body}
</body>
</html>
"#,
        title = escape_html(title),
    );
    (
        status,
        [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (CACHE_CONTROL, "no-store"),
            // Never inside another site's frame: a framed approval page could be clicked
            // through by a user who does not see it.
            (HeaderName::from_static("x-frame-options"), "DENY"),
            (
                HeaderName::from_static("content-security-policy"),
                "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
            ),
            (HeaderName::from_static("referrer-policy"), "no-referrer"),
        ],
        html,
    )
        .into_response()
}
