use super::*;
use crate::test_support::store_test;

fn fields(url: &str) -> WebhookFields {
    WebhookFields {
        url: url.into(),
        description: Some("Back office".into()),
        event_types: vec!["charger.connected".into(), "transaction.ended".into()],
        enabled: true,
    }
}

async fn team(store: &Store, email: &str) -> i64 {
    store.ensure_user(email).await.unwrap().personal_team_id
}

async fn created(store: &Store, team_id: i64, url: &str) -> Webhook {
    match store.create_webhook(team_id, &fields(url)).await.unwrap() {
        Creation::Created(webhook) => *webhook,
        Creation::LimitReached => panic!("the limit is not reached yet"),
    }
}

store_test!(a_webhook_is_its_teams_only, |store| {
    let ours = team(&store, "ours@example.com").await;
    let theirs = team(&store, "theirs@example.com").await;
    let webhook = created(&store, ours, "https://example.com/hooks").await;
    assert!(webhook.secret.starts_with("whsec_"), "{}", webhook.secret);
    let key = base64::engine::general_purpose::STANDARD
        .decode(&webhook.secret["whsec_".len()..])
        .unwrap();
    assert_eq!(key.len(), 32);
    assert_eq!(
        webhook.event_types,
        vec!["charger.connected", "transaction.ended"]
    );
    assert!(webhook.enabled);
    assert_eq!(
        store.webhook(ours, &webhook.uuid).await.unwrap(),
        Some(webhook.clone())
    );

    // Another team sees nothing of it, and changes nothing.
    assert_eq!(store.webhook(theirs, &webhook.uuid).await.unwrap(), None);
    let other = fields("https://attacker.example.com/");
    assert_eq!(
        store
            .replace_webhook(theirs, &webhook.uuid, &other)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .rotate_webhook_secret(theirs, &webhook.uuid)
            .await
            .unwrap(),
        None
    );
    assert!(!store.delete_webhook(theirs, &webhook.uuid).await.unwrap());
    assert_eq!(
        store.webhook(ours, &webhook.uuid).await.unwrap(),
        Some(webhook.clone())
    );

    assert!(store.delete_webhook(ours, &webhook.uuid).await.unwrap());
    assert_eq!(store.webhook(ours, &webhook.uuid).await.unwrap(), None);
});

store_test!(a_teams_webhooks_are_listed_a_page_at_a_time, |store| {
    let ours = team(&store, "ours@example.com").await;
    let other = team(&store, "other@example.com").await;
    created(&store, other, "https://example.com/other").await;
    let mut uuids = Vec::new();
    for n in 0..5 {
        uuids.push(
            created(&store, ours, &format!("https://example.com/{n}"))
                .await
                .uuid,
        );
    }
    let (page, total) = store.webhooks(ours, 2, 2).await.unwrap();
    assert_eq!(total, 5);
    let listed: Vec<_> = page.into_iter().map(|w| w.uuid).collect();
    assert_eq!(listed, uuids[2..4]);
    assert_eq!(store.webhook_count(ours).await.unwrap(), 5);
});

store_test!(
    a_replacement_enabling_a_webhook_cms_disabled_clears_why,
    |store| {
        let ours = team(&store, "ours@example.com").await;
        let webhook = created(&store, ours, "https://example.com/hooks").await;
        // The receiver answered 410: cms disabled it.
        sqlx::query("UPDATE webhooks SET enabled = 0, disabled_reason = 'gone' WHERE id = $1")
            .bind(webhook.id)
            .execute(store.db())
            .await
            .unwrap();
        let still_off = WebhookFields {
            enabled: false,
            description: None,
            ..fields("https://example.com/v2")
        };
        let kept = store
            .replace_webhook(ours, &webhook.uuid, &still_off)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(kept.url, "https://example.com/v2");
        assert_eq!(kept.description, None);
        assert_eq!(kept.disabled_reason.as_deref(), Some("gone"));
        let on = fields("https://example.com/v2");
        let enabled = store
            .replace_webhook(ours, &webhook.uuid, &on)
            .await
            .unwrap()
            .unwrap();
        assert!(enabled.enabled);
        assert_eq!(enabled.disabled_reason, None);
        assert_eq!(
            enabled.secret, webhook.secret,
            "a replacement keeps the secret"
        );
    }
);

store_test!(a_rotated_out_secret_signs_for_24_hours_more, |store| {
    let ours = team(&store, "ours@example.com").await;
    let webhook = created(&store, ours, "https://example.com/hooks").await;
    assert_eq!(
        webhook.signing_secrets(&now_record_time()),
        vec![webhook.secret.as_str()]
    );
    let rotated = store
        .rotate_webhook_secret(ours, &webhook.uuid)
        .await
        .unwrap()
        .unwrap();
    assert_ne!(rotated.secret, webhook.secret);
    assert!(rotated.secret.starts_with("whsec_"));
    assert_eq!(
        rotated.previous_secret.as_deref(),
        Some(webhook.secret.as_str())
    );
    let until =
        chrono::DateTime::parse_from_rfc3339(rotated.previous_secret_until.as_ref().unwrap())
            .unwrap();
    let left = until.with_timezone(&chrono::Utc) - chrono::Utc::now();
    assert!(
        left > chrono::Duration::hours(23) && left <= chrono::Duration::hours(24),
        "{left}"
    );
    let stored = store.webhook(ours, &webhook.uuid).await.unwrap().unwrap();
    assert_eq!(stored, rotated);
    // Both sign now, the new one first; only the new one a day later.
    let now = now_record_time();
    assert_eq!(
        stored.signing_secrets(&now),
        vec![rotated.secret.as_str(), webhook.secret.as_str()]
    );
    let tomorrow = format_record_time(chrono::Utc::now() + chrono::Duration::hours(25));
    assert_eq!(
        stored.signing_secrets(&tomorrow),
        vec![rotated.secret.as_str()]
    );
});

store_test!(
    a_team_has_at_most_20_webhooks_even_created_at_once,
    |store| {
        let ours = team(&store, "ours@example.com").await;
        let other = team(&store, "other@example.com").await;
        for n in 0..18 {
            created(&store, ours, &format!("https://example.com/{n}")).await;
        }
        // Eight at once for the last two places.
        let racing: Vec<_> = (0..8)
            .map(|n| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .create_webhook(ours, &fields(&format!("https://example.com/race/{n}")))
                        .await
                        .unwrap()
                })
            })
            .collect();
        let mut made = 0;
        for race in racing {
            if let Creation::Created(_) = race.await.unwrap() {
                made += 1;
            }
        }
        assert_eq!(made, 2);
        assert_eq!(store.webhook_count(ours).await.unwrap(), WEBHOOKS_PER_TEAM);
        assert_eq!(
            store
                .create_webhook(ours, &fields("https://example.com/21"))
                .await
                .unwrap(),
            Creation::LimitReached
        );
        assert_eq!(store.webhook_count(ours).await.unwrap(), 20);
        // Another team's are its own.
        created(&store, other, "https://example.com/other").await;
    }
);
