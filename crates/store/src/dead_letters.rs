//! Bus records the store refused, set aside with the reason: one record no column can hold must
//! not hold back every record behind it, and must not vanish either.

use crate::{Result, Store, StoreError, now_record_time};
use sqlx::error::ErrorKind;

/// A record as it came off the bus, and why the store refused it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetter {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub key: Vec<u8>,
    /// The record's headers as a JSON object of text values.
    pub headers: String,
    pub value: Vec<u8>,
    pub reason: String,
}

/// A dead letter as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredDeadLetter {
    pub id: i64,
    pub letter: DeadLetter,
    pub created_at: String,
}

impl StoreError {
    /// Whether the database refused the data itself (a value a column cannot hold, a broken
    /// constraint), so that trying the same write again cannot succeed. Anything else (the
    /// database unreachable, busy, restarting) may pass on a later try.
    pub fn is_refusal(&self) -> bool {
        let StoreError::Database(error) = self else {
            return matches!(self, StoreError::Conflict(_) | StoreError::NotFound(_));
        };
        match error {
            sqlx::Error::Database(db) => {
                if !matches!(db.kind(), ErrorKind::Other) {
                    return true;
                }
                match db.code().as_deref() {
                    // PostgreSQL SQLSTATE classes 22 (data exception: a NUL in text, a number
                    // out of range) and 23 (integrity constraint violation).
                    Some(code)
                        if code.len() == 5
                            && (code.starts_with("22") || code.starts_with("23")) =>
                    {
                        true
                    }
                    // SQLite result codes (extended; the primary code is the low byte): TOOBIG,
                    // CONSTRAINT, MISMATCH, RANGE.
                    Some(code) => code
                        .parse::<i32>()
                        .is_ok_and(|n| matches!(n & 0xff, 18 | 19 | 20 | 25)),
                    None => false,
                }
            }
            sqlx::Error::Encode(_)
            | sqlx::Error::Decode(_)
            | sqlx::Error::ColumnDecode { .. }
            | sqlx::Error::TypeNotFound { .. } => true,
            _ => false,
        }
    }
}

impl Store {
    /// Keeps a refused record with its reason.
    pub async fn set_aside(&self, letter: &DeadLetter) -> Result<()> {
        sqlx::query(
            "INSERT INTO dead_letters (topic, partition_id, record_offset, record_key, headers,
               value, reason, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(without_nul(&letter.topic))
        .bind(i64::from(letter.partition))
        .bind(letter.offset)
        .bind(letter.key.clone())
        .bind(without_nul(&letter.headers))
        .bind(letter.value.clone())
        .bind(without_nul(&letter.reason))
        .bind(now_record_time())
        .execute(self.db())
        .await?;
        Ok(())
    }

    /// A page of the dead letters, newest first, and how many there are.
    pub async fn dead_letters(
        &self,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<StoredDeadLetter>, i64)> {
        let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM dead_letters")
            .fetch_one(self.db())
            .await?;
        type Row = (
            i64,
            String,
            i64,
            i64,
            Vec<u8>,
            String,
            Vec<u8>,
            String,
            String,
        );
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT id, topic, partition_id, record_offset, record_key, headers, value, reason,
               created_at
             FROM dead_letters ORDER BY id DESC LIMIT $1 OFFSET $2",
        )
        .bind(limit)
        .bind(offset)
        .fetch_all(self.db())
        .await?;
        let letters = rows
            .into_iter()
            .map(
                |(id, topic, partition, offset, key, headers, value, reason, created_at)| {
                    StoredDeadLetter {
                        id,
                        letter: DeadLetter {
                            topic,
                            partition: partition as i32,
                            offset,
                            key,
                            headers,
                            value,
                            reason,
                        },
                        created_at,
                    }
                },
            )
            .collect();
        Ok((letters, total))
    }
}

/// Text as a text column takes it: what is set aside must not be refused for the same reason.
fn without_nul(text: &str) -> String {
    text.replace('\0', "\\u0000")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StateChange;
    use crate::test_support::store_test;

    fn status(identity: &str, info: &str) -> StateChange {
        StateChange::Status {
            identity: identity.into(),
            connector_id: 1,
            status: "Available".into(),
            error: "NoError".into(),
            info: Some(info.into()),
            vendor_id: None,
            vendor_error_code: None,
            at: "2026-11-21T10:00:00.000000Z".into(),
        }
    }

    store_test!(refused_records_are_kept_with_their_reason, |store| {
        store
            .add_charger(&crate::NewCharger {
                identity: "CP-1".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        assert!(store.apply(&[status("CP-1", "fine")]).await.is_ok());
        let letter = DeadLetter {
            topic: "cms.ocpp.messages".into(),
            partition: 3,
            offset: 42,
            key: b"CP-1".to_vec(),
            headers: r#"{"action":"StatusNotification"}"#.into(),
            value: b"{\"info\":\"a\\u0000b\"}\0raw".to_vec(),
            reason: "invalid byte sequence \0".into(),
        };
        store.set_aside(&letter).await.unwrap();
        let (kept, total) = store.dead_letters(10, 0).await.unwrap();
        assert_eq!(total, 1);
        assert_eq!(
            kept[0].letter.value, letter.value,
            "the value byte for byte"
        );
        assert_eq!(kept[0].letter.key, letter.key);
        assert_eq!((kept[0].letter.partition, kept[0].letter.offset), (3, 42));
        assert_eq!(kept[0].letter.reason, "invalid byte sequence \\u0000");
    });

    store_test!(a_nul_is_refused_as_data_and_an_outage_is_not, |store| {
        store
            .add_charger(&crate::NewCharger {
                identity: "CP-1".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        // SQLite keeps a NUL; PostgreSQL refuses it, and that refusal is final.
        let written = store.apply(&[status("CP-1", "a\0b")]).await;
        match store.backend() {
            crate::Backend::Sqlite => assert!(written.is_ok(), "{written:?}"),
            crate::Backend::Postgres => {
                let e = written.expect_err("PostgreSQL text cannot hold NUL");
                assert!(e.is_refusal(), "{e}");
            }
        }
        store.close().await;
        let e = store
            .apply(&[status("CP-1", "fine")])
            .await
            .expect_err("the pool is closed");
        assert!(!e.is_refusal(), "a store that is gone may come back: {e}");
    });
}
