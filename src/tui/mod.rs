//! The live dashboard (ratatui + crossterm): a sampler thread sends owned
//! samples over a channel (`crate::pipeline`), the event loop (`run`) folds them into
//! the `State` and redraws it (`render` and one module per view) only when
//! a sample, a key or a resize arrives. Keys go through one table (`keys`);
//! they, the samples and the clock change the `State` only through
//! `State::update`.

pub mod bars;
pub mod columns;
pub mod cores;
pub mod cstates;
pub mod detail;
pub mod fit;
pub mod fmt;
pub mod header;
pub mod history;
pub mod irqs;
pub mod keys;
pub mod layout;
pub mod log;
pub mod overview;
pub mod pane;
pub mod popup;
pub mod render;
pub mod restore;
pub mod run;
pub mod saved;
pub mod selfcost;
pub mod state;
pub mod summary;
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
