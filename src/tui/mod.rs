//! The live dashboard.
