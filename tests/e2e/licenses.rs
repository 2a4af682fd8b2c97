//! Chargers > Licenses (docs/api.md "Licences"): every viewer reads a charger's licences, only
//! the platform operator changes them, and the features they gate say which licence they need.

use crate::support::{Api, Cms, eventually_within};
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_platform_operator_grants_licences() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP-LIC").await;
    let operator = Api::new(&cms, &cms.operator_token().await);
    let charger = format!("/api/v3/chargers/{uuid}");
    let path = format!("{charger}/licenses");
    let shown = operator.get_ok(&charger).await;
    assert_eq!(
        shown["data"]["licenses"],
        json!({"smart": false, "pro": false})
    );

    let granted = operator
        .expect(200, "PUT", &path, Some(&json!({"smart": true})))
        .await;
    assert_eq!(
        granted["data"]["licenses"],
        json!({"smart": true, "pro": false})
    );
    let invalid = operator
        .expect_invalid("PUT", &path, Some(&json!({"pro": "yes"})))
        .await;
    assert!(invalid["pro"].is_array(), "{invalid}");

    // An operator's token without the scope, and a user outside the operators' team.
    let narrow = cms
        .create_token("narrow@example.com", Some("chargers:read,chargers:write"))
        .await;
    let narrow = Api::new(&cms, &narrow);
    narrow
        .expect(403, "PUT", &path, Some(&json!({"pro": true})))
        .await;
    let outsider = Api::new(&cms, &cms.guest_token("outsider@example.com").await);
    let refused = outsider
        .expect(403, "PUT", &path, Some(&json!({"pro": true})))
        .await;
    assert!(
        refused["message"].as_str().unwrap().contains("operators"),
        "{refused}"
    );
    assert_eq!(
        operator.get_ok(&charger).await["data"]["licenses"],
        json!({"smart": true, "pro": false}),
        "nothing changed"
    );

    // The command line, the operator's other door.
    let out = cms
        .cli(&["charger", "licenses", "CP-LIC", "--pro", "true"])
        .await;
    assert!(out.status.success(), "{}", out.stderr);
    assert!(
        out.stdout.contains("CP-LIC: smart true, pro true"),
        "{}",
        out.stdout
    );
    // Another process wrote it: the server shows it once it checks the row again (0.1 s).
    eventually_within(
        Duration::from_secs(1),
        "the CLI's licences shown",
        async || {
            let licenses = operator.get_ok(&charger).await["data"]["licenses"].clone();
            match licenses == json!({"smart": true, "pro": true}) {
                true => Ok(()),
                false => Err(licenses.to_string()),
            }
        },
    )
    .await;
    let unknown = cms
        .cli(&["charger", "licenses", "CP-NONE", "--pro", "true"])
        .await;
    assert!(!unknown.status.success());
}
