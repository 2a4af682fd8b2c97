//! A lease on a one-row table (`id = 1`, `holder`, `lease_until`): one API replica at a time
//! runs the dispatcher the table belongs to (webhooks', OCPI's).

use crate::{Result, Store};

/// The dispatchers' lease tables.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LeaseTable {
    Webhooks,
    Ocpi,
}

impl LeaseTable {
    fn name(self) -> &'static str {
        match self {
            LeaseTable::Webhooks => "webhook_dispatcher",
            LeaseTable::Ocpi => "ocpi_dispatcher",
        }
    }
}

impl Store {
    /// Takes `table`'s lease for `holder` until `until` when it is free, run out at `now`, or
    /// already `holder`'s (a renewal): one conditional UPDATE. Whether `holder` holds it now.
    pub(crate) async fn take_lease(
        &self,
        table: LeaseTable,
        holder: &str,
        now: &str,
        until: &str,
    ) -> Result<bool> {
        let taken = sqlx::query(&format!(
            "UPDATE {} SET holder = $1, lease_until = $2
             WHERE id = 1 AND (holder = $1 OR holder IS NULL OR lease_until IS NULL
                               OR lease_until < $3)",
            table.name()
        ))
        .bind(holder)
        .bind(until)
        .bind(now)
        .execute(self.db())
        .await?;
        Ok(taken.rows_affected() == 1)
    }

    /// Lets go of `table`'s lease if `holder` has it (at shutdown), so another replica takes it
    /// at once.
    pub(crate) async fn release_lease(&self, table: LeaseTable, holder: &str) -> Result<()> {
        sqlx::query(&format!(
            "UPDATE {} SET holder = NULL, lease_until = NULL WHERE id = 1 AND holder = $1",
            table.name()
        ))
        .bind(holder)
        .execute(self.db())
        .await?;
        Ok(())
    }
}
