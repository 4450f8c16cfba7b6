//! The Changes tab (docs/design.md §9): a worktree run's files, then its
//! hunks, coloured and scrollable. `}` / `{` move the hunk cursor, `c`
//! quotes the hunk into the composer for the agent, `M` merges the branch
//! into the one it started from (asked first). The head (summary, keys,
//! notes) is wrapped here, to the panel's width, and the diff's lines are
//! cut, so a hunk's place in the panel is its line number.

use std::collections::HashMap;

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::app::{App, Overlay, Panel, Tab};
use super::form::Composer;
use super::keymap::{Action, Keymap};
use super::view::Theme;
use super::wrap::wrapped;
use crate::api::Changes;
use crate::worktree::diff::{self, FileDiff};

/// The most lines of a hunk a comment quotes.
const QUOTE_LINES: usize = 200;

/// What the tab knows of each run it was asked about.
#[derive(Default)]
pub struct ChangesTab {
    /// The run's changes with their hunks, or why there are none.
    pub loaded: HashMap<String, Result<Loaded, String>>,
    /// The hunk under the cursor, counted over all the files of the run
    /// `hunk_of` (another run's cursor starts at its first hunk).
    pub hunk: usize,
    pub hunk_of: Option<String>,
}

impl ChangesTab {
    /// The cursor's hunk for `run`.
    pub fn cursor(&self, run: &str) -> usize {
        match self.hunk_of.as_deref() == Some(run) {
            true => self.hunk,
            false => 0,
        }
    }
}

pub struct Loaded {
    pub changes: Changes,
    pub files: Vec<FileDiff>,
}

impl Loaded {
    pub fn new(changes: Changes) -> Loaded {
        let files = diff::parse(&changes.diff);
        Loaded { changes, files }
    }

    pub fn hunks(&self) -> usize {
        self.files.iter().map(|f| f.hunks.len()).sum()
    }

    /// The file and hunk at `index` over all files.
    pub fn hunk(&self, index: usize) -> Option<(&FileDiff, &diff::Hunk)> {
        self.files
            .iter()
            .flat_map(|f| f.hunks.iter().map(move |h| (f, h)))
            .nth(index)
    }

    /// What the composer starts with for a comment on hunk `index`: the
    /// hunk quoted, the comment to be written below it.
    pub fn quote(&self, index: usize) -> Option<String> {
        let (file, hunk) = self.hunk(index)?;
        // Typed into the agent's terminal: its own bytes made inert, and a
        // huge hunk cut, so the comment stays a message.
        let mut body: Vec<String> = hunk.lines.iter().take(QUOTE_LINES).map(|l| safe(l)).collect();
        if hunk.lines.len() > QUOTE_LINES {
            body.push(format!("… ({} more lines)", hunk.lines.len() - QUOTE_LINES));
        }
        Some(format!(
            "About this change in {}:\n```diff\n{}\n{}\n```\n",
            safe(&file.path),
            safe(&hunk.header),
            body.join("\n")
        ))
    }
}

impl App {
    /// The selected run's loaded changes.
    fn selected_changes(&self) -> Option<(String, &Loaded)> {
        let id = self.selected_run()?.id.clone();
        let loaded = self.side.changes.loaded.get(&id)?.as_ref().ok()?;
        Some((id, loaded))
    }

    /// `}` / `{`: the next or previous hunk, scrolled to the top of the
    /// panel; from another tab, the Changes tab at its first hunk.
    pub(super) fn move_hunk(&mut self, by: isize) {
        if self.side.tab != Tab::Changes {
            self.side.tab = Tab::Changes;
            self.panel = Panel::Side;
            self.side.scroll = 0;
            self.side.changes.hunk_of = None;
            self.want_tab_data();
            return;
        }
        let Some((id, loaded)) = self.selected_changes() else {
            self.message = Some("no changes to move through".into());
            return;
        };
        let count = loaded.hunks();
        if count == 0 {
            self.message = Some("no hunks: nothing changed yet".into());
            return;
        }
        let to = (self.side.changes.cursor(&id) as isize + by).clamp(0, count as isize - 1) as usize;
        let width = self
            .measured
            .side
            .map_or(usize::MAX, |[_, _, w, _]| usize::from(w.saturating_sub(2)));
        let (_, starts) = lines(loaded, to, &self.keymap, &Theme::new(true), width);
        // One line of what came before, for its file's name.
        self.side.scroll = u16::try_from(starts[to].saturating_sub(1)).unwrap_or(u16::MAX);
        self.side.changes.hunk = to;
        self.side.changes.hunk_of = Some(id);
    }

