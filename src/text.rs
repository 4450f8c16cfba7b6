//! Small text rules shared by every diagnostic the program stores or prints.

/// DESIGN §4: reasons and diagnostics are bounded to 4096 UTF-8 bytes.
pub const MAX_DIAGNOSTIC: usize = 4096;

/// Cuts `s` to at most `max` bytes on a character boundary, marking the cut.
pub fn bounded(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    const MARK: &str = "…";
    let mut end = max.saturating_sub(MARK.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{MARK}", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_cuts_on_a_char_boundary_within_the_limit() {
        let s = "é".repeat(3000);
        let b = bounded(&s, MAX_DIAGNOSTIC);
        assert!(b.len() <= MAX_DIAGNOSTIC);
        assert!(b.ends_with('…'));
        assert_eq!(bounded("short", 10), "short");
    }
}
