//! OCPI cdrs: what the store keeps for it.
