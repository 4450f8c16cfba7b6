//! What the harness's input line holds, read from its screen: empty, the
//! user's draft, or unknown. Nothing `agents` types may join a draft, so a
//! prompt is held while one is there (`supervise::typing`). Pure: the
//! screen's rows in, a reading out; where the input is comes from each
//! family's `[input]` rule (`screens/`).

use super::screen_rules::InputRule;

/// One row of the screen: its text, and the same text with every cell the
/// program drew dim blanked (a placeholder is drawn dim; the user's own
/// typing never is), column for column.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScreenRow {
    pub text: String,
    pub user: String,
}

impl ScreenRow {
    /// A row with no dim cells.
    pub fn plain(text: &str) -> ScreenRow {
        ScreenRow {
            text: text.to_string(),
            user: text.to_string(),
        }
    }
}

/// What the input line holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputLine {
    Empty,
    /// The user's text, its lines joined by `\n`.
    Draft(String),
    /// No rule for the family, or the screen shows no input line now (a
    /// dialog over it, another screen).
    Unknown,
}

/// The screen of `term` as rows with their user text.
pub fn rows_of(term: &crate::term::Terminal) -> Vec<ScreenRow> {
    use crate::protocol::screen::flag;
    let (rows, _) = term.size();
    let mut cells = Vec::new();
    (0..rows)
        .map(|i| {
            term.row_cells(i, &mut cells);
            let mut row = ScreenRow::default();
            for cell in cells
                .iter()
                .filter(|c| c.glyph != crate::protocol::screen::Glyph::Continuation)
            {
                let text = match cell.text() {
                    "" => " ",
                    t => t,
                };
                row.text.push_str(text);
                if cell.style.flags & flag::DIM != 0 {
                    row.user.extend(std::iter::repeat_n(' ', text.chars().count()));
                } else {
                    row.user.push_str(text);
                }
            }
            row
        })
        .collect()
}

/// Frame characters a boxed input line starts with.
const FRAME: &[char] = &['│', '┃', '║'];

/// Reads the input line of a screen by `rule`; `cursor` is `(row, col)`.
pub fn read(rule: Option<&InputRule>, rows: &[ScreenRow], cursor: (u16, u16)) -> InputLine {
    let Some(rule) = rule else {
        return InputLine::Unknown;
    };
    if let Some(marker) = rule.marker.as_deref().filter(|m| !m.trim().is_empty()) {
        return by_marker(rule, marker, rows, cursor);
    }
    if let Some(title) = rule.below.as_deref().filter(|t| !t.trim().is_empty()) {
        return below_title(rule, title, rows);
    }
    at_shell_prompt(rule, rows, cursor)
}

/// The last row among the bottom `within` non-blank ones that starts with
/// the marker (on the cursor's row, with `at_cursor`): what follows it, and
/// the box's further rows.
fn by_marker(rule: &InputRule, marker: &str, rows: &[ScreenRow], cursor: (u16, u16)) -> InputLine {
    let used: Vec<usize> = (0..rows.len()).filter(|&i| !rows[i].text.trim().is_empty()).collect();
    let window = &used[used.len().saturating_sub(rule.within)..];
    let Some((at, skip)) = window.iter().rev().find_map(|&i| {
        let row = &rows[i].text;
        // A box may stand indented (Grok's): blanks, its frame, blanks.
        let start = row.len() - row.trim_start().trim_start_matches(FRAME).trim_start().len();
        row[start..]
            .starts_with(marker)
            .then(|| (i, row[..start + marker.len()].chars().count()))
    }) else {
        return InputLine::Unknown;
    };
    if rule.at_cursor && usize::from(cursor.0) != at {
        return InputLine::Unknown;
    }
    let mut lines = vec![after(&rows[at].user, skip)];
    if let Some(ends) = &rule.box_ends {
        for row in &rows[at + 1..] {
            let text = row.text.trim_start_matches(FRAME).trim();
            let closes = if ends.is_empty() {
                text.is_empty()
            } else {
                text.starts_with(ends.as_str())
            };
            if closes {
                break;
            }
            lines.push(after(&row.user, 0));
        }
    }
    draft_of(rule, lines)
}

/// The box under the last row holding `title` among the bottom `within`
/// non-blank ones: its rows with text in their frame, up to the first
/// without.
fn below_title(rule: &InputRule, title: &str, rows: &[ScreenRow]) -> InputLine {
    let used: Vec<usize> = (0..rows.len()).filter(|&i| !rows[i].text.trim().is_empty()).collect();
    let window = &used[used.len().saturating_sub(rule.within)..];
    let Some(&at) = window.iter().rev().find(|&&i| rows[i].text.contains(title)) else {
        return InputLine::Unknown;
    };
    let inside = |row: &ScreenRow| row.text.trim().trim_matches(FRAME).trim().to_string();
    let lines = rows[at + 1..]
        .iter()
        .skip_while(|r| inside(r).is_empty())
        .take_while(|r| !inside(r).is_empty())
        .map(|r| after(&r.user, 0).trim_start_matches(FRAME).trim().to_string())
        .collect();
    draft_of(rule, lines)
}

