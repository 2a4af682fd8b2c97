//! Abuse case of the REST API's access cache (docs/api.md "Reads from memory"): one user asking
//! for more uuids than the cache holds must not push everyone else's access out of it (it used
//! to be emptied whole, so every other user's next request asked the store again).

use crate::support::{Api, Cms};
use futures_util::StreamExt;

/// The store reads of charger access so far: look-ups the cache could not answer.
async fn charger_access_reads(cms: &Cms) -> f64 {
    let metrics = Api::new(cms, "").metrics().await;
    let reads = metrics.sum("cms_api_access_cache_misses_total", &[("kind", "charger")]);
    reads.expect("the misses counter is registered")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_unknown_uuids_leaves_other_users_access_held() {
    let cms = Cms::up_with(&["--access-cache-entries", "1000"]).await;
    let uuid = cms.add_charger("CP-HELD").await;
    let owner = Api::new(&cms, &cms.operator_token().await);
    let flooder = Api::new(&cms, &cms.guest_token("flood@example.com").await);
    // A change made through the API is answered once the replica has read the access change
    // log, so the users' new memberships (which forget every grant held) are behind us.
    let token = serde_json::json!({"name": "another", "scopes": ["*"]});
    flooder
        .expect(201, "POST", "/api/v3/user/tokens", Some(&token))
        .await;
    let path = format!("/api/v3/chargers/{uuid}");
    owner.get_ok(&path).await;
    let before = charger_access_reads(&cms).await;
    owner.get_ok(&path).await;
    assert_eq!(
        charger_access_reads(&cms).await,
        before,
        "the owner's access is held"
    );

    // Half as many again as the cache holds, each a uuid that names nothing.
    let flood = futures_util::stream::iter(0..1_500u32)
        .map(|n| {
            let path = format!("/api/v3/chargers/{n:08x}-0000-4000-8000-000000000000");
            let flooder = &flooder;
            async move { flooder.get(&path).await.status }
        })
        .buffer_unordered(8)
        .collect::<Vec<u16>>()
        .await;
    assert!(flood.iter().all(|status| *status == 404), "{flood:?}");
    let metrics = Api::new(&cms, "").metrics().await;
    let evicted = metrics.sum(
        "cms_api_access_cache_evictions_total",
        &[("kind", "charger")],
    );
    assert!(evicted.is_some_and(|n| n >= 500.0), "{evicted:?}");

    let before = charger_access_reads(&cms).await;
    owner.get_ok(&path).await;
    assert_eq!(
        charger_access_reads(&cms).await,
        before,
        "the owner's access is still held: the flood evicted only the flooder's entries"
    );
}
