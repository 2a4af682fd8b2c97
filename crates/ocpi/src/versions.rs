//! The versions module's objects (OCPI 2.2.1).
