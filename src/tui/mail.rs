//! The Mail tab: the newest messages to and from the selected run, each
//! with who wrote to whom, when, where its delivery stands and its body —
//! an agent's words, made inert before they are drawn.

use ratatui::text::{Line, Span};

use super::app::App;
use super::view::Theme;
use crate::api::{MailRecord, RunRecord};

/// How many messages the tab reads (newest first).
pub const NEWEST: usize = 50;

/// The most lines of one body the tab draws; `agents mail read ID` has it whole.
const BODY_LINES: usize = 8;

pub fn lines<'a>(app: &App, run: &RunRecord, theme: &Theme) -> Vec<Line<'a>> {
    match app.mail.get(&run.id) {
        None => vec![Line::from(Span::styled("reading mail…", theme.dim))],
        Some(Err(e)) => vec![Line::from(Span::styled(format!("mail not read: {e}"), theme.warn))],
        Some(Ok(list)) if list.is_empty() => vec![Line::from(Span::styled(
            format!("no mail to or from {} — agents mail send {} TEXT", run.name, run.name),
            theme.dim,
        ))],
        Some(Ok(list)) => {
            let mut lines = vec![Line::from(Span::styled(
                format!("{} message(s), newest first", list.len()),
                theme.dim,
            ))];
            for m in list {
                lines.push(Line::raw(""));
                lines.extend(message(m, &run.id, theme));
            }
            lines
        }
    }
}

/// `→ critic  12:03:10  delivered` (or `← lead`), then the body.
fn message<'a>(m: &MailRecord, run: &str, theme: &Theme) -> Vec<Line<'a>> {
    let (arrow, other) = match m.to == run {
        true => ("← ", m.from_name.as_str()),
        false => ("→ ", m.to_name.as_str()),
    };
    let at = m.at.get(11..19).unwrap_or(&m.at);
    let state = match m.state.as_str() {
        "delivered" => theme.ok,
        "dropped" => theme.bad,
        _ => theme.warn,
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(arrow, theme.accent),
        Span::styled(crate::text::inert_line(other).into_owned(), theme.accent),
        Span::styled(format!("  {at}  "), theme.dim),
        Span::styled(m.state.clone(), state),
        Span::styled(format!("  {}", m.id), theme.dim),
    ])];
    let body: Vec<&str> = m.body.lines().collect();
    for text in body.iter().take(BODY_LINES) {
        lines.push(Line::raw(format!("  {}", crate::text::inert_line(text))));
    }
    if body.len() > BODY_LINES {
        lines.push(Line::from(Span::styled(
            format!("  … {} more lines: agents mail read {}", body.len() - BODY_LINES, m.id),
            theme.dim,
        )));
    }
    lines
}
