//! The certificates cms signed for stations: each kept with its serial, end and fingerprint;
//! a station's newest is its current one, which the renewal sweep asks the station to replace
//! before it ends (at most once a day per station, claimed so that one replica asks).

use crate::{Result, Store};

/// A certificate cms just signed for the station `charger_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedCertificate {
    pub charger_id: i64,
    /// Hexadecimal.
    pub serial: String,
    /// Record time form.
    pub not_after: String,
    /// SHA-256 of the DER, hexadecimal.
    pub fingerprint: String,
    pub signed_at: String,
}

/// A signed certificate, as the API lists it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StationCertificateRow {
    pub id: i64,
    pub serial: String,
    pub not_after: String,
    pub fingerprint: String,
    pub signed_at: String,
    pub renewal_asked_at: Option<String>,
}

/// A station's current certificate that ends soon.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct EndingCertificate {
    pub certificate_id: i64,
    pub charger_id: i64,
    pub identity: String,
    pub ocpp_version: Option<String>,
    pub not_after: String,
    pub renewal_asked_at: Option<String>,
}

/// Each station's newest certificate (its current one).
const CURRENT: &str = "station_certificates s JOIN chargers c ON c.id = s.charger_id WHERE s.id =
    (SELECT MAX(n.id) FROM station_certificates n WHERE n.charger_id = s.charger_id)";

impl Store {
    /// Keeps a certificate cms signed.
    pub async fn insert_station_certificate(&self, signed: &SignedCertificate) -> Result<()> {
        sqlx::query(
            "INSERT INTO station_certificates (charger_id, serial, not_after, fingerprint, signed_at)
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(signed.charger_id)
        .bind(&signed.serial)
        .bind(&signed.not_after)
        .bind(&signed.fingerprint)
        .bind(&signed.signed_at)
        .execute(self.db())
        .await?;
        Ok(())
    }

    /// A page of the certificates signed for the station, newest first, and how many there are.
    pub async fn station_certificates_page(
        &self,
        charger_id: i64,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<StationCertificateRow>, i64)> {
        let total: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM station_certificates WHERE charger_id = $1")
                .bind(charger_id)
                .fetch_one(self.db())
                .await?;
        let page = sqlx::query_as(
            "SELECT id, serial, not_after, fingerprint, signed_at, renewal_asked_at
             FROM station_certificates WHERE charger_id = $1
             ORDER BY id DESC LIMIT $2 OFFSET $3",
        )
        .bind(charger_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(self.db())
        .await?;
        Ok((page, total))
    }

    /// The stations' current certificates that end before `before` (record time), soonest
    /// first.
    pub async fn station_certificates_ending(
        &self,
        before: &str,
    ) -> Result<Vec<EndingCertificate>> {
        Ok(sqlx::query_as(&format!(
            "SELECT s.id AS certificate_id, s.charger_id, c.identity, c.ocpp_version,
               s.not_after, s.renewal_asked_at
             FROM {CURRENT} AND s.not_after < $1
             ORDER BY s.not_after",
        ))
        .bind(before)
        .fetch_all(self.db())
        .await?)
    }

    /// Claims the renewal of a station's certificate at `now`, unless the station was asked
    /// for one since `asked_since` (for this certificate or an earlier one: a renewal's new
    /// certificate may end within the window too): `true` for the one caller that gets it.
    pub async fn claim_certificate_renewal(
        &self,
        certificate_id: i64,
        now: &str,
        asked_since: &str,
    ) -> Result<bool> {
        // The row's own condition is checked again by PostgreSQL after a concurrent claim of
        // the same row: one of two replicas gets it.
        let claimed = sqlx::query(
            "UPDATE station_certificates SET renewal_asked_at = $1
             WHERE id = $2 AND (renewal_asked_at IS NULL OR renewal_asked_at < $3)
               AND NOT EXISTS (SELECT 1 FROM station_certificates o
                 WHERE o.charger_id = station_certificates.charger_id AND o.id <> $2
                   AND o.renewal_asked_at >= $3)",
        )
        .bind(now)
        .bind(certificate_id)
        .bind(asked_since)
        .execute(self.db())
        .await?;
        Ok(claimed.rows_affected() == 1)
    }

    /// Gives a claimed renewal back (the station was not connected: nothing was asked).
    pub async fn release_certificate_renewal(
        &self,
        certificate_id: i64,
        asked_before: Option<&str>,
    ) -> Result<()> {
        sqlx::query("UPDATE station_certificates SET renewal_asked_at = $1 WHERE id = $2")
            .bind(asked_before)
            .bind(certificate_id)
            .execute(self.db())
            .await?;
        Ok(())
    }
}
