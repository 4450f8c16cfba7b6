//! The routines' group in the tree (its rows built by `tree.rs`, each
//! routine's runs under it): a heading, then one row per routine with its
//! next fire (or why it has none) and its last outcome's glyph.

use std::time::SystemTime;

use ratatui::text::{Line, Span};

use super::app::App;
use super::view::{Theme, glyph};

/// One row: `◷ nightly      03:00`, the time its next fire in local time
/// (the weekday too when not within a day, the date when not within six),
/// `paused` or `off`.
pub fn line<'a>(app: &App, name: &str, width: usize, theme: &Theme, now: SystemTime) -> Line<'a> {
    if name.is_empty() {
        return Line::styled("▾ routines", theme.dim);
    }
    let Some(r) = app.routines.iter().find(|r| r.name == name) else {
        return Line::from("");
    };
    let when = match (&r.next_fire, r.paused) {
        (Some(next), _) => next_fire(next, now),
        (None, true) => "paused".into(),
        (None, false) => "off".into(),
    };
    let last = r.last.as_ref().map(glyph).unwrap_or(" ");
    let left = 2 + 2;
    let room = width.saturating_sub(left + when.chars().count() + 1);
    let shown: String = match name.chars().count() > room {
        true => name.chars().take(room.saturating_sub(1)).chain(['…']).collect(),
        false => name.to_string(),
    };
    let pad = width.saturating_sub(left + shown.chars().count() + when.chars().count());
    Line::from(vec![
        Span::raw(" "),
        Span::styled("◷", theme.accent),
        Span::styled(last, theme.dim),
        Span::raw(" "),
        Span::raw(crate::text::inert_line(&shown).into_owned()),
        Span::raw(" ".repeat(pad)),
        Span::styled(when, theme.dim),
    ])
}

/// `03:00` within a day of now, `Tue 03:00` within six days (a weekday
/// names one day only that near), else its date: `1 Jan 03:00`, with the
/// year when it is not this one (`2028-01-01 03:00`); in local time.
fn next_fire(rfc3339: &str, now: SystemTime) -> String {
    use chrono::Datelike;
    let Ok(at) = chrono::DateTime::parse_from_rfc3339(rfc3339) else {
        return rfc3339.to_string();
    };
    let at = at.with_timezone(&chrono::Local);
    let now: chrono::DateTime<chrono::Local> = now.into();
    let ahead = at - now;
    let format = match () {
        _ if ahead.num_hours() < 24 => "%H:%M",
        _ if ahead.num_days() < 6 => "%a %H:%M",
        // Within the next months: the month says which year.
        _ if at.year() == now.year() || ahead.num_days() < 180 => "%-d %b %H:%M",
        _ => "%Y-%m-%d %H:%M",
    };
    at.format(format).to_string()
}
