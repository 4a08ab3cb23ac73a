//! Test support: synthetic /proc and /sys trees for tests and benches.

pub mod synth;
