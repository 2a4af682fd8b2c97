//! Shapes shared by many endpoints, as OpenAPI schemas: envelopes and error bodies.

use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// `{ "data": ... }`, the reference's envelope of single resources and plain lists.
#[derive(Debug, Serialize, ToSchema)]
pub struct Data<T> {
    pub data: T,
}

impl<T> Data<T> {
    pub fn new(data: T) -> Data<T> {
        Data { data }
    }
}

/// 400, 401, 403, 404 and 405 bodies: `{"message": "Unauthenticated."}` and the like.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    pub message: String,
}

/// 422: Laravel's validation failure, every failing field with its messages.
#[derive(Debug, Serialize, ToSchema)]
pub struct ValidationErrorBody {
    /// The first failure, plus "(and N more errors)".
    pub message: String,
    pub errors: BTreeMap<String, Vec<String>>,
}

/// The reference's `permissions` object: what the caller may do with the resource.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
pub struct PermissionsBody {
    /// May see it.
    pub basic: bool,
    /// May see its sensitive data (transactions' id tags, meter readings).
    pub sensitive: bool,
    /// May change it (the owner team).
    pub full: bool,
}

impl From<cms_store::Permissions> for PermissionsBody {
    fn from(p: cms_store::Permissions) -> Self {
        PermissionsBody {
            basic: p.basic,
            sensitive: p.sensitive,
            full: p.full,
        }
    }
}

/// `{}`: what a deletion answers.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct EmptyBody {}
