//! Plain sinks: the batch table and its verdict and finding lines.

pub mod batch;
pub(crate) mod judged;
