//! Taking readings: the sampler reads every source into a snapshot
//! (`sampler`), the engine turns two into an interval (`engine`), the
//! ladder picks the best frequency source a machine offers (`ladder`), and
//! `hands_off` counts the IPIs noisetop's own setup sent.

pub mod engine;
pub mod hands_off;
pub mod ladder;
pub mod sampler;
