//! Chargers' proxy set-up: the vendor role an operator gives a charger (leader, follower or
//! standalone) and the proxy servers it relays through, in the order the operator listed them.

use crate::{Result, Store, StoreError, now_record_time};
use cms_bus::ProxyUrl;
use std::collections::HashMap;

/// A proxy server of a charger as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ProxyServer {
    /// `wss://host[:port]/path`.
    pub websocket_url: String,
    /// `leader` or `follower`.
    pub role: String,
    /// How the gateway holding the charger is connected to it: `connected` or `disconnected`.
    pub connection_status: String,
    pub last_connected_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// A proxy server as the operator lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewProxyServer {
    pub websocket_url: ProxyUrl,
    pub role: String,
}

impl Store {
    /// The proxy servers of a charger, in the order they were listed.
    pub async fn proxy_servers(&self, charger_id: i64) -> Result<Vec<ProxyServer>> {
        Ok(sqlx::query_as(
            "SELECT websocket_url, role, connection_status, last_connected_at, created_at, updated_at
             FROM proxy_servers WHERE charger_id = $1 ORDER BY position",
        )
        .bind(charger_id)
        .fetch_all(self.db())
        .await?)
    }

    /// Sets a charger's vendor role and replaces its proxy servers with `servers`, in one
    /// transaction; returns the new list. A server whose URL was listed before keeps its
    /// `created_at`: it is the same server, perhaps with another role.
    pub async fn set_proxy(
        &self,
        charger_id: i64,
        vendor_role: &str,
        servers: &[NewProxyServer],
    ) -> Result<Vec<ProxyServer>> {
        let now = now_record_time();
        let mut tx = self.begin_write().await?;
        let updated =
            sqlx::query("UPDATE chargers SET vendor_role = $1, updated_at = $2 WHERE id = $3")
                .bind(vendor_role)
                .bind(&now)
                .bind(charger_id)
                .execute(&mut *tx)
                .await?;
        if updated.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!(
                "no charger with id {charger_id}"
            )));
        }
        // A server listed before keeps its creation and how the gateway is connected to it.
        type Known = (String, String, Option<String>);
        let known: HashMap<String, Known> =
            sqlx::query_as::<_, (String, String, String, Option<String>)>(
                "SELECT websocket_url, created_at, connection_status, last_connected_at
             FROM proxy_servers WHERE charger_id = $1",
            )
            .bind(charger_id)
            .fetch_all(&mut *tx)
            .await?
            .into_iter()
            .map(|(url, created, status, last)| (url, (created, status, last)))
            .collect();
        sqlx::query("DELETE FROM proxy_servers WHERE charger_id = $1")
            .bind(charger_id)
            .execute(&mut *tx)
            .await?;
        for (position, server) in servers.iter().enumerate() {
            let disconnected = (now.clone(), "disconnected".to_string(), None);
            let (created_at, status, last_connected_at) = known
                .get(server.websocket_url.as_str())
                .unwrap_or(&disconnected);
            let inserted = sqlx::query(
                "INSERT INTO proxy_servers (charger_id, position, websocket_url, role, created_at,
                   updated_at, connection_status, last_connected_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(charger_id)
            .bind(position as i64)
            .bind(server.websocket_url.as_str())
            .bind(&server.role)
            .bind(created_at)
            .bind(&now)
            .bind(status)
            .bind(last_connected_at)
            .execute(&mut *tx)
            .await;
            match inserted {
                Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                    return Err(StoreError::Conflict(format!(
                        "the proxy server {:?} is listed twice",
                        server.websocket_url.as_str()
                    )));
                }
                other => other?,
            };
        }
        tx.commit().await?;
        self.proxy_servers(charger_id).await
    }

    /// The vendor role last set on a charger, if any.
    pub async fn vendor_role(&self, charger_id: i64) -> Result<Option<String>> {
        Ok(
            sqlx::query_scalar("SELECT vendor_role FROM chargers WHERE id = $1")
                .bind(charger_id)
                .fetch_optional(self.db())
                .await?
                .flatten(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{charger_id, store_test};

    fn server(url: &str, role: &str) -> NewProxyServer {
        NewProxyServer {
            websocket_url: ProxyUrl::parse(url).unwrap(),
            role: role.into(),
        }
    }

    store_test!(a_proxy_list_is_replaced_in_order, |store| {
        let id = charger_id(&store, "CP-1").await;
        assert!(store.proxy_servers(id).await.unwrap().is_empty());
        assert_eq!(store.vendor_role(id).await.unwrap(), None);
        let first = store
            .set_proxy(
                id,
                "ROLE_FOLLOWER",
                &[
                    server("wss://b.example/ocpp", "leader"),
                    server("wss://a.example/ocpp", "follower"),
                ],
            )
            .await
            .unwrap();
        let urls: Vec<_> = first.iter().map(|s| s.websocket_url.as_str()).collect();
        assert_eq!(urls, ["wss://b.example/ocpp", "wss://a.example/ocpp"]);
        assert_eq!(store.proxy_servers(id).await.unwrap(), first);
        assert_eq!(
            store.vendor_role(id).await.unwrap().as_deref(),
            Some("ROLE_FOLLOWER")
        );

        // The server kept (with a new role) keeps its creation time; the other goes.
        let second = store
            .set_proxy(
                id,
                "ROLE_LEADER",
                &[server("wss://a.example/ocpp", "leader")],
            )
            .await
            .unwrap();
        assert_eq!(second.len(), 1);
        assert_eq!(second[0].role, "leader");
        assert_eq!(second[0].created_at, first[1].created_at);
        assert!(second[0].updated_at >= first[1].updated_at);
        assert_eq!(
            store.vendor_role(id).await.unwrap().as_deref(),
            Some("ROLE_LEADER")
        );

        assert!(
            store
                .set_proxy(id, "ROLE_STANDALONE", &[])
                .await
                .unwrap()
                .is_empty()
        );
    });

    store_test!(a_proxy_list_is_per_charger_and_all_or_nothing, |store| {
        let one = charger_id(&store, "CP-1").await;
        let two = charger_id(&store, "CP-2").await;
        let shared = server("wss://proxy.example/ocpp", "leader");
        store
            .set_proxy(one, "ROLE_FOLLOWER", std::slice::from_ref(&shared))
            .await
            .unwrap();
        store
            .set_proxy(two, "ROLE_FOLLOWER", std::slice::from_ref(&shared))
            .await
            .unwrap();
        assert!(matches!(
            store
                .set_proxy(one, "ROLE_LEADER", &[shared.clone(), shared.clone()])
                .await,
            Err(StoreError::Conflict(_))
        ));
        // The failed replacement changed nothing.
        assert_eq!(store.proxy_servers(one).await.unwrap().len(), 1);
        assert_eq!(
            store.vendor_role(one).await.unwrap().as_deref(),
            Some("ROLE_FOLLOWER")
        );
        assert_eq!(store.proxy_servers(two).await.unwrap().len(), 1);
        assert!(matches!(
            store.set_proxy(9999, "ROLE_LEADER", &[]).await,
            Err(StoreError::NotFound(_))
        ));
    });
}
