//! Database URLs as logs and errors may show them: without their password, whatever its shape.

/// The URL with the password of its user info and the value of every query parameter that
/// names a secret replaced by `***`. The user info ends at the last `@` before the query, as
/// URL parsers read it, so a password holding `@`, `:` or `/` is hidden whole.
pub fn redacted_url(url: &str) -> String {
    let (before_query, query) = match url.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (url, None),
    };
    let (scheme, rest) = match before_query.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, before_query),
    };
    let mut out = String::with_capacity(url.len());
    if let Some(scheme) = scheme {
        out.push_str(scheme);
        out.push_str("://");
    }
    match rest.rsplit_once('@') {
        Some((user_info, host_and_path)) => {
            match user_info.split_once(':') {
                Some((user, _password)) => {
                    out.push_str(user);
                    out.push_str(":***");
                }
                None => out.push_str(user_info),
            }
            out.push('@');
            out.push_str(host_and_path);
        }
        // Without a scheme and an `@`, the whole thing may be a connection string of another
        // form (`host=... password=...`): show nothing of it.
        None if scheme.is_none() => return "***".to_string(),
        None => out.push_str(rest),
    }
    if let Some(query) = query {
        out.push('?');
        let parameters: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if names_a_secret(name) => format!("{name}=***"),
                _ => pair.to_string(),
            })
            .collect();
        out.push_str(&parameters.join("&"));
    }
    out
}

/// Query parameters that carry secrets in database URLs: `password`, `sslpassword`, and any
/// other whose name says pass, secret or token.
fn names_a_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["pass", "secret", "token"].iter().any(|s| name.contains(s))
}

#[cfg(test)]
mod tests {
    use super::redacted_url;

    #[test]
    fn no_password_shape_survives() {
        let cases = [
            (
                "postgres://cms:s3cret@db:5432/cms",
                "postgres://cms:***@db:5432/cms",
            ),
            (
                "postgres://user:pa@ss@host/db",
                "postgres://user:***@host/db",
            ),
            (
                "postgres://user:p:a/s@s@host/db?sslmode=require",
                "postgres://user:***@host/db?sslmode=require",
            ),
            (
                "postgres://user@host/db?sslmode=require&password=s3cret",
                "postgres://user@host/db?sslmode=require&password=***",
            ),
            (
                "postgresql://host/db?PassWord=s3cret&sslpassword=k3y",
                "postgresql://host/db?PassWord=***&sslpassword=***",
            ),
            (
                "sqlite:///var/lib/cms/cms.sqlite3",
                "sqlite:///var/lib/cms/cms.sqlite3",
            ),
            ("host=db user=cms password=s3cret", "***"),
        ];
        for (url, shown) in cases {
            assert_eq!(redacted_url(url), shown, "{url}");
        }
    }
}
