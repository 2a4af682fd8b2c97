//! OCPI cdrs: a CDR is a session's record once it stopped and was priced, so the store keeps
//! nothing of its own for them: `sessions.rs` lists them (`Store::ocpi_cdrs`).
