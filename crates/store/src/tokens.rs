//! Personal access tokens as their owner manages them: created with a name and scopes, listed
//! (never with their secret), regenerated and revoked. A token is `<id>|<40 random characters>`
//! and is stored only as a salted digest, so its secret is shown once, when it is made.

use crate::{Quota, Result, Scope, Store, StoreError, now_record_time};
use cms_credentials::{hash_secret, random_token};
use sqlx::Row;
use sqlx::any::AnyRow;

/// A personal access token as its owner sees it: everything but the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonalAccessToken {
    pub id: i64,
    pub name: String,
    pub scopes: Vec<String>,
    /// To the minute: see [`LAST_USED_PRECISION_SECONDS`].
    pub last_used_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// How stale `last_used_at` may get: authenticating writes it at most once per this many
/// seconds per token, so that a busy token does not turn every request into a write.
pub const LAST_USED_PRECISION_SECONDS: i64 = 60;

impl<'r> sqlx::FromRow<'r, AnyRow> for PersonalAccessToken {
    fn from_row(row: &'r AnyRow) -> Result<Self, sqlx::Error> {
        let scopes: String = row.try_get("scopes")?;
        Ok(PersonalAccessToken {
            id: row.try_get("id")?,
            name: row.try_get("name")?,
            scopes: split_scopes(&scopes),
            last_used_at: row.try_get("last_used_at")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
}

/// Scopes as stored: space-separated names.
pub(crate) fn split_scopes(stored: &str) -> Vec<String> {
    stored.split_whitespace().map(str::to_string).collect()
}

const COLUMNS: &str = "id, name, scopes, last_used_at, created_at, updated_at";

impl Store {
    /// Mints a token for `user_id`; returns it with its plain form `<id>|<secret>`, the only
    /// time the secret is seen. An unknown scope is a [`StoreError::Conflict`].
    pub async fn create_personal_access_token(
        &self,
        user_id: i64,
        name: &str,
        scopes: &[String],
    ) -> Result<(PersonalAccessToken, String)> {
        if let Some(bad) = scopes.iter().find(|s| !Scope::is_known(s)) {
            return Err(StoreError::Conflict(format!(
                "unknown scope {bad:?}; known scopes: {}",
                Scope::names().join(", ")
            )));
        }
        let secret = random_token(40);
        let now = now_record_time();
        let mut tx = self.begin_write().await?;
        let token: PersonalAccessToken = sqlx::query_as(&format!(
            "INSERT INTO personal_access_tokens (user_id, name, token_hash, scopes, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $5) RETURNING {COLUMNS}"
        ))
        .bind(user_id)
        .bind(name)
        .bind(hash_secret(&secret))
        .bind(scopes.join(" "))
        .bind(&now)
        .fetch_one(&mut *tx)
        .await?;
        self.enforce_quota(&mut tx, Quota::Tokens, user_id).await?;
        tx.commit().await?;
        let plain = format!("{}|{secret}", token.id);
        Ok((token, plain))
    }

    /// A page of the user's live tokens, newest first, and how many there are.
    pub async fn personal_access_tokens(
        &self,
        user_id: i64,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<PersonalAccessToken>, i64)> {
        let total: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM personal_access_tokens WHERE user_id = $1 AND revoked = 0",
        )
        .bind(user_id)
        .fetch_one(self.db())
        .await?;
        let page = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM personal_access_tokens WHERE user_id = $1 AND revoked = 0
             ORDER BY id DESC LIMIT $2 OFFSET $3"
        ))
        .bind(user_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(self.db())
        .await?;
        Ok((page, total))
    }

    /// The user's live token `id`; `None` when it is revoked, missing or someone else's.
    pub async fn personal_access_token(
        &self,
        user_id: i64,
        id: i64,
    ) -> Result<Option<PersonalAccessToken>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM personal_access_tokens
             WHERE id = $1 AND user_id = $2 AND revoked = 0"
        ))
        .bind(id)
        .bind(user_id)
        .fetch_optional(self.db())
        .await?)
    }

    /// Who owns the live token `id` (for the command line, which acts for any user).
    pub async fn personal_access_token_owner(&self, id: i64) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT user_id FROM personal_access_tokens WHERE id = $1 AND revoked = 0",
        )
        .bind(id)
        .fetch_optional(self.db())
        .await?)
    }

    /// Revokes the user's token `id`: the next request with it is refused. `false` when there
    /// is no such live token of the user's.
    pub async fn revoke_personal_access_token(&self, user_id: i64, id: i64) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE personal_access_tokens SET revoked = 1, updated_at = $1
             WHERE id = $2 AND user_id = $3 AND revoked = 0",
        )
        .bind(now_record_time())
        .bind(id)
        .bind(user_id)
        .execute(self.db())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Gives the user's token `id` a new secret, keeping its id, name and scopes: the old
    /// secret stops working at once. Returns the token and its new plain form.
    pub async fn regenerate_personal_access_token(
        &self,
        user_id: i64,
        id: i64,
    ) -> Result<Option<(PersonalAccessToken, String)>> {
        let secret = random_token(40);
        let token: Option<PersonalAccessToken> = sqlx::query_as(&format!(
            "UPDATE personal_access_tokens
             SET token_hash = $1, last_used_at = NULL, updated_at = $2
             WHERE id = $3 AND user_id = $4 AND revoked = 0 RETURNING {COLUMNS}"
        ))
        .bind(hash_secret(&secret))
        .bind(now_record_time())
        .bind(id)
        .bind(user_id)
        .fetch_optional(self.db())
        .await?;
        Ok(token.map(|token| {
            let plain = format!("{}|{secret}", token.id);
            (token, plain)
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::store_test;

    fn scopes(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    store_test!(tokens_are_listed_without_secrets_newest_first, |store| {
        let user = store.ensure_user("a@example.com").await.unwrap();
        let other = store.ensure_user("b@example.com").await.unwrap();
        let (first, _) = store
            .create_personal_access_token(user.id, "ci", &scopes(&["chargers:read"]))
            .await
            .unwrap();
        let (second, plain) = store
            .create_personal_access_token(user.id, "laptop", &scopes(&["*"]))
            .await
            .unwrap();
        store
            .create_personal_access_token(other.id, "theirs", &scopes(&["*"]))
            .await
            .unwrap();
        assert!(plain.starts_with(&format!("{}|", second.id)));
        let (page, total) = store.personal_access_tokens(user.id, 25, 0).await.unwrap();
        assert_eq!(total, 2);
        assert_eq!(page, vec![second.clone(), first.clone()]);
        assert_eq!(first.scopes, ["chargers:read"]);
        assert_eq!(first.last_used_at, None);
        let (page, _) = store.personal_access_tokens(user.id, 1, 1).await.unwrap();
        assert_eq!(page, vec![first]);
        assert!(
            store
                .create_personal_access_token(user.id, "bad", &scopes(&["root"]))
                .await
                .is_err()
        );
    });

    store_test!(
        a_regenerated_token_works_only_with_its_new_secret,
        |store| {
            let user = store.ensure_user("a@example.com").await.unwrap();
            let (token, old) = store
                .create_personal_access_token(user.id, "ci", &scopes(&["teams:read"]))
                .await
                .unwrap();
            assert!(
                store
                    .authenticate(&old, chrono::Utc::now())
                    .await
                    .unwrap()
                    .is_some()
            );
            let (again, new) = store
                .regenerate_personal_access_token(user.id, token.id)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                (again.id, again.name, again.scopes),
                (token.id, token.name, token.scopes)
            );
            assert!(
                store
                    .authenticate(&old, chrono::Utc::now())
                    .await
                    .unwrap()
                    .is_none()
            );
            let owner = store
                .authenticate(&new, chrono::Utc::now())
                .await
                .unwrap()
                .unwrap();
            assert_eq!((owner.user_id, owner.token_id), (user.id, token.id));
        }
    );

    store_test!(only_the_owner_revokes_and_regenerates, |store| {
        let user = store.ensure_user("a@example.com").await.unwrap();
        let other = store.ensure_user("b@example.com").await.unwrap();
        let (token, plain) = store
            .create_personal_access_token(user.id, "ci", &scopes(&["*"]))
            .await
            .unwrap();
        assert!(
            !store
                .revoke_personal_access_token(other.id, token.id)
                .await
                .unwrap()
        );
        assert!(
            store
                .regenerate_personal_access_token(other.id, token.id)
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            store
                .personal_access_token(other.id, token.id)
                .await
                .unwrap()
                .is_none()
        );
        assert_eq!(
            store.personal_access_token_owner(token.id).await.unwrap(),
            Some(user.id)
        );
        assert!(
            store
                .revoke_personal_access_token(user.id, token.id)
                .await
                .unwrap()
        );
        assert!(
            store
                .authenticate(&plain, chrono::Utc::now())
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            !store
                .revoke_personal_access_token(user.id, token.id)
                .await
                .unwrap()
        );
        assert_eq!(
            store.personal_access_token_owner(token.id).await.unwrap(),
            None
        );
        assert_eq!(
            store
                .personal_access_tokens(user.id, 25, 0)
                .await
                .unwrap()
                .1,
            0
        );
    });

    store_test!(authenticating_records_when_a_token_was_last_used, |store| {
        let user = store.ensure_user("a@example.com").await.unwrap();
        let (token, plain) = store
            .create_personal_access_token(user.id, "ci", &scopes(&["*"]))
            .await
            .unwrap();
        store
            .authenticate(&plain, chrono::Utc::now())
            .await
            .unwrap()
            .unwrap();
        let used = store
            .personal_access_token(user.id, token.id)
            .await
            .unwrap()
            .unwrap()
            .last_used_at
            .expect("recorded on first use");
        // Within the minute, another use does not write again.
        store
            .authenticate(&plain, chrono::Utc::now())
            .await
            .unwrap()
            .unwrap();
        let again = store
            .personal_access_token(user.id, token.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(again.last_used_at.as_deref(), Some(used.as_str()));
    });
}
