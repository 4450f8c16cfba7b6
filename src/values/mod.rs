//! The bottom layer: plain values that several layers share instead of
//! taking them from each other. No I/O and no crate module above it.

pub mod retention;
pub mod sandbox;
pub mod screen;
pub mod transcript;

/// A variable's name: letters, digits and `_`, not starting with a digit.
pub fn is_env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