/// The cursor's row after the first prompt end on it (`$ `): a shell's
/// command line.
fn at_shell_prompt(rule: &InputRule, rows: &[ScreenRow], cursor: (u16, u16)) -> InputLine {
    let Some(row) = rows.get(usize::from(cursor.0)) else {
        return InputLine::Unknown;
    };
    let found = rule
        .prompt_ends
        .iter()
        .filter(|end| !end.trim().is_empty())
        .filter_map(|end| row.text.find(end.as_str()).map(|at| at + end.len()))
        .min();
    match found {
        Some(end) => draft_of(rule, vec![after(&row.user, row.text[..end].chars().count())]),
        None => InputLine::Unknown,
    }
}

/// The user's text of a row from column `skip` on, without its frame.
fn after(user: &str, skip: usize) -> String {
    let rest: String = user.chars().skip(skip).collect();
    rest.trim_end().trim_end_matches(FRAME).trim().to_string()
}

fn draft_of(rule: &InputRule, lines: Vec<String>) -> InputLine {
    let text = lines
        .iter()
        .map(|l| l.as_str())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    if text.is_empty() || rule.placeholders.iter().any(|p| text == p.trim()) {
        InputLine::Empty
    } else {
        InputLine::Draft(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(toml: &str) -> InputRule {
        toml::from_str(toml).unwrap()
    }

    fn rows(text: &str) -> Vec<ScreenRow> {
        text.lines().map(ScreenRow::plain).collect()
    }

    #[test]
    fn a_boxed_input_is_read_to_its_closing_rule_and_older_prompts_above_are_not_it() {
        let claude = rule("marker = \"❯\"\nbox_ends = \"─\"\n");
        let screen = rows("❯ an older prompt\n● reply\n────\n❯ my draft\n  its second line\n────\n  ? for shortcuts");
        assert_eq!(
            read(Some(&claude), &screen, (0, 0)),
            InputLine::Draft("my draft\nits second line".into())
        );
        let empty = rows("❯ an older prompt\n● reply\n────\n❯\u{a0}\n────\n  ? for shortcuts");
        assert_eq!(read(Some(&claude), &empty, (0, 0)), InputLine::Empty);
        assert_eq!(read(None, &screen, (0, 0)), InputLine::Unknown);
    }

    #[test]
    fn an_input_without_a_glyph_is_the_box_under_its_title() {
        let nanocoder = rule("below = \"help with?\"\nwithin = 12\nplaceholders = [\"> / commands\"]\n");
        let screen = |input: &str| {
            rows(&format!(
                "You:\n┃ an older prompt\nWhat would you like me to help with?\n┃\n{input}┃\n\n▶ normal mode on"
            ))
        };
        assert_eq!(
            read(Some(&nanocoder), &screen("┃ my draft\n┃ its second line\n"), (0, 0)),
            InputLine::Draft("my draft\nits second line".into())
        );
        assert_eq!(
            read(Some(&nanocoder), &screen("┃ > / commands\n"), (0, 0)),
            InputLine::Empty
        );
        let asking = rows("Do you want to execute tool \"execute_bash\"?\n> ✓ Yes, execute this tool");
        assert_eq!(read(Some(&nanocoder), &asking, (0, 0)), InputLine::Unknown);
    }

    #[test]
    fn dim_text_and_a_coloured_placeholder_are_not_the_user_s() {
        let codex = rule("marker = \"›\"\nbox_ends = \"\"\nplaceholders = [\"Type your message\"]\n");
        let placeholder = ScreenRow {
            text: "› Ask Codex to do anything".into(),
            user: "›                         ".into(),
        };
        assert_eq!(read(Some(&codex), &[placeholder], (0, 0)), InputLine::Empty);
        assert_eq!(
            read(Some(&codex), &rows("› Type your message"), (0, 0)),
            InputLine::Empty
        );
        let two = rows("› first\n  second\n\n  model · /tmp");
        assert_eq!(
            read(Some(&codex), &two, (0, 0)),
            InputLine::Draft("first\nsecond".into())
        );
    }

    #[test]
    fn a_shell_s_command_line_follows_its_prompt_on_the_cursor_s_row() {
        let shell = rule("prompt_ends = [\"$ \", \"# \"]\n");
        let screen = rows("user@host:~$ ls\nfile\nuser@host:~$ echo half");
        assert_eq!(
            read(Some(&shell), &screen, (2, 23)),
            InputLine::Draft("echo half".into())
        );
        assert_eq!(read(Some(&shell), &rows("user@host:~$ "), (0, 13)), InputLine::Empty);
        assert_eq!(read(Some(&shell), &rows("compiling…"), (0, 10)), InputLine::Unknown);
    }

    #[test]
    fn a_marker_that_must_be_at_the_cursor_is_unknown_elsewhere() {
        let demo = rule("marker = \">\"\nat_cursor = true\n");
        let screen = rows("> hello\nthinking ✻");
        assert_eq!(read(Some(&demo), &screen, (1, 10)), InputLine::Unknown);
        assert_eq!(
            read(Some(&demo), &rows("> hello\nreply\n> half"), (2, 6)),
            InputLine::Draft("half".into())
        );
    }
}
