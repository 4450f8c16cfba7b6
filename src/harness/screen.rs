//! What a harness's screen says about it: a permission or trust prompt
//! waiting for an answer. Pure: screen lines in, a finding out. Hooks, when a
//! harness has them, are stronger evidence (docs/design.md §7); the screen is what
//! every harness has.

use crate::api::ActivityStatus;
pub use crate::protocol::supervisor::ScreenFinding;

/// Questions that block an agent until a person answers, as the real CLIs
/// and the demo agent print them (see shared/reference/*/screens/).
const APPROVAL_QUESTIONS: &[(&str, &str)] = &[
    ("Do you want to proceed?", "screen shows a permission prompt"),
    ("Do you want to make this edit", "screen shows a permission prompt"),
    ("Do you want to create", "screen shows a permission prompt"),
    (
        "Would you like to run the following command?",
        "screen shows a command approval prompt",
    ),
    ("Allow command?", "screen shows a command approval prompt"),
    // Gemini CLI 0.61: `Allow execution of [Shell]?`, `Allow edit?`…
    ("Allow execution of", "screen shows a permission prompt"),
    // GitHub Copilot CLI 1.0 asks in a box, "❯ 1. Yes" below: a command
    // ("Do you want to run this command?"), a file operation ("Do you want
    // to edit FILE?", also create, write, delete, update, move and update),
    // a tool, a path, a URL (as its source words them).
    (
        "Do you want to run this command",
        "screen shows a command approval prompt",
    ),
    ("Do you want to allow this", "screen shows a permission prompt"),
    ("Do you want to use this tool?", "screen shows a permission prompt"),
    ("Do you want to edit", "screen shows a permission prompt"),
    ("Do you want to modify", "screen shows a permission prompt"),
    ("Do you want to write", "screen shows a permission prompt"),
    ("Do you want to delete", "screen shows a permission prompt"),
    ("Do you want to update", "screen shows a permission prompt"),
    ("Do you want to move and update", "screen shows a permission prompt"),
    ("Do you want to perform", "screen shows a permission prompt"),
    ("Do you want to read this path", "screen shows a permission prompt"),
    ("Do you want to approve this", "screen shows a permission prompt"),
    ("Do you want to ignore the policy", "screen shows a permission prompt"),
    ("Trust this folder?", "screen shows a folder trust prompt"),
    // Claude Code 2.1: "Quick safety check: Is this a project you created
    // or one you trust? … ❯ 1. Yes, I trust this folder".
    (
        "Is this a project you created or one you trust?",
        "screen shows a folder trust prompt",
    ),
    (
        "Do you trust the files in this folder?",
        "screen shows a folder trust prompt",
    ),
];

/// Looks at the bottom of the screen (a prompt is always near the cursor)
/// for a question followed by a numbered choice, else for the harness of
/// `family` saying it is not logged in (`login.rs`).
pub fn waiting_on(lines: &[String], family: &str) -> Option<ScreenFinding> {
    question(lines).or_else(|| super::login::problem(lines, family))
}

impl ScreenFinding {
    pub fn is_login_problem(&self) -> bool {
        self.why.starts_with(super::login::LOGIN_WHY)
    }
}

fn question(lines: &[String]) -> Option<ScreenFinding> {
    open_question(lines)
        .or_else(|| choice_row_question(lines))
        .or_else(|| choice_list_question(lines))
        .map(|(at, why)| ScreenFinding {
            status: ActivityStatus::NeedsApproval,
            why: why.to_string(),
            question: Some(question_text(&lines[at..])),
        })
}

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
    // The bottom of what is drawn, not of the window: blank rows below the
    // last text do not count.
    let used = lines.iter().rposition(|l| !l.trim().is_empty()).map_or(0, |i| i + 1);
    let from = used.saturating_sub(24);
    let tail = &lines[from..used];
    for (i, line) in tail.iter().enumerate() {
        for (question, why) in APPROVAL_QUESTIONS {
            if line.contains(question) && is_open(&tail[i + 1..]) {
                return Some((from + i, why));
            }
        }
    }
    None
}

