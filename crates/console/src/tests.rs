use super::*;
use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use tower_service::Service;

async fn get(path: &str) -> Response {
    let mut router: Router = routes();
    router
        .call(Request::get(path).body(Body::empty()).unwrap())
        .await
        .unwrap()
}

fn files_under(dir: &std::path::Path, prefix: &str, found: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        if entry.file_type().unwrap().is_dir() {
            files_under(&entry.path(), &format!("{name}/"), found);
        } else {
            found.push(name);
        }
    }
}

#[test]
fn every_file_of_the_console_is_built_in() {
    let mut on_disk = Vec::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    files_under(&dir, "", &mut on_disk);
    on_disk.sort();
    let mut built_in: Vec<String> = ASSETS.iter().map(|a| a.path.to_string()).collect();
    built_in.sort();
    assert_eq!(
        built_in, on_disk,
        "assets.rs must name every file of assets/"
    );
}

#[tokio::test]
async fn the_app_is_served_with_a_strict_policy() {
    let response = get("/console/").await;
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers().clone();
    let policy = headers[CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    assert_eq!(headers[X_FRAME_OPTIONS], "DENY");
    assert!(
        headers[CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let html = std::str::from_utf8(&body).unwrap();
    assert!(html.contains(r#"src="/console/app.js""#));
    assert!(!html.contains("<script>"), "no inline script");
}

#[tokio::test]
async fn files_have_their_types_and_unknown_paths_are_404() {
    let script = get("/console/pages/index.js").await;
    assert_eq!(script.status(), StatusCode::OK);
    assert!(
        script.headers()[CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/javascript")
    );
    let missing = get("/console/nope.js").await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert!(missing.headers().contains_key(CONTENT_SECURITY_POLICY));
}

#[tokio::test]
async fn the_root_leads_to_the_console() {
    for path in ["/", "/console"] {
        let response = get(path).await;
        assert!(response.status().is_redirection(), "{path}");
        assert_eq!(response.headers()["location"], "/console/");
    }
}
