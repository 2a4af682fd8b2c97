//! A charger's firmware update and log upload as it last told them (table `charger_transfers`):
//! the status of its latest FirmwareStatusNotification (1.6's own or signed, 2.0.1's) and of its
//! latest log upload (1.6 DiagnosticsStatusNotification or LogStatusNotification, 2.0.1
//! LogStatusNotification), with the request they answer and when.

use crate::{Result, Store};
use sqlx::AnyConnection;

/// Which of the two a status is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transfer {
    Firmware,
    LogUpload,
}

impl Transfer {
    /// Its columns' prefix in `charger_transfers`.
    fn column(self) -> &'static str {
        match self {
            Transfer::Firmware => "firmware",
            Transfer::LogUpload => "log",
        }
    }
}

/// A status notification as the store takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferStatus {
    pub identity: String,
    pub transfer: Transfer,
    /// As the charger said it (`Downloading`, `Installed`, `Uploading`, `Uploaded`, ...).
    pub status: String,
    /// The `requestId` of the call it answers (2.0.1, and 1.6's security extension); `None`
    /// for 1.6's own notifications.
    pub request_id: Option<i64>,
    /// When the gateway received it (record time).
    pub at: String,
}

/// The last status of one transfer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferState {
    pub status: String,
    pub request_id: Option<i64>,
    pub updated_at: String,
}

/// A charger's firmware and log upload states; `None` until it told of one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transfers {
    pub firmware: Option<TransferState>,
    pub log_upload: Option<TransferState>,
}

/// Keeps `told` unless the charger's row holds a newer status of the same transfer (records of
/// several gateways' sessions may come out of order). A charger cms does not know: nothing.
pub(crate) async fn keep(db: &mut AnyConnection, told: &TransferStatus) -> Result<()> {
    sqlx::query(
        "INSERT INTO charger_transfers (charger_id) SELECT id FROM chargers WHERE identity = $1
         ON CONFLICT (charger_id) DO NOTHING",
    )
    .bind(&told.identity)
    .execute(&mut *db)
    .await?;
    let c = told.transfer.column();
    sqlx::query(&format!(
        "UPDATE charger_transfers SET {c}_status = $1, {c}_request_id = $2, {c}_updated_at = $3
         WHERE charger_id = (SELECT id FROM chargers WHERE identity = $4)
           AND ({c}_updated_at IS NULL OR {c}_updated_at <= $3)"
    ))
    .bind(&told.status)
    .bind(told.request_id)
    .bind(&told.at)
    .bind(&told.identity)
    .execute(&mut *db)
    .await?;
    Ok(())
}

type Row = (
    i64,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
);

fn state(
    status: Option<String>,
    request_id: Option<i64>,
    at: Option<String>,
) -> Option<TransferState> {
    Some(TransferState {
        status: status?,
        request_id,
        updated_at: at?,
    })
}

impl Store {
    /// The transfers of the chargers `ids`, by charger id (one round trip; a charger that told
    /// of none is absent).
    pub async fn transfers_of(
        &self,
        ids: &[i64],
    ) -> Result<std::collections::HashMap<i64, Transfers>> {
        if ids.is_empty() {
            return Ok(Default::default());
        }
        let list = crate::parameters(1, ids.len());
        let sql = format!(
            "SELECT charger_id, firmware_status, firmware_request_id, firmware_updated_at,
               log_status, log_request_id, log_updated_at
             FROM charger_transfers WHERE charger_id IN ({list})"
        );
        let mut query = sqlx::query_as::<_, Row>(&sql);
        for id in ids {
            query = query.bind(id);
        }
        let rows = query.fetch_all(self.db()).await?;
        Ok(rows
            .into_iter()
            .map(|(id, fs, fr, fa, ls, lr, la)| {
                let transfers = Transfers {
                    firmware: state(fs, fr, fa),
                    log_upload: state(ls, lr, la),
                };
                (id, transfers)
            })
            .collect())
    }

    /// The transfers of charger `id`.
    pub async fn transfers(&self, id: i64) -> Result<Transfers> {
        Ok(self
            .transfers_of(&[id])
            .await?
            .remove(&id)
            .unwrap_or_default())
    }
}

#[cfg(test)]
mod tests;
