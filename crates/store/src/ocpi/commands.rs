//! OCPI commands: what the store keeps for it.
