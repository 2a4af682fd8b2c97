//! OCPI tokens: what the store keeps for it.
