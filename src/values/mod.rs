//! The bottom layer: plain values that several layers share instead of
//! taking them from each other. No I/O and no crate module above it.

pub mod retention;
pub mod screen;
pub mod transcript;
