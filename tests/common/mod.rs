//! Helpers shared by the integration tests and benches.

pub mod recordings;
