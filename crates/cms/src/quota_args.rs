//! The quotas of what one team or user may create (docs/operations.md "Quotas"): the same flags
//! on `cms up`, `cms api` and every admin command that creates, since the store counts them
//! wherever the creation comes from.

use cms_store::Quotas;

#[derive(Debug, Clone, Copy, clap::Args)]
pub struct QuotaArgs {
    /// Chargers in the sites one team owns.
    #[arg(long, env = "CMS_QUOTA_CHARGERS", default_value_t = Quotas::DEFAULT.chargers,
        value_parser = clap::value_parser!(i64).range(0..))]
    pub quota_chargers: i64,
    /// Sites one team owns.
    #[arg(long, env = "CMS_QUOTA_SITES", default_value_t = Quotas::DEFAULT.sites,
        value_parser = clap::value_parser!(i64).range(0..))]
    pub quota_sites: i64,
    /// Id tags of one team, its providers' tags included.
    #[arg(long, env = "CMS_QUOTA_ID_TAGS", default_value_t = Quotas::DEFAULT.id_tags,
        value_parser = clap::value_parser!(i64).range(0..))]
    pub quota_id_tags: i64,
    /// Tariffs of one team.
    #[arg(long, env = "CMS_QUOTA_TARIFFS", default_value_t = Quotas::DEFAULT.tariffs,
        value_parser = clap::value_parser!(i64).range(0..))]
    pub quota_tariffs: i64,
    /// Providers of one team.
    #[arg(long, env = "CMS_QUOTA_PROVIDERS", default_value_t = Quotas::DEFAULT.providers,
        value_parser = clap::value_parser!(i64).range(0..))]
    pub quota_providers: i64,
    /// Domains of one team.
    #[arg(long, env = "CMS_QUOTA_DOMAINS", default_value_t = Quotas::DEFAULT.domains,
        value_parser = clap::value_parser!(i64).range(0..))]
    pub quota_domains: i64,
    /// Pending (unaccepted, unexpired) invites to the sites one team owns.
    #[arg(long, env = "CMS_QUOTA_INVITES", default_value_t = Quotas::DEFAULT.invites,
        value_parser = clap::value_parser!(i64).range(0..))]
    pub quota_invites: i64,
    /// Teams one user creates (their personal team apart).
    #[arg(long, env = "CMS_QUOTA_TEAMS", default_value_t = Quotas::DEFAULT.teams,
        value_parser = clap::value_parser!(i64).range(0..))]
    pub quota_teams: i64,
    /// Live personal access tokens of one user.
    #[arg(long, env = "CMS_QUOTA_TOKENS", default_value_t = Quotas::DEFAULT.tokens,
        value_parser = clap::value_parser!(i64).range(0..))]
    pub quota_tokens: i64,
}

impl QuotaArgs {
    pub fn quotas(&self) -> Quotas {
        Quotas {
            chargers: self.quota_chargers,
            sites: self.quota_sites,
            id_tags: self.quota_id_tags,
            tariffs: self.quota_tariffs,
            providers: self.quota_providers,
            domains: self.quota_domains,
            invites: self.quota_invites,
            teams: self.quota_teams,
            tokens: self.quota_tokens,
        }
    }

    /// The store at `store`, counting creations against these quotas; the error as the admin
    /// commands print it.
    pub async fn open(
        &self,
        store: &crate::store_args::StoreArgs,
    ) -> Result<cms_store::Store, String> {
        let opened = store.open().await.map_err(|e| e.to_string())?;
        Ok(opened.with_quotas(self.quotas()))
    }
}

/// A store error as an admin command reports it: a quota reached says which flag raises it.
pub fn explain(e: cms_store::StoreError) -> String {
    match e {
        cms_store::StoreError::QuotaReached(reached) => {
            let name = reached.quota.name();
            format!(
                "{reached} Raise it with --quota-{} (CMS_QUOTA_{}).",
                name.replace('_', "-"),
                name.to_uppercase()
            )
        }
        e => e.to_string(),
    }
}
