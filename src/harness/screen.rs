//! What a harness's screen says about it: a permission or trust prompt
//! waiting for an answer. Pure: screen lines in, a finding out. Hooks, when a
//! harness has them, are stronger evidence (docs/design.md §7); the screen is what
//! every harness has.

use super::screen_rules::ScreenRules;
use crate::api::ActivityStatus;
pub use crate::protocol::supervisor::{RuleRef, ScreenFinding};

/// Looks at the bottom of the screen (a prompt is always near the cursor)
/// for a question followed by a numbered choice, else for the harness of
/// `family` saying it is not logged in (`login.rs`), by the built-in rules
/// (`screens/`).
pub fn waiting_on(lines: &[String], family: &str) -> Option<ScreenFinding> {
    waiting_on_with(ScreenRules::built_in(), lines, family)
}

/// [`waiting_on`] by the rules given (the built-in ones and the user's).
pub fn waiting_on_with(rules: &ScreenRules, lines: &[String], family: &str) -> Option<ScreenFinding> {
    question(rules, lines).or_else(|| super::login::problem(rules, lines, family))
}

impl ScreenFinding {
    pub fn is_login_problem(&self) -> bool {
        self.why.starts_with(super::login::LOGIN_WHY)
    }
}

fn question(rules: &ScreenRules, lines: &[String]) -> Option<ScreenFinding> {
    open_question_rule(rules, lines)
        .or_else(|| choice_row_question(rules, lines))
        .or_else(|| choice_list_question(rules, lines))
        .map(|(at, why, rule)| ScreenFinding {
            status: ActivityStatus::NeedsApproval,
            why: why.to_string(),
            question: Some(question_text(&lines[at..])),
            rule: Some(rule),
        })
}

/// Where a rule found a question, its words, and the rule.
type Found<'r> = (usize, &'r str, RuleRef);

/// The longest question a finding carries: a few lines of a dialog.
const QUESTION_BYTES: usize = 2048;

/// A question's lines without their frame, blank ones dropped, bounded.
fn question_text(lines: &[String]) -> String {
    let mut text = String::new();
    for line in lines.iter().map(|l| bare(l).trim_end()).filter(|l| !l.is_empty()) {
        if text.len() + line.len() + 1 > QUESTION_BYTES {
            break;
        }
        text.push_str(line);
        text.push('\n');
    }
    text.trim_end().to_string()
}

/// The row of `lines` where the question still waiting for an answer
/// starts, and what kind of prompt it is: the TUI's peek shows the run's
/// question from there.
pub fn open_question(lines: &[String]) -> Option<(usize, &'static str)> {
    open_question_with(ScreenRules::built_in(), lines)
}

fn open_question_with<'r>(rules: &'r ScreenRules, lines: &[String]) -> Option<(usize, &'r str)> {
    open_question_rule(rules, lines).map(|(at, why, _)| (at, why))
}

fn open_question_rule<'r>(rules: &'r ScreenRules, lines: &[String]) -> Option<Found<'r>> {
    // The bottom of what is drawn, not of the window: blank rows below the
    // last text do not count.
    let used = lines.iter().rposition(|l| !l.trim().is_empty()).map_or(0, |i| i + 1);
    let from = used.saturating_sub(24);
    let tail = &lines[from..used];
    for (i, line) in tail.iter().enumerate() {
        for q in &rules.questions {
            if line.contains(q.says.as_str()) && is_open(rules, &tail[i + 1..]) {
                return Some((from + i, q.why.as_str(), q.source.rule("question", &q.says)));
            }
        }
    }
    None
}

/// A question whose choices sit on one row, unnumbered, chosen with the
/// arrows and Enter (opencode's, Crush's): its title, then a row holding
/// every choice, or the title's own row (`Allow it? [y/n]`) — for one
/// drawn at the bottom, followed by nothing but blank or frame rows (a key
/// hint may share the row).
fn choice_row_question<'r>(rules: &'r ScreenRules, lines: &[String]) -> Option<Found<'r>> {
    let used = lines.iter().rposition(|l| !bare(l).is_empty()).map_or(0, |i| i + 1);
    let from = used.saturating_sub(24);
    for q in &rules.choice_rows {
        let Some(at) = (from..used).rev().find(|&i| lines[i].contains(q.title.as_str())) else {
            continue;
        };
        // The choices may share the title's row: a one-line `[y/n]` question.
        let row = (at..used).find(|&i| q.choices.iter().all(|c| lines[i].contains(c.as_str())));
        if row.is_some_and(|r| !q.at_bottom || lines[r + 1..used].iter().all(|l| bare(l).is_empty())) {
            return Some((at, q.why.as_str(), q.source.rule("choice_row", &q.title)));
        }
    }
    None
}

