//! The charger registry as a change log, for the gateways that must not query the store.

use crate::{Result, Store};

/// One change: the charger's registration as it is now (`None`: no longer registered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryChange {
    pub seq: i64,
    pub identity: String,
    pub registration: Option<RegistryEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryEntry {
    pub password_hash: Option<String>,
    pub security_profile: i64,
}

impl Store {
    /// Up to `limit` registry changes after `seq`, oldest first, each with the current state.
    pub async fn registry_changes_since(
        &self,
        seq: i64,
        limit: i64,
    ) -> Result<Vec<RegistryChange>> {
        // seq, identity, and the charger's id, password hash and profile (NULL: unregistered).
        type LogRow = (i64, String, Option<i64>, Option<String>, Option<i64>);
        let rows: Vec<LogRow> = sqlx::query_as(
            "SELECT ch.seq, ch.identity, c.id, c.password_hash, c.security_profile
             FROM charger_registry_changes ch LEFT JOIN chargers c ON c.identity = ch.identity
             WHERE ch.seq > $1 ORDER BY ch.seq LIMIT $2",
        )
        .bind(seq)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(
                |(seq, identity, id, password_hash, security_profile)| RegistryChange {
                    seq,
                    identity,
                    registration: id.map(|_| RegistryEntry {
                        password_hash,
                        security_profile: security_profile.unwrap_or(0),
                    }),
                },
            )
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use crate::NewCharger;
    use crate::test_support::store_test;

    store_test!(registrations_appear_in_the_change_log_in_order, |store| {
        for (identity, password) in [("CP-1", None), ("CP-2", Some("sha256$00$00"))] {
            store
                .add_charger(&NewCharger {
                    identity: identity.into(),
                    password_hash: password.map(str::to_string),
                    security_profile: i64::from(password.is_some()),
                    ..Default::default()
                })
                .await
                .unwrap();
        }
        let changes = store.registry_changes_since(0, 10).await.unwrap();
        let seen: Vec<(&str, Option<Option<&str>>)> = changes
            .iter()
            .map(|c| {
                let entry = c.registration.as_ref();
                (
                    c.identity.as_str(),
                    entry.map(|e| e.password_hash.as_deref()),
                )
            })
            .collect();
        assert_eq!(
            seen,
            vec![("CP-1", Some(None)), ("CP-2", Some(Some("sha256$00$00")))]
        );
        let after_first = store
            .registry_changes_since(changes[0].seq, 10)
            .await
            .unwrap();
        assert_eq!(after_first.len(), 1);
        assert!(
            store
                .registry_changes_since(changes[1].seq, 10)
                .await
                .unwrap()
                .is_empty()
        );
    });
}
