//! Stations' certificates signed by cms (`cms up`, `cms api`; docs/ocpp201.md "Security"):
//! the station CA, or an external CA's command, and how certificates are renewed.

use crate::duration::{parse_duration, positive_duration};
use cms_api::{StationCertificatesConfig, StationSigner};
use cms_tls::station_ca::StationCa;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone, clap::Args)]
pub struct StationCaArgs {
    /// The CA that signs stations' certificates (PEM: its certificate first, then any chain
    /// above it, all sent to the station after its certificate). With --station-ca-key.
    #[arg(
        long,
        env = "CMS_STATION_CA_CERT",
        requires = "station_ca_key",
        conflicts_with = "station_ca_command"
    )]
    pub station_ca_cert: Option<PathBuf>,
    /// The station CA's private key (PKCS#8 PEM).
    #[arg(long, env = "CMS_STATION_CA_KEY", requires = "station_ca_cert")]
    pub station_ca_key: Option<PathBuf>,
    /// An external CA instead: run with the station's CSR (PEM) on its stdin and the station's
    /// identity in CMS_STATION_IDENTITY, it prints the certificate chain (PEM, the station's
    /// certificate first) and exits 0.
    #[arg(long, env = "CMS_STATION_CA_COMMAND")]
    pub station_ca_command: Option<PathBuf>,
    /// How long --station-ca-command may take before it is killed and the CSR refused.
    #[arg(long, env = "CMS_STATION_CA_COMMAND_TIMEOUT", default_value = "30s",
        value_parser = positive_duration)]
    pub station_ca_command_timeout: Duration,
    /// Days a certificate cms's station CA signs is valid.
    #[arg(long, env = "CMS_STATION_CERT_DAYS", default_value_t = 365,
        value_parser = clap::value_parser!(u32).range(1..=3650))]
    pub station_cert_days: u32,
    /// A station whose certificate ends within this is asked for a new CSR (`30d`, `720h`).
    #[arg(long, env = "CMS_STATION_CERT_RENEW_BEFORE", default_value = "30d",
        value_parser = days_or_duration)]
    pub station_cert_renew_before: Duration,
    /// How often certificates ending soon are looked for.
    #[arg(long, env = "CMS_STATION_CERT_SWEEP_INTERVAL", default_value = "1h",
        value_parser = positive_duration)]
    pub station_cert_sweep_interval: Duration,
}

/// A duration, or a number of days (`30d`).
fn days_or_duration(text: &str) -> Result<Duration, String> {
    match text.trim().strip_suffix('d').map(str::parse::<u64>) {
        Some(Ok(days)) => days
            .checked_mul(86_400)
            .map(Duration::from_secs)
            .ok_or_else(|| format!("{text:?} is too long a duration")),
        _ => parse_duration(text),
    }
}

impl StationCaArgs {
    /// The API's settings; a CA that does not load stops start-up.
    pub fn config(&self) -> Result<StationCertificatesConfig, String> {
        let signer = match (&self.station_ca_cert, &self.station_ca_key) {
            (Some(cert), Some(key)) => {
                let ca = StationCa::load(cert, key, self.station_cert_days);
                Some(StationSigner::Ca(Arc::new(ca.map_err(|e| e.to_string())?)))
            }
            _ => self
                .station_ca_command
                .clone()
                .map(|path| StationSigner::Command {
                    path,
                    timeout: self.station_ca_command_timeout,
                }),
        };
        Ok(StationCertificatesConfig {
            signer,
            renew_before: self.station_cert_renew_before,
            sweep_every: self.station_cert_sweep_interval,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_renewal_window_is_read_in_days_or_as_a_duration() {
        let days = |d: u64| Duration::from_secs(d * 86_400);
        assert_eq!(days_or_duration("30d"), Ok(days(30)));
        assert_eq!(days_or_duration("720h"), Ok(days(30)));
        assert!(days_or_duration("xd").is_err());
    }
}
