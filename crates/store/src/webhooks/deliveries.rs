//! Each event's delivery to each subscription that should have it, and its attempts.
