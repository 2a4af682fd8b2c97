//! OCPI locations: what the store keeps for it.
