//! OCPI sessions: what the store keeps for it.
