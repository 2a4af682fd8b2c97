//! How cms speaks OCPI with providers (`cms up`, `cms api`; docs/ocpi.md).

#[derive(Debug, Clone, clap::Args)]
pub struct OcpiArgs {
    /// The address eMSPs reach cms's OCPI endpoints at (its versions and modules' URLs are
    /// made from it), e.g. `https://cms.example.com`; by default each request's own scheme and
    /// `Host`.
    #[arg(long, env = "CMS_OCPI_PUBLIC_URL")]
    pub ocpi_public_url: Option<String>,
    /// Lets parties' URLs use plain `http` and name loopback or private addresses: for tests
    /// and closed networks.
    #[arg(long, env = "CMS_OCPI_ALLOW_PRIVATE")]
    pub ocpi_allow_private: bool,
}

impl OcpiArgs {
    /// The API's settings of them.
    pub fn settings(&self) -> cms_api::OcpiSettings {
        cms_api::OcpiSettings {
            public_url: self
                .ocpi_public_url
                .as_deref()
                .map(|url| url.trim_end_matches('/').to_string()),
            allow_private: self.ocpi_allow_private,
        }
    }
}