/// A question whose unnumbered choices stand one a row in a box, the
/// first selected, with a key hint below (Factory Droid's `Command to
/// approve` … `Yes, allow` … `No, cancel`, `↑↓ navigate   Enter select
/// Esc cancel`): its last choice at the bottom, followed by nothing but
/// frame rows and the hint (or rows of `open_while`, Continue's status). The question starts at its title when one is
/// near above its choices.
fn choice_list_question<'r>(rules: &'r ScreenRules, lines: &[String]) -> Option<Found<'r>> {
    let used = lines.iter().rposition(|l| !bare(l).is_empty()).map_or(0, |i| i + 1);
    let from = used.saturating_sub(24);
    for q in &rules.choice_lists {
        let Some(end) = (from..used)
            .rev()
            .find(|&i| bare(&lines[i]).starts_with(q.last.as_str()))
        else {
            continue;
        };
        let Some(start) =
            (end.saturating_sub(6).max(from)..end).find(|&i| bare(&lines[i]).starts_with(q.first.as_str()))
        else {
            continue;
        };
        let after_is_hint = lines[end + 1..used].iter().map(|l| bare(l)).all(|l| {
            let l = l.to_lowercase();
            l.is_empty() || l.contains("esc") || rules.open_while.iter().any(|w| l.contains(w.as_str()))
        });
        if after_is_hint {
            let at = (start.saturating_sub(12).max(from)..start)
                .rev()
                .find(|&i| lines[i].contains(q.title.as_str()))
                .unwrap_or(start);
            return Some((at, q.why.as_str(), q.source.rule("choice_list", &q.first)));
        }
    }
    None
}

/// The question is still open when numbered choices follow it and nothing
/// but the key hint comes after them: output below the choices means it was
/// answered (and the screen merely still shows it).
fn is_open(rules: &ScreenRules, after: &[String]) -> bool {
    if !has_choices(after) {
        return false;
    }
    let last_choice = after.iter().rposition(|l| is_choice(l)).unwrap_or(0);
    after[last_choice + 1..]
        .iter()
        .map(|l| bare(l))
        .filter(|l| !l.is_empty())
        .all(|l| {
            let l = l.to_lowercase();
            l.contains("esc") || l.contains("enter") || rules.open_while.iter().any(|w| l.contains(w.as_str()))
        })
}

/// A line without the frame around it (Gemini draws its questions in a
/// box: `│ ● 1. Allow once │`) and without the selection marker.
pub(super) fn bare(line: &str) -> &str {
    const FRAME: &[char] = &['│', '┃', '╭', '╮', '╰', '╯', '─', ' '];
    line.trim_matches(FRAME).trim_start_matches(['❯', '›', '>', '●', ' '])
}

fn is_choice(line: &str) -> bool {
    let t = bare(line);
    t.chars().next().is_some_and(|c| c.is_ascii_digit()) && (t.contains(". ") || t.contains(") "))
}

/// A selectable option list: `❯ 1. Yes`, `› 1. Trust`, `> 1.` …
fn has_choices(lines: &[String]) -> bool {
    lines.iter().take(12).any(|l| {
        let t = bare(l);
        t.starts_with("1.") || t.starts_with("1)")
    })
}

/// The screens each family's rules were made from, and what they must be
/// read as, are `screens/`'s fixtures (`screen_rules`' tests).
/// The screens each family's rules were made from, and what each must be
/// read as, are the fixtures of `screens/` (`screen_rules`' tests).
#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    /// Questions look the same whoever asks.
    fn waiting_on_any(lines: &[String]) -> Option<ScreenFinding> {
        waiting_on(lines, "cmd")
    }

    #[test]
    fn a_prompt_at_the_top_of_a_tall_mostly_empty_screen_is_found() {
        let mut screen = lines(" Do you want to proceed?\n ❯ 1. Yes\n   2. No");
        screen.extend(std::iter::repeat_n(String::new(), 60));
        assert!(waiting_on_any(&screen).is_some());
    }
}
