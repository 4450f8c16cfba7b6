//! The Mail tab: the newest messages to and from the selected run — or,
//! on a team's heading, between the team's members and anyone — each with
//! who wrote to whom, when, where its delivery stands and its body: an
//! agent's words, made inert before they are drawn.

use ratatui::text::{Line, Span};

use super::app::App;
use super::view::Theme;
use crate::api::{MailListParams, MailRecord};

/// How many messages the tab reads (newest first).
pub const NEWEST: usize = 50;

/// The most lines of one body the tab draws; `agents mail read ID` has it whole.
const BODY_LINES: usize = 8;

/// Whose mail the tab shows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MailOf {
    /// A run's, by id.
    Run(String),
    /// A team's, by name.
    Team(String),
}

impl MailOf {
    pub fn params(&self) -> MailListParams {
        let (run, team) = match self {
            MailOf::Run(id) => (Some(id.clone()), None),
            MailOf::Team(name) => (None, Some(name.clone())),
        };
        MailListParams {
            run,
            team,
            limit: Some(NEWEST),
        }
    }
}

/// The team whose heading is selected, else the selected run `run`.
pub fn of_selected(app: &App, run: String) -> MailOf {
    let heading = app.tree.rows.get(app.tree.selected).is_some_and(|r| r.team.is_some());
    let team = app
        .teams
        .iter()
        .find(|t| t.members.iter().any(|m| m.leader && m.run.id == run));
    match (heading, team) {
        (true, Some(team)) => MailOf::Team(team.name.clone()),
        _ => MailOf::Run(run),
    }
}

/// A run changed: forget its mail and its team's. Whether any was loaded.
pub fn forget(app: &mut App, run: &str) -> bool {
    let teams: Vec<MailOf> = app
        .teams
        .iter()
        .filter(|t| t.members.iter().any(|m| m.run.id == run))
        .map(|t| MailOf::Team(t.name.clone()))
        .collect();
    let before = app.side.mail.len();
    app.side
        .mail
        .retain(|of, _| *of != MailOf::Run(run.to_string()) && !teams.contains(of));
    app.side.mail.len() != before
}

pub fn lines<'a>(app: &App, of: &MailOf, theme: &Theme) -> Vec<Line<'a>> {
    let (whose, to) = match of {
        MailOf::Run(id) => {
            let name = app.run(id).map_or(id.as_str(), |r| r.name.as_str()).to_string();
            (format!("to or from {name}"), name)
        }
        MailOf::Team(name) => (format!("in team {name}"), format!("{name}/leader")),
    };
    match app.side.mail.get(of) {
        None => vec![Line::from(Span::styled("reading mail…", theme.dim))],
        Some(Err(e)) => vec![Line::from(Span::styled(format!("mail not read: {e}"), theme.warn))],
        Some(Ok(list)) if list.is_empty() => vec![Line::from(Span::styled(
            format!("no mail {whose} — agents mail send {to} TEXT"),
            theme.dim,
        ))],
        Some(Ok(list)) => {
            let mut lines = vec![Line::from(Span::styled(
                format!("{} message(s) {whose}, newest first", list.len()),
                theme.dim,
            ))];
            for m in list {
                lines.push(Line::raw(""));
                lines.extend(message(m, of, theme));
            }
            lines
        }
    }
}

/// `→ critic  12:03:10  delivered` (or `← lead`; in a team's view
/// `lead → critic`), then the body.
fn message<'a>(m: &MailRecord, of: &MailOf, theme: &Theme) -> Vec<Line<'a>> {
    let (arrow, other) = match of {
        MailOf::Run(run) if m.to == *run => ("← ".to_string(), m.from_name.as_str()),
        MailOf::Run(_) => ("→ ".to_string(), m.to_name.as_str()),
        MailOf::Team(_) => (
            format!("{} → ", crate::text::inert_line(&m.from_name)),
            m.to_name.as_str(),
        ),
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
