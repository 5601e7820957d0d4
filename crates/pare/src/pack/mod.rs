//! Packing search results and code chunks under a token budget.

pub mod outline;
