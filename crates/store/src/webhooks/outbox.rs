//! The outbox: events written in the same transaction as the change that caused them.
