//! Teams (the v2 teams endpoints) and the domains a team claims (v3). A user sees the teams
//! they belong to (`team_user`) and nothing of any other team.

use crate::{Quota, Result, Store, StoreError, flag, now_record_time};
use sqlx::Row;
use sqlx::any::AnyRow;

/// The `type` of a personal team, made with its user.
pub const PERSONAL_TEAM_TYPE: &str = "personal";
/// The `type` of the operators' team, which owns the sites the command line fills.
pub const OPERATORS_TEAM_TYPE: &str = "operators";
/// The types a team created through the API may have: a company that runs chargers
/// (`business`), one that installs and maintains them for others (`installer`), a household
/// (`private`). `personal` and `operators` are the service's own and cannot be chosen.
pub const API_TEAM_TYPES: [&str; 3] = ["business", "installer", "private"];

/// The role of a team's creator in it.
pub const OWNER_ROLE: &str = "owner";

/// Message of a domain the team already has (Laravel's `unique` rule).
pub const DOMAIN_TAKEN: &str = "The domain has already been taken.";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    pub id: i64,
    pub uuid: String,
    pub name: String,
    pub team_type: String,
    /// `None` for the operators' team, which the command line makes without one.
    pub email: Option<String>,
    pub is_personal_team: bool,
    pub created_at: String,
    pub updated_at: String,
}

impl<'r> sqlx::FromRow<'r, AnyRow> for Team {
    fn from_row(row: &'r AnyRow) -> Result<Self, sqlx::Error> {
        Ok(Team {
            id: row.try_get("id")?,
            uuid: row.try_get("uuid")?,
            name: row.try_get("name")?,
            team_type: row.try_get("type")?,
            email: row.try_get("email")?,
            is_personal_team: flag(row, "is_personal_team")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }
}

/// A team to create.
#[derive(Debug, Clone)]
pub struct NewTeam {
    pub name: String,
    pub email: String,
    pub team_type: String,
}

/// A domain a team claims.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct TeamDomain {
    pub id: i64,
    pub team_id: i64,
    /// Lowercase, as the API normalised it.
    pub domain: String,
    pub created_at: String,
    pub updated_at: String,
}

const TEAM_COLUMNS: &str =
    "t.id, t.uuid, t.name, t.type, t.email, t.is_personal_team, t.created_at, t.updated_at";

impl Store {
    /// Whether the user belongs to the platform operators' team (who grant licences).
    pub async fn is_platform_operator(&self, user_id: i64) -> Result<bool> {
        let found: Option<i64> = sqlx::query_scalar(
            "SELECT tu.user_id FROM team_user tu JOIN teams t ON t.id = tu.team_id
             WHERE tu.user_id = $1 AND t.type = $2 LIMIT 1",
        )
        .bind(user_id)
        .bind(OPERATORS_TEAM_TYPE)
        .fetch_optional(self.db())
        .await?;
        Ok(found.is_some())
    }

    /// Creates a team; its creator becomes a member with the role `owner`.
    pub async fn create_team(&self, creator_user_id: i64, new: &NewTeam) -> Result<Team> {
        let now = now_record_time();
        let uuid = uuid::Uuid::new_v4().to_string();
        let mut tx = self.begin_write().await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO teams (uuid, owner_user_id, name, type, email, is_personal_team, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, 0, $6, $6) RETURNING id",
        )
        .bind(&uuid)
        .bind(creator_user_id)
        .bind(&new.name)
        .bind(&new.team_type)
        .bind(&new.email)
        .bind(&now)
        .fetch_one(&mut *tx)
        .await?;
        sqlx::query("INSERT INTO team_user (team_id, user_id, role) VALUES ($1, $2, $3)")
            .bind(id)
            .bind(creator_user_id)
            .bind(OWNER_ROLE)
            .execute(&mut *tx)
            .await?;
        self.enforce_quota(&mut tx, Quota::Teams, creator_user_id)
            .await?;
        tx.commit().await?;
        Ok(Team {
            id,
            uuid,
            name: new.name.clone(),
            team_type: new.team_type.clone(),
            email: Some(new.email.clone()),
            is_personal_team: false,
            created_at: now.clone(),
            updated_at: now,
        })
    }

