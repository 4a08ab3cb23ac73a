//! The live dashboard (ratatui + crossterm): a sampler thread sends owned
//! samples over a channel (`crate::pipeline`), the event loop (`run`) folds them into
//! the `State` and redraws it (`render` and one module per view) only when
//! a sample, a key or a resize arrives. Keys go through one table (`keys`);
//! they, the samples and the clock change the `State` only through
//! `State::update`.

pub(crate) mod bars;
pub mod columns;
pub(crate) mod cores;
pub(crate) mod cstates;
pub(crate) mod detail;
pub(crate) mod fit;
pub(crate) mod fmt;
pub(crate) mod header;
pub(crate) mod history;
pub(crate) mod irqs;
pub(crate) mod keys;
pub(crate) mod layout;
pub(crate) mod log;
pub(crate) mod overview;
pub(crate) mod pane;
pub(crate) mod popup;
pub(crate) mod render;
pub(crate) mod restore;
pub(crate) mod run;
pub(crate) mod saved;
pub(crate) mod selfcost;
pub mod state;
pub(crate) mod summary;
pub mod theme;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_edges;
#[cfg(test)]
mod tests_empty;
#[cfg(test)]
mod tests_glance;
#[cfg(test)]
mod tests_popups;
#[cfg(test)]
mod tests_turbostat;
#[cfg(test)]
mod tests_units;
#[cfg(test)]
mod tests_wide;