    /// `c`: the composer, the cursor's hunk quoted, for a comment to the agent.
    pub(super) fn comment_on_hunk(&mut self) {
        let Some(run) = self.selected_run().cloned() else {
            return;
        };
        if self.side.tab != Tab::Changes {
            self.message = Some(format!(
                "{} comments on a hunk of the Changes tab ({} reaches it)",
                self.keymap.key_of(Action::Comment),
                self.keymap.key_of(Action::NextHunk)
            ));
            return;
        }
        let quote = self
            .selected_changes()
            .and_then(|(id, loaded)| loaded.quote(self.side.changes.cursor(&id)));
        let Some(quote) = quote else {
            self.message = Some("no hunk to comment on".into());
            return;
        };
        if !run.state.is_live() {
            self.message = Some(format!("{} has ended: a comment needs a live run", run.name));
            return;
        }
        let mut composer = Composer::new(&run.id, &run.name);
        composer.paste(&quote);
        self.overlay.shown = Some(Overlay::Compose(Box::new(composer)));
    }

    /// What `runs.changes` answered for `run`; the cursor kept within it.
    pub(super) fn changes_read(&mut self, run: String, result: Result<Changes, String>) {
        let loaded = result.map(Loaded::new);
        let hunks = loaded.as_ref().map_or(0, Loaded::hunks);
        if self.selected_run().is_some_and(|r| r.id == run) {
            self.side.changes.hunk = self.side.changes.hunk.min(hunks.saturating_sub(1));
        }
        self.side.changes.loaded.insert(run, loaded);
    }

    /// What `runs.merge` did, said; the changes read again.
    pub(super) fn merged(&mut self, run: String, result: Result<crate::api::Merged, String>) {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        self.message = Some(match result {
            Ok(m) => format!(
                "merged {} ({} commit{}) into {} as {} ({}){}",
                m.branch,
                m.commits,
                plural(m.commits),
                m.into,
                super::app::short(&m.commit),
                m.how,
                match m.uncommitted {
                    0 => String::new(),
                    n => format!("; {n} uncommitted file{} left in its worktree", plural(n)),
                }
            ),
            Err(e) => format!("not merged: {e}"),
        });
        self.commands.push(super::app::Command::Changes(run));
    }

    /// `M`: asks before merging the run's branch into the one it began from.
    pub(super) fn ask_merge(&mut self) {
        let Some(run) = self.selected_run().cloned() else {
            return;
        };
        if run.worktree.is_none() {
            self.message = Some(format!("{} has no worktree: nothing to merge", run.name));
            return;
        }
        let Some((_, loaded)) = self.selected_changes() else {
            self.commands.push(super::app::Command::Changes(run.id.clone()));
            self.message = Some("reading its changes first: press again".into());
            return;
        };
        let c = &loaded.changes;
        let refusal = match &c.from {
            None => Some("it started on a detached HEAD: no branch to merge into".to_string()),
            Some(from) if c.merged => Some(format!("nothing to merge: {from} already has the work of {}", c.branch)),
            Some(_) if c.commits == 0 && c.uncommitted > 0 => Some(format!(
                "nothing committed on {} yet ({} uncommitted)",
                c.branch,
                files(c.uncommitted)
            )),
            Some(_) if c.commits == 0 => Some(format!("nothing to merge: {} has no commits yet", c.branch)),
            Some(_) => None,
        };
        if let Some(why) = refusal {
            self.message = Some(why);
            return;
        }
        self.overlay.shown = Some(Overlay::ConfirmMerge {
            run: run.id.clone(),
            branch: c.branch.clone(),
            into: c.from.clone().unwrap_or_default(),
        });
    }
}

/// The tab's lines in a panel `width` columns wide, and the line each
/// hunk's header is on.
pub fn lines(
    loaded: &Loaded,
    cursor: usize,
    keys: &Keymap,
    theme: &Theme,
    width: usize,
) -> (Vec<Line<'static>>, Vec<usize>) {
    let c = &loaded.changes;
    let mut out = wrapped(summary(c, theme), width);
    out.extend(wrapped(vec![Span::styled(hints(c, keys), theme.dim)], width));
    if let Some(note) = &c.note {
        out.extend(wrapped(vec![Span::styled(safe(note), theme.warn)], width));
    }
    if c.uncommitted > 0 {
        let said = format!("{} uncommitted (not part of a merge)", files(c.uncommitted));
        out.extend(wrapped(vec![Span::styled(said, theme.warn)], width));
    }
    if c.files.is_empty() {
        out.push(Line::styled("no changes yet", theme.dim));
    }
    for f in &c.files {
        let mark = match f.status.as_str() {
            "added" => "A",
            "deleted" => "D",
            "renamed" => "R",
            "untracked" => "?",
            _ => "M",
        };
        let mut spans = vec![
            Span::styled(format!("{mark} "), theme.accent),
            Span::raw(safe(&f.path)),
            Span::styled(format!(" +{}", f.added), theme.ok),
            Span::styled(format!(" -{}", f.removed), theme.bad),
        ];
        if f.uncommitted {
            spans.push(Span::styled(" uncommitted", theme.warn));
        }
        out.push(Line::from(spans));
    }
    if c.truncated {
        let said = "the diff is cut at 512 KiB: `agents diff` shows the files";
        out.extend(wrapped(vec![Span::styled(said, theme.warn)], width));
    }
    let mut starts = Vec::new();
    for file in &loaded.files {
        out.push(Line::default());
        out.push(Line::styled(format!("── {}", safe(&file.path)), theme.accent));
        if file.binary {
            out.push(Line::styled("binary file", theme.dim));
        }
        for hunk in &file.hunks {
            let here = starts.len() == cursor;
            starts.push(out.len());
            let (mark, style) = match here {
                true => ("▸ ", theme.selected),
                false => ("  ", theme.dim),
            };
            out.push(Line::styled(format!("{mark}{}", safe(&hunk.header)), style));
            out.extend(hunk.lines.iter().map(|l| diff_line(l, theme)));
        }
    }
    (out, starts)
}

