//! HTTP handlers: the native `/v1` API and OSWorld's routes.
pub mod osworld;
pub mod v1;