/// Questions whose choices sit on one row, unnumbered, chosen with the
/// arrows and Enter: the title, words the choice row holds, and whether
/// the row is the last thing drawn while it waits (a dialog at the bottom;
/// else one drawn over the conversation). opencode 1.18: `△ Permission
/// required` … `Allow once   Allow always   Reject`, at the bottom. Crush
/// (from its source, not a recording): a `Permission Required` dialog in
/// the middle, `Allow  Allow for Session  Deny`.
const CHOICE_ROW_QUESTIONS: &[(&str, &[&str], bool, &str)] = &[
    (
        "Permission required",
        &["Allow once", "Reject"],
        true,
        "screen shows a permission prompt",
    ),
    (
        "Permission Required",
        &["Allow for Session", "Deny"],
        false,
        "screen shows a permission prompt",
    ),
];

/// A question of `CHOICE_ROW_QUESTIONS` at the bottom of the screen, its
/// choice row followed by nothing but blank or frame rows (a key hint may
/// share the row).
fn choice_row_question(lines: &[String]) -> Option<(usize, &'static str)> {
    let used = lines.iter().rposition(|l| !bare(l).is_empty()).map_or(0, |i| i + 1);
    let from = used.saturating_sub(24);
    for (title, choices, last, why) in CHOICE_ROW_QUESTIONS {
        let Some(at) = (from..used).rev().find(|&i| lines[i].contains(title)) else {
            continue;
        };
        let row = (at + 1..used).find(|&i| choices.iter().all(|c| lines[i].contains(c)));
        if row.is_some_and(|r| !last || lines[r + 1..used].iter().all(|l| bare(l).is_empty())) {
            return Some((at, why));
        }
    }
    None
}

/// Questions whose unnumbered choices stand one a row in a box, the first
/// selected, with a key hint below: the first and last choice, the words
/// of its titles, and what kind of prompt it is. Factory Droid 0.225:
/// `Command to approve` (also `Fetch URL`, `MCP tool`, `Web Search … to
/// approve`) above `Yes, allow` … `No, cancel`, `↑↓ navigate   Enter
/// select   Esc cancel` under the box.
const CHOICE_LIST_QUESTIONS: &[(&str, &str, &str, &str)] = &[(
    "Yes, allow",
    "No, cancel",
    "to approve",
    "screen shows a permission prompt",
)];

/// A question of `CHOICE_LIST_QUESTIONS` at the bottom of the screen: its
/// last choice followed by nothing but frame rows and the key hint. The
/// question starts at its title when one is near above its choices.
fn choice_list_question(lines: &[String]) -> Option<(usize, &'static str)> {
    let used = lines.iter().rposition(|l| !bare(l).is_empty()).map_or(0, |i| i + 1);
    let from = used.saturating_sub(24);
    for (first, last, title, why) in CHOICE_LIST_QUESTIONS {
        let Some(end) = (from..used).rev().find(|&i| bare(&lines[i]).starts_with(last)) else {
            continue;
        };
        let Some(start) = (end.saturating_sub(6).max(from)..end).find(|&i| bare(&lines[i]).starts_with(first)) else {
            continue;
        };
        let after_is_hint = lines[end + 1..used].iter().map(|l| bare(l)).all(|l| {
            let l = l.to_lowercase();
            l.is_empty() || l.contains("esc")
        });
        if after_is_hint {
            let at = (start.saturating_sub(12).max(from)..start)
                .rev()
                .find(|&i| lines[i].contains(title))
                .unwrap_or(start);
            return Some((at, why));
        }
    }
    None
}