/// `agents/w1 · 2 commits since 1a2b3c4`, or `agents/w1 · merged into
/// main` once there is nothing left to merge.
fn summary(c: &Changes, theme: &Theme) -> Vec<Span<'static>> {
    let said = match (&c.from, c.commits) {
        (Some(from), _) if c.merged => format!("merged into {from}"),
        (_, 1) => format!("1 commit since {}", c.base.get(..7).unwrap_or(&c.base)),
        (_, n) => format!("{n} commits since {}", c.base.get(..7).unwrap_or(&c.base)),
    };
    let removed = match c.worktree {
        Some(_) => "",
        None => " · worktree removed",
    };
    vec![
        Span::styled(safe(&c.branch), theme.accent.add_modifier(Modifier::BOLD)),
        Span::styled(format!(" · {said}{removed}"), theme.dim),
    ]
}

/// The keys of the tab, as configured: `M merge into main · { } hunks · c comment`.
fn hints(c: &Changes, keys: &Keymap) -> String {
    let merge = match &c.from {
        Some(_) if c.merged => "nothing left to merge".into(),
        Some(from) => format!("{} merge into {from}", keys.key_of(Action::Merge)),
        None => "started detached: nothing to merge into".into(),
    };
    format!(
        "{merge} · {} {} hunks · {} comment",
        keys.key_of(Action::PrevHunk),
        keys.key_of(Action::NextHunk),
        keys.key_of(Action::Comment)
    )
}

fn files(n: usize) -> String {
    match n {
        1 => "1 file".into(),
        n => format!("{n} files"),
    }
}

fn diff_line(line: &str, theme: &Theme) -> Line<'static> {
    let style = match line.as_bytes().first() {
        Some(b'+') => theme.ok,
        Some(b'-') => theme.bad,
        Some(b'\\') => theme.dim,
        _ => ratatui::style::Style::default(),
    };
    Line::styled(safe(line), style)
}

/// The agent's text, unable to act on the terminal; tabs as spaces (an
/// escaped `\t` in code reads badly).
fn safe(s: &str) -> String {
    crate::text::inert_line(&s.replace('\t', "    ")).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded() -> Loaded {
        Loaded::new(Changes {
            branch: "agents/w".into(),
            base: "0123456789abcdef".into(),
            from: Some("main".into()),
            worktree: Some("/wt".into()),
            commits: 2,
            ahead: Some(2),
            merged: false,
            uncommitted: 0,
            note: None,
            files: vec![],
            diff: "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\x1b[2J\n@@ -9 +9 @@\n-c\n+d\n".into(),
            truncated: false,
        })
    }

    #[test]
    fn hunk_starts_follow_the_lines_and_a_quote_holds_the_hunk() {
        let l = loaded();
        assert_eq!(l.hunks(), 2);
        let (lines, starts) = lines(&l, 1, &Keymap::default(), &Theme::new(true), 80);
        assert_eq!(starts.len(), 2);
        let text = |i: usize| lines[i].spans.iter().map(|s| s.content.to_string()).collect::<String>();
        assert_eq!(text(starts[0]), "  @@ -1 +1 @@");
        assert_eq!(text(starts[1]), "▸ @@ -9 +9 @@");
        assert_eq!(text(starts[0] + 2), "+b\\x1b[2J", "made inert");
        let quote = l.quote(1).unwrap();
        assert!(
            quote.starts_with("About this change in x:\n```diff\n@@ -9 +9 @@\n"),
            "{quote}"
        );
        assert!(quote.contains("-c\n+d\n```"), "{quote}");
        assert_eq!(l.quote(2), None);
        assert!(
            l.quote(0).unwrap().contains("+b\\x1b[2J"),
            "typed into the agent made inert"
        );
    }
}
