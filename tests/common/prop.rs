//! What the property tests share (`#[path]`-included, so they need none
//! of the rest of `common`).

use proptest::prelude::ProptestConfig;

/// `default` cases of a property, unless `PROPTEST_CASES` says otherwise.
pub fn cases(default: u32) -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok());
    ProptestConfig::with_cases(n.unwrap_or(default))
}