/// The question is still open when numbered choices follow it and nothing
/// but the key hint comes after them: output below the choices means it was
/// answered (and the screen merely still shows it).
fn is_open(after: &[String]) -> bool {
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
            // Qwen Code 0.24 spins "⠏ Waiting for user confirmation..."
            // below its choices while it waits.
            l.contains("esc") || l.contains("enter") || l.contains("waiting for user confirmation")
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

    /// As Gemini CLI 0.61.0 drew them (tmux `capture-pane`).
    #[test]
    fn gemini_s_boxed_permission_and_trust_prompts_are_recognised() {
        let shell = lines(concat!(
            " > SHELL now\n",
            "╭──────────────────────────────────────────╮\n",
            "│ ? Shell  touch perm-marker               │\n",
            "│ ╭──────────────────────────────────────╮ │\n",
            "│ │ touch perm-marker                    │ │\n",
            "│ ╰──────────────────────────────────────╯ │\n",
            "│ Allow execution of [Shell]?              │\n",
            "│                                          │\n",
            "│ ● 1. Allow once                          │\n",
            "│   2. Allow for this session              │\n",
            "│   3. No, suggest changes (esc)           │\n",
            "╰──────────────────────────────────────────╯\n",
        ));
        assert!(waiting_on_any(&shell).unwrap().why.contains("permission"));
        let trust = lines(concat!(
            " ╭──────────────────────────────────────────╮\n",
            " │ Do you trust the files in this folder?   │\n",
            " │                                          │\n",
            " │ ● 1. Trust folder (gproj)                │\n",
            " │   2. Trust parent folder (gx)            │\n",
            " │   3. Don't trust                         │\n",
            " │                                          │\n",
            " ╰──────────────────────────────────────────╯\n",
        ));
        assert!(waiting_on_any(&trust).unwrap().why.contains("trust"));
        let answered = lines(concat!(
            "│ Allow execution of [Shell]?              │\n",
            "│ ● 1. Allow once                          │\n",
            "╰──────────────────────────────────────────╯\n",
            "✦ Tool said: done\n",
        ));
        assert_eq!(waiting_on_any(&answered), None);
    }

    /// As opencode 1.18.33 drew it at 120x40 (tmux `capture-pane`), and
    /// once answered.
    #[test]
    fn opencode_s_one_row_permission_prompt_is_recognised() {
        let waiting = lines(concat!(
            "  ┃  SHELL please\n",
            "     $ touch perm-marker\n",
            "     ▣  Build · Mock Model\n",
            "\n",
            "  ┃  △ Permission required\n",
            "  ┃    # Shell command\n",
            "  ┃\n",
            "  ┃  $ touch perm-marker\n",
            "  ┃\n",
            "  ┃   Allow once   Allow always   Reject                ctrl+f fullscreen  ⇆ select  enter confirm\n",
            "  ┃\n",
        ));
        let found = waiting_on(&waiting, "opencode").unwrap();
        assert_eq!(found.status, ActivityStatus::NeedsApproval);
        assert!(found.question.unwrap().starts_with("△ Permission required"));
        let answered = lines(concat!(
            "  ┃  $ touch perm-marker\n",
            "  ┃  (no output)\n",
            "     Ran it.\n",
            "     ▣  Build · Mock Model · 15.0s\n",
            "  ┃  Build · Mock Model Mock\n",
        ));
        assert_eq!(waiting_on(&answered, "opencode"), None);
        let talk = lines("  ┃  why is Permission required here? Allow once or Reject?\n     ▣  Build\n");
        assert_eq!(waiting_on(&talk, "opencode"), None);
    }

    /// As Crush's source draws its dialog (no real Crush ran here): over
    /// the conversation, the buttons on one row.
    #[test]
    fn crush_s_permission_dialog_is_recognised_from_its_source_s_words() {
        let dialog = lines(concat!(
            "  > SHELL please\n",
            "  ╭──────────────────────────────────────────────╮\n",
            "  │ Permission Required                          │\n",
            "  │ Tool: bash                                   │\n",
            "  │ touch perm-marker                            │\n",
            "  │          Allow   Allow for Session   Deny    │\n",
            "  ╰──────────────────────────────────────────────╯\n",
            "  ctrl+p commands   ctrl+c quit\n",
        ));
        assert!(waiting_on(&dialog, "crush").unwrap().why.contains("permission"));
    }

    #[test]
    fn the_recorded_claude_permission_prompt_is_recognised() {
        let screen = lines(
            "❯ ASKPERM now\n● Bash(touch perm-marker)\n  ⎿  Waiting…\n──────\n Bash command\n   touch perm-marker\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and always allow\n   3. No\n Esc to cancel",
        );
        let found = waiting_on_any(&screen).unwrap();
        assert_eq!(found.status, ActivityStatus::NeedsApproval);
        assert!(found.why.contains("permission"));
    }

    #[test]
    fn the_recorded_codex_trust_prompt_is_recognised() {
        let screen = lines("  Folder access\n  Trust this folder? Codex can read\n› 1. Trust and continue\n  2. Back");
        assert!(waiting_on_any(&screen).unwrap().why.contains("trust"));
    }

    /// As Qwen Code 0.24.4 drew it (tmux `capture-pane`), its spinner below.
    #[test]
    fn qwen_s_permission_prompt_with_its_waiting_spinner_is_recognised() {
        let screen = lines(concat!(
            "  > SHELL please\n",
            "  ? Shell touch perm-marker (marker) ←\n",
            "\n",
            "     touch perm-marker\n",
            "\n",
            "   Allow execution of: 'touch'?\n",
            "\n",
            "   › 1. Yes, allow once\n",
            "     2. Always allow run 'touch *' commands in this project\n",
            "     3. Always allow run 'touch *' commands for this user\n",
            "     4. No, suggest changes (esc)\n",
            "\n",
            "\n",
            "  ⠏ Waiting for user confirmation...\n",
        ));
        let found = waiting_on_any(&screen).unwrap();
        assert_eq!(found.status, ActivityStatus::NeedsApproval);
        assert!(found.question.unwrap().starts_with("Allow execution of: 'touch'?"));
        let answered = lines("  ✓ Shell touch perm-marker (marker)\n\n  ◆︎ Ran it.\n>   Type your message");
        assert_eq!(waiting_on_any(&answered), None);
    }

    /// As Copilot CLI 1.0.102 drew its folder trust and command questions
    /// (tmux `capture-pane`, 120 columns, right edges cut here).
    #[test]
    fn copilot_s_boxed_trust_and_command_prompts_are_recognised() {
        let trust = lines(concat!(
            "╭──────────────────────────────────────────╮\n",
            "│ Confirm folder trust                     │\n",
            "│ Do you trust the files in this folder?   │\n",
            "│                                          │\n",
            "│ ❯ 1. Yes                                 │\n",
            "│   2. Yes, and remember this folder for future sessions │\n",
            "│   3. No (Esc)                            │\n",
            "│                                          │\n",
            "│ ↑/↓ to navigate · enter to select · esc to cancel │\n",
            "╰──────────────────────────────────────────╯\n",
        ));
        let found = waiting_on_any(&trust).unwrap();
        assert_eq!(found.why, "screen shows a folder trust prompt");
        let command = lines(concat!(
            " ❯ SHELL please                                  17:08 ┃\n",
            " $ Shell make a marker                                 ┃\n",
            "   touch perm-marker                                   ┃\n",
            "╭──────────────────────────────────────────╮\n",
            "│ make a marker                            │\n",
            "│ ╭──────────────────────────────────────╮ │\n",
            "│ │ touch perm-marker                    │ │\n",
            "│ ╰──────────────────────────────────────╯ │\n",
            "│ Do you want to run this command?         │\n",
            "│                                          │\n",
            "│ ❯ 1. Yes                                 │\n",
            "│   2. Yes, and don't ask again for `touch` in this repo (/tmp/clis/ws1) │\n",
            "│   3. No, and tell Copilot what to do differently (Esc to stop) │\n",
            "│                                          │\n",
            "│ ↑/↓ to navigate · enter to select · esc to cancel │\n",
            "╰──────────────────────────────────────────╯\n",
        ));
        let found = waiting_on(&command, "copilot").unwrap();
        assert_eq!(found.status, ActivityStatus::NeedsApproval);
        assert_eq!(found.why, "screen shows a command approval prompt");
        assert!(found.question.unwrap().starts_with("Do you want to run this command?"));
        let answered = lines(concat!(
            " $ Shell make a marker No Content               8s\n",
            "   touch perm-marker\n",
            " ● Ran it.\n",
            " /tmp/clis/ws1 [⎇ master%]\n",
            "────────────────\n",
            "❯\n",
            "────────────────\n",
            " ← open sidebar · Interactive · Manual Approval · / commands · ? help\n",
        ));
        assert_eq!(waiting_on(&answered, "copilot"), None);
    }

    /// As Droid 0.225.2 drew its command approval (tmux `capture-pane`, 120
    /// columns, right edges cut here).
    #[test]
    fn droid_s_approval_box_is_recognised_until_it_is_answered() {
        let asking = lines(concat!(
            "   SHELL please\n",
            "   Execute touch perm-marker\n",
            "  Command to approve · medium risk\n",
            "  ↳ touch perm-marker\n",
            "  Why this needs approval: creates a file\n",
            "╭──────────────────────────────────────────╮\n",
            "│  Yes, allow                              │\n",
            "│  Yes, and always allow medium impact commands (all commands that are reversible) │\n",
            "│  No, cancel                              │\n",
            "╰──────────────────────────────────────────╯\n",
            "  ↑↓ navigate   Enter select   Esc cancel   Alt/Option+E to inspect approval details\n",
        ));
        let found = waiting_on(&asking, "droid").unwrap();
        assert_eq!(found.status, ActivityStatus::NeedsApproval);
        assert!(found.question.unwrap().starts_with("Command to approve · medium risk"));
        let answered = lines(concat!(
            "   Execute touch perm-marker\n",
            "    ↳ Command completed successfully\n",
            "⛬  Ran it.\n",
            " Auto (Off) · all actions require approval                 Mock\n",
            "╭──────────────────────────────────────────╮\n",
            "│ >                                        │\n",
            "╰──────────────────────────────────────────╯\n",
            "? for help                                            TMUX ⧉\n",
        ));
        assert_eq!(waiting_on(&answered, "droid"), None);
        let trust = lines(concat!(
            "│ Trust this folder?                       │\n",
            "│ /tmp/clis/ws2                            │\n",
            "╰──────────────────────────────────────────╯\n",
            "> 1. Trust this folder\n",
            "  2. Exit without trusting\n",
            "Enter to confirm · Esc to exit\n",
        ));
        assert_eq!(
            waiting_on(&trust, "droid").unwrap().why,
            "screen shows a folder trust prompt"
        );
    }

    #[test]
    fn a_prompt_at_the_top_of_a_tall_mostly_empty_screen_is_found() {
        let mut screen = lines(" Do you want to proceed?\n ❯ 1. Yes\n   2. No");
        screen.extend(std::iter::repeat_n(String::new(), 60));
        assert!(waiting_on_any(&screen).is_some());
    }

    #[test]
    fn an_answered_question_still_on_screen_is_not_waiting() {
        let screen = lines(" Do you want to proceed?\n ❯ 1. Yes\n   2. No\n Esc to cancel\n  ⎿  approved\n> ");
        assert_eq!(waiting_on_any(&screen), None);
    }

    #[test]
    fn a_question_in_ordinary_output_is_not_a_prompt() {
        let screen = lines("the docs ask: Do you want to proceed? with care\nthen we compiled\n> ");
        assert_eq!(waiting_on_any(&screen), None);
    }
}