    /// The teams `user_id` belongs to, oldest first.
    pub async fn teams_of(&self, user_id: i64) -> Result<Vec<Team>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {TEAM_COLUMNS} FROM teams t JOIN team_user tu ON tu.team_id = t.id
             WHERE tu.user_id = $1 ORDER BY t.id"
        ))
        .bind(user_id)
        .fetch_all(self.db())
        .await?)
    }

    /// The team `team_uuid` if `user_id` belongs to it; `None` for any other team, so that a
    /// stranger cannot tell a team that exists from one that does not.
    pub async fn member_team(&self, user_id: i64, team_uuid: &str) -> Result<Option<Team>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {TEAM_COLUMNS} FROM teams t JOIN team_user tu ON tu.team_id = t.id
             WHERE tu.user_id = $1 AND t.uuid = $2"
        ))
        .bind(user_id)
        .bind(team_uuid)
        .fetch_optional(self.db())
        .await?)
    }

    /// The team with this id.
    pub async fn team_by_id(&self, team_id: i64) -> Result<Option<Team>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {TEAM_COLUMNS} FROM teams t WHERE t.id = $1"
        ))
        .bind(team_id)
        .fetch_optional(self.db())
        .await?)
    }

    /// The team `team_uuid`, whoever belongs to it (for the command line, which acts for the
    /// operator of the service).
    pub async fn team_by_uuid(&self, team_uuid: &str) -> Result<Option<Team>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {TEAM_COLUMNS} FROM teams t WHERE t.uuid = $1"
        ))
        .bind(team_uuid)
        .fetch_optional(self.db())
        .await?)
    }

    /// The domains of a team, oldest first.
    pub async fn team_domains(&self, team_id: i64) -> Result<Vec<TeamDomain>> {
        Ok(sqlx::query_as(
            "SELECT id, team_id, domain, created_at, updated_at FROM team_domains
             WHERE team_id = $1 ORDER BY id",
        )
        .bind(team_id)
        .fetch_all(self.db())
        .await?)
    }

    /// Adds a domain (already validated and lowercased) to a team; a domain the team already
    /// has is a [`StoreError::Conflict`] with [`DOMAIN_TAKEN`].
    pub async fn add_team_domain(&self, team_id: i64, domain: &str) -> Result<TeamDomain> {
        let now = now_record_time();
        let mut tx = self.begin_write().await?;
        let inserted = sqlx::query_scalar(
            "INSERT INTO team_domains (team_id, domain, created_at, updated_at)
             VALUES ($1, $2, $3, $3) RETURNING id",
        )
        .bind(team_id)
        .bind(domain)
        .bind(&now)
        .fetch_one(&mut *tx)
        .await;
        let id: i64 = match inserted {
            Ok(id) => id,
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                return Err(StoreError::Conflict(DOMAIN_TAKEN.into()));
            }
            Err(e) => return Err(e.into()),
        };
        self.enforce_quota(&mut tx, Quota::Domains, team_id).await?;
        tx.commit().await?;
        Ok(TeamDomain {
            id,
            team_id,
            domain: domain.to_string(),
            created_at: now.clone(),
            updated_at: now,
        })
    }

    /// Deletes a domain of a team; `false` when the team has no domain with that id.
    pub async fn delete_team_domain(&self, team_id: i64, domain_id: i64) -> Result<bool> {
        let deleted = sqlx::query("DELETE FROM team_domains WHERE id = $1 AND team_id = $2")
            .bind(domain_id)
            .bind(team_id)
            .execute(self.db())
            .await?;
        Ok(deleted.rows_affected() > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::store_test;

    fn business(name: &str) -> NewTeam {
        NewTeam {
            name: name.into(),
            email: format!("{}@example.com", name.to_lowercase()),
            team_type: "business".into(),
        }
    }

    store_test!(a_created_team_lists_for_its_creator_only, |store| {
        let creator = store.ensure_user("creator@example.com").await.unwrap();
        let stranger = store
            .ensure_user_in("stranger@example.com", false)
            .await
            .unwrap();
        let team = store
            .create_team(creator.id, &business("Acme"))
            .await
            .unwrap();
        assert_eq!(team.name, "Acme");
        assert_eq!(team.team_type, "business");
        assert_eq!(team.email.as_deref(), Some("acme@example.com"));
        assert!(!team.is_personal_team);
        assert!(uuid::Uuid::parse_str(&team.uuid).is_ok());

        let listed = store.teams_of(creator.id).await.unwrap();
        let types: Vec<&str> = listed.iter().map(|t| t.team_type.as_str()).collect();
        assert_eq!(types, [PERSONAL_TEAM_TYPE, OPERATORS_TEAM_TYPE, "business"]);
        assert!(listed[0].is_personal_team);
        assert_eq!(listed[0].id, creator.personal_team_id);
        assert_eq!(listed[2], team, "the stored team is the one returned");

        let stranger_teams = store.teams_of(stranger.id).await.unwrap();
        assert_eq!(stranger_teams.len(), 1, "only the stranger's personal team");
        assert_eq!(
            store.member_team(creator.id, &team.uuid).await.unwrap(),
            Some(team.clone())
        );
        assert_eq!(
            store.member_team(stranger.id, &team.uuid).await.unwrap(),
            None
        );
        assert_eq!(store.member_team(creator.id, "nope").await.unwrap(), None);
        assert_eq!(
            store.team_by_uuid(&team.uuid).await.unwrap(),
            Some(team.clone()),
            "the command line finds any team"
        );
        assert_eq!(store.team_by_uuid("nope").await.unwrap(), None);
    });

    store_test!(the_creator_of_a_team_is_its_owner, |store| {
        let creator = store
            .ensure_user_in("owner@example.com", false)
            .await
            .unwrap();
        let team = store
            .create_team(creator.id, &business("Owned"))
            .await
            .unwrap();
        let role: String =
            sqlx::query_scalar("SELECT role FROM team_user WHERE team_id = $1 AND user_id = $2")
                .bind(team.id)
                .bind(creator.id)
                .fetch_one(&store.pool)
                .await
                .unwrap();
        assert_eq!(role, OWNER_ROLE);
    });

    store_test!(
        domains_are_unique_per_team_and_deleted_by_their_team,
        |store| {
            let user = store.ensure_user_in("d@example.com", false).await.unwrap();
            let first = store
                .create_team(user.id, &business("First"))
                .await
                .unwrap();
            let second = store
                .create_team(user.id, &business("Second"))
                .await
                .unwrap();

            let a = store.add_team_domain(first.id, "a.example").await.unwrap();
            let b = store.add_team_domain(first.id, "b.example").await.unwrap();
            assert_eq!(a.domain, "a.example");
            assert_eq!(a.team_id, first.id);
            assert!(matches!(
                store.add_team_domain(first.id, "a.example").await,
                Err(StoreError::Conflict(m)) if m == DOMAIN_TAKEN
            ));
            let other_team = store.add_team_domain(second.id, "a.example").await.unwrap();
            assert_eq!(
                store.team_domains(first.id).await.unwrap(),
                [a.clone(), b.clone()]
            );

            assert!(
                !store.delete_team_domain(second.id, a.id).await.unwrap(),
                "a domain is deleted through its own team only"
            );
            assert!(store.delete_team_domain(first.id, a.id).await.unwrap());
            assert!(!store.delete_team_domain(first.id, a.id).await.unwrap());
            assert_eq!(store.team_domains(first.id).await.unwrap(), [b]);
            assert_eq!(store.team_domains(second.id).await.unwrap(), [other_team]);
        }
    );
}
