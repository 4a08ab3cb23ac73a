//! Plain sinks: the batch table and JSON.

pub mod batch;
