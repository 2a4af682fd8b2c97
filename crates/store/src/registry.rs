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
    /// `None` for a charger of an open site; else the teams whose id tags apply to it: the
    /// site's owner first, then the teams with access to the charger, by id.
    pub id_tag_teams: Option<Vec<i64>>,
    /// `ROLE_LEADER`, `ROLE_FOLLOWER`, `ROLE_STANDALONE` or none set.
    pub vendor_role: Option<String>,
    /// Its proxy servers (websocket URL, role), in the order listed.
    pub proxy_servers: Vec<(String, String)>,
    /// The site's tariff (its body, JSON) when the charger is a 2.0.1 station that shows
    /// prices and its site's tariff prices every driver there (`price_display::STATION_SHOWS`,
    /// `PRICED_BY_SITE`): what the driver's price text is made of.
    pub shown_tariff: Option<String>,
    /// For a charger of an `id_tags` site: where it is as OCPI names it, for a real-time
    /// authorisation of a token there (docs/ocpi.md, "Tokens").
    pub location: Option<LocationRef>,
}

/// A charger as OCPI names it: its site's uuid is the Location's id, its own uuid the EVSE's
/// uid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationRef {
    pub site_uuid: String,
    pub charger_uuid: String,
}

impl Store {
    /// Up to `limit` registry changes after `seq`, oldest first, each with the current state.
    pub async fn registry_changes_since(
        &self,
        seq: i64,
        limit: i64,
    ) -> Result<Vec<RegistryChange>> {
        // seq, identity, and the charger's id, password hash and profile (NULL: unregistered),
        // its site's authorization mode and owner.
        type LogRow = (
            i64,
            String,
            Option<i64>,
            Option<String>,
            Option<i64>,
            Option<String>,
            Option<i64>,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        use crate::price_display::{PRICED_BY_SITE, STATION_SHOWS};
        let rows: Vec<LogRow> = sqlx::query_as(&format!(
            "SELECT ch.seq, ch.identity, c.id, c.password_hash, c.security_profile,
                    s.authorization_mode, s.team_id, c.vendor_role,
                    (SELECT tf.body FROM tariffs tf WHERE tf.id = s.tariff_id
                       AND {STATION_SHOWS} AND {PRICED_BY_SITE}),
                    c.uuid, s.uuid
             FROM charger_registry_changes ch
             LEFT JOIN chargers c ON c.identity = ch.identity
             LEFT JOIN sites s ON s.id = c.site_id
             WHERE ch.seq > $1 ORDER BY ch.seq LIMIT $2"
        ))
        .bind(seq)
        .bind(limit)
        .fetch_all(self.db())
        .await?;
        let last = rows.last().map_or(seq, |r| r.0);
        let mut guests = self.guest_teams_of_changed(seq, last).await?;
        // The owner's providers' tags come after the guests' (each list in its order).
        guests.extend(self.provider_teams_of_changed(seq, last).await?);
        let proxies = self.proxy_servers_of_changed(seq, last).await?;
        Ok(rows
            .into_iter()
            .map(
                |(
                    seq,
                    identity,
                    id,
                    password_hash,
                    security_profile,
                    mode,
                    owner,
                    vendor_role,
                    shown_tariff,
                    charger_uuid,
                    site_uuid,
                )| {
                    let registration = id.map(|id| {
                        let closed = mode.as_deref() == Some("id_tags");
                        let location = (charger_uuid.zip(site_uuid)).filter(|_| closed).map(
                            |(charger_uuid, site_uuid)| LocationRef {
                                site_uuid,
                                charger_uuid,
                            },
                        );
                        let id_tag_teams = closed.then(|| {
                            let mut teams = vec![owner.unwrap_or_default()];
                            let guests = guests.iter().filter(|(c, _)| *c == id);
                            teams.extend(guests.map(|(_, team)| *team));
                            teams
                        });
                        let servers = proxies.iter().filter(|(c, _, _)| *c == id);
                        RegistryEntry {
                            password_hash,
                            security_profile: security_profile.unwrap_or(0),
                            id_tag_teams,
                            vendor_role,
                            proxy_servers: servers
                                .map(|(_, u, r)| (u.clone(), r.clone()))
                                .collect(),
                            shown_tariff,
                            location,
                        }
                    });
                    RegistryChange {
                        seq,
                        identity,
                        registration,
                    }
                },
            )
            .collect())
    }

    /// (charger id, url, role) of the proxy servers of the chargers changed in `(after, up_to]`
    /// that hold the `pro` licence, in the order listed.
    async fn proxy_servers_of_changed(
        &self,
        after: i64,
        up_to: i64,
    ) -> Result<Vec<(i64, String, String)>> {
        if up_to <= after {
            return Ok(Vec::new());
        }
        Ok(sqlx::query_as(
            // Relaying is a `pro` feature: a charger without the licence relays nothing.
            "SELECT p.charger_id, p.websocket_url, p.role FROM proxy_servers p
             JOIN chargers c ON c.id = p.charger_id AND c.license_pro = 1
             WHERE c.identity IN (SELECT identity FROM charger_registry_changes
                                  WHERE seq > $1 AND seq <= $2)
             ORDER BY p.charger_id, p.position",
        )
        .bind(after)
        .bind(up_to)
        .fetch_all(self.db())
        .await?)
    }

    /// (charger id, team id) of the teams holding the id tags of the providers of the owners of
    /// the `id_tags` sites of the chargers changed in `(after, up_to]`, by provider.
    async fn provider_teams_of_changed(&self, after: i64, up_to: i64) -> Result<Vec<(i64, i64)>> {
        if up_to <= after {
            return Ok(Vec::new());
        }
        Ok(sqlx::query_as(
            "SELECT c.id, p.id_tag_team_id FROM chargers c
             JOIN sites s ON s.id = c.site_id AND s.authorization_mode = 'id_tags'
             JOIN providers p ON p.team_id = s.team_id
             WHERE c.identity IN (SELECT identity FROM charger_registry_changes
                                  WHERE seq > $1 AND seq <= $2)
             ORDER BY c.id, p.id",
        )
        .bind(after)
        .bind(up_to)
        .fetch_all(self.db())
        .await?)
    }

    /// (charger id, team id) of the teams with access to the chargers changed in `(after,
    /// up_to]`: access to the whole site, or to the charger itself. Ordered by team id.
    async fn guest_teams_of_changed(&self, after: i64, up_to: i64) -> Result<Vec<(i64, i64)>> {
        if up_to <= after {
            return Ok(Vec::new());
        }
        Ok(sqlx::query_as(
            "SELECT c.id, sa.team_id FROM chargers c
             JOIN sites s ON s.id = c.site_id AND s.authorization_mode = 'id_tags'
             JOIN site_access sa ON sa.site_id = c.site_id AND sa.team_id <> s.team_id
             WHERE c.identity IN (SELECT identity FROM charger_registry_changes
                                  WHERE seq > $1 AND seq <= $2)
               AND (sa.can_access_all_assets = 1 OR EXISTS (
                    SELECT 1 FROM site_access_assets a
                    WHERE a.site_access_id = sa.id AND a.charger_id = c.id))
             ORDER BY c.id, sa.team_id",
        )
        .bind(after)
        .bind(up_to)
        .fetch_all(self.db())
        .await?)
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

    /// The registration of `identity` as the last change in the log says.
    async fn last_registration(
        store: &crate::Store,
        identity: &str,
    ) -> Option<super::RegistryEntry> {
        let changes = store.registry_changes_since(0, 1_000).await.unwrap();
        let last = changes
            .iter()
            .rev()
            .find(|c| c.identity == identity)
            .unwrap();
        last.registration.clone()
    }

    store_test!(
        who_may_charge_at_a_charger_is_logged_when_its_site_changes,
        |store| {
            use crate::sites::{AssetAccess, NewInvite, SiteAddress};
            let owner = store
                .ensure_user_in("owner@example.com", false)
                .await
                .unwrap();
            let address = SiteAddress {
                name: "Depot".into(),
                street: "Stationsplein".into(),
                house_number: 1,
                house_number_addition: None,
                postal_code: "1012 AB".into(),
                city: "Amsterdam".into(),
                country: "NL".into(),
            };
            let site = store
                .create_site(owner.personal_team_id, &address)
                .await
                .unwrap();
            for identity in ["CP-1", "CP-2"] {
                store
                    .add_charger(&NewCharger {
                        identity: identity.into(),
                        site_uuid: Some(site.clone()),
                        ..Default::default()
                    })
                    .await
                    .unwrap();
            }
            let open = last_registration(&store, "CP-1").await.unwrap();
            assert_eq!(open.id_tag_teams, None, "a site is open by default");

            sqlx::query("UPDATE sites SET authorization_mode = 'id_tags' WHERE uuid = $1")
                .bind(&site)
                .execute(&store.pool)
                .await
                .unwrap();
            let entry = last_registration(&store, "CP-2").await.unwrap();
            assert_eq!(entry.id_tag_teams, Some(vec![owner.personal_team_id]));

            // A guest team with access to CP-1 only: its tags apply there and not on CP-2.
            let guest = store
                .ensure_user_in("guest@example.com", false)
                .await
                .unwrap();
            let site_id: i64 = sqlx::query_scalar("SELECT id FROM sites WHERE uuid = $1")
                .bind(&site)
                .fetch_one(&store.pool)
                .await
                .unwrap();
            let cp1: i64 = sqlx::query_scalar("SELECT id FROM chargers WHERE identity = 'CP-1'")
                .fetch_one(&store.pool)
                .await
                .unwrap();
            let invite = NewInvite {
                email: "guest@example.com".into(),
                transfer_ownership: false,
                data_access: false,
                data_access_expires_at: None,
                assets: AssetAccess::Chargers(vec![cp1]),
            };
            let made = store
                .create_site_invite(site_id, owner.id, &invite)
                .await
                .unwrap();
            store
                .accept_site_invite(&site, &made.token, guest.id, guest.personal_team_id)
                .await
                .unwrap();
            let cp1 = last_registration(&store, "CP-1").await.unwrap();
            let cp2 = last_registration(&store, "CP-2").await.unwrap();
            assert_eq!(
                cp1.id_tag_teams,
                Some(vec![owner.personal_team_id, guest.personal_team_id])
            );
            assert_eq!(cp2.id_tag_teams, Some(vec![owner.personal_team_id]));
        }
    );

    store_test!(id_tag_changes_carry_the_tag_as_it_is_now, |store| {
        let owner = store
            .ensure_user_in("owner@example.com", false)
            .await
            .unwrap();
        let team = owner.personal_team_id;
        let insert = "INSERT INTO id_tags (team_id, id_tag, id_tag_key, status, expiry_date,
                      parent_id_tag, created_at, updated_at)
                      VALUES ($1, $2, $3, $4, $5, NULL, 'now', 'now')";
        for (tag, status, expiry) in [
            ("card-1", "Accepted", Some("2030-01-01T00:00:00Z")),
            ("card-2", "Blocked", None),
        ] {
            sqlx::query(insert)
                .bind(team)
                .bind(tag)
                .bind(tag.to_ascii_uppercase())
                .bind(status)
                .bind(expiry)
                .execute(&store.pool)
                .await
                .unwrap();
        }
        sqlx::query("DELETE FROM id_tags WHERE id_tag_key = 'CARD-2'")
            .execute(&store.pool)
            .await
            .unwrap();
        let changes = store.id_tag_changes_since(0, 10).await.unwrap();
        let seen: Vec<(&str, Option<&str>)> = changes
            .iter()
            .map(|c| {
                (
                    c.id_tag_key.as_str(),
                    c.tag.as_ref().map(|t| t.status.as_str()),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("CARD-1", Some("Accepted")),
                ("CARD-2", None),
                ("CARD-2", None)
            ]
        );
        let card = changes[0].tag.as_ref().unwrap();
        assert_eq!(card.id_tag, "card-1");
        assert_eq!(card.expiry_date.as_deref(), Some("2030-01-01T00:00:00Z"));
        assert!(changes.iter().all(|c| c.team_id == team));
        let rest = store
            .id_tag_changes_since(changes[1].seq, 10)
            .await
            .unwrap();
        assert_eq!(rest.len(), 1);
    });

    store_test!(
        a_chargers_proxy_servers_are_part_of_its_registration,
        |store| {
            use crate::proxy::NewProxyServer;
            store
                .add_charger(&NewCharger {
                    identity: "CP-PROXY".into(),
                    ..Default::default()
                })
                .await
                .unwrap();
            let id: i64 = sqlx::query_scalar("SELECT id FROM chargers WHERE identity = 'CP-PROXY'")
                .fetch_one(&store.pool)
                .await
                .unwrap();
            let server = |url: &str, role: &str| NewProxyServer {
                websocket_url: cms_bus::ProxyUrl::parse(url).unwrap(),
                role: role.into(),
            };
            let servers = [
                server("wss://vendor.example/ocpp", "leader"),
                server("ws://127.0.0.1:9/ocpp", "follower"),
            ];
            store
                .set_proxy(id, "ROLE_FOLLOWER", &servers)
                .await
                .unwrap();
            // Without the `pro` licence it relays nothing.
            let entry = last_registration(&store, "CP-PROXY").await.unwrap();
            assert!(entry.proxy_servers.is_empty());
            let licensed = store.set_charger_licenses(id, None, Some(true)).await;
            assert_eq!(licensed.unwrap().map(|l| l.pro), Some(true));
            let entry = last_registration(&store, "CP-PROXY").await.unwrap();
            assert_eq!(entry.vendor_role.as_deref(), Some("ROLE_FOLLOWER"));
            assert_eq!(
                entry.proxy_servers,
                [
                    (
                        "wss://vendor.example/ocpp".to_string(),
                        "leader".to_string()
                    ),
                    ("ws://127.0.0.1:9/ocpp".to_string(), "follower".to_string()),
                ]
            );
            // Withdrawn: the gateways learn it as a registry change.
            store
                .set_charger_licenses(id, None, Some(false))
                .await
                .unwrap();
            let entry = last_registration(&store, "CP-PROXY").await.unwrap();
            assert!(entry.proxy_servers.is_empty());
            store.set_proxy(id, "ROLE_STANDALONE", &[]).await.unwrap();
            let entry = last_registration(&store, "CP-PROXY").await.unwrap();
            assert_eq!(entry.vendor_role.as_deref(), Some("ROLE_STANDALONE"));
            assert!(entry.proxy_servers.is_empty());
        }
    );
}
