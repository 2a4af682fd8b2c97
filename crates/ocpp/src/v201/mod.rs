//! OCPP 2.0.1: a station's calls (actions, validated against the official JSON schemas in one
//! streaming pass, with what the gateway needs kept) and the calls cms makes (commands).

mod schemas;
