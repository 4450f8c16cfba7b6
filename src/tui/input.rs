//! What each key, paste and mouse event does to the app (the input half
//! of `App`; `app.rs` holds the state and the daemon updates).

use base64::Engine;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};

use super::app::{App, Command, Mode, Overlay, Panel, Tab};
use super::copy::{CopyMode, CopyOutcome};
use super::form::{Composer, NewRunForm};
use super::keymap::Action;
use super::keys;
use crate::protocol::screen::mode;

impl App {
    pub fn handle(&mut self, event: Event) {
        self.only_typed = false;
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.key(key),
            Event::Paste(text) => self.paste(&text),
            Event::Mouse(m) => match m.kind {
                MouseEventKind::ScrollUp if !self.program_wants_mouse() => self.wheel(&m, 3),
                MouseEventKind::ScrollDown if !self.program_wants_mouse() => self.wheel(&m, -3),
                _ => self.mouse(&m),
            },
            Event::Resize(..) => self.panes.sizes.clear(),
            _ => {}
        }
        // Selecting a run that needs you is seeing it.
        self.retitle();
    }

    fn paste(&mut self, text: &str) {
        match (&mut self.overlay.shown, self.mode) {
            (Some(Overlay::Compose(c)), _) => c.paste(text),
            (Some(Overlay::NewRun(f)), _) => f.paste(text),
            (Some(Overlay::Peek(p)), _) => p.paste(text),
            (None, Mode::Insert) => {
                if let Some(run) = self.selected_run().map(|r| r.id.clone()) {
                    let bracketed = self
                        .panes
                        .screens
                        .get(&run)
                        .is_some_and(|s| s.mirror.modes.has(mode::BRACKETED_PASTE));
                    self.commands.push(Command::Input {
                        run,
                        bytes: crate::protocol::input::encode_paste(text, bracketed),
                    });
                    self.only_typed = true;
                }
            }
            _ => self.message = Some("nothing sent: a paste goes into the composer, or into a run in INSERT".into()),
        }
    }

    /// The wheel scrolls what is under the pointer: a pane's history, the
    /// side panel, or the tree's selection.
    fn wheel(&mut self, m: &crossterm::event::MouseEvent, lines: isize) {
        let within = |[x, y, w, h]: [u16; 4]| (x..x + w).contains(&m.column) && (y..y + h).contains(&m.row);
        if let Some((id, _, _)) = self.pane_at(m.column, m.row) {
            self.scroll_run(&id, lines);
        } else if self.measured.side.is_some_and(within) {
            self.scroll_side(-lines as i32);
        } else if self.measured.tree.is_some_and(|(rect, _)| within(rect)) {
            self.move_selection(-lines.signum());
        }
    }

    fn pane_at(&self, col: u16, row: u16) -> Option<(String, u16, u16)> {
        self.measured.panes.iter().find_map(|(id, [x, y, w, h])| {
            (col >= *x && col < x + w && row >= *y && row < y + h).then(|| (id.clone(), col - x, row - y))
        })
    }

    /// A click on a pane selects its run; in INSERT, mouse events go to a
    /// program that asked for them, in the pane's own coordinates.
    /// A click on a tree row selects its run; on a side tab's title, shows
    /// that tab. Either leaves INSERT.
    fn click_outside_panes(&mut self, col: u16, row: u16) -> bool {
        let within = |[x, y, w, h]: [u16; 4]| col >= x && col < x + w && row >= y && row < y + h;
        if let Some((rect, top)) = self.measured.tree
            && within(rect)
        {
            let i = top + usize::from(row - rect[1]);
            if self.tree.rows.get(i).is_some_and(|r| r.run.is_some()) {
                self.mode = Mode::Normal;
                self.tree.selected = i;
                self.panel = Panel::Tree;
                self.sync_subscriptions();
                self.want_tab_data();
            }
            return true;
        }
        if let Some([x, y, w, _]) = self.measured.side
            && row == y
            && col > x
            && col < x + w
        {
            // The titles follow the corner, each and a space.
            let mut at = x + 1;
            for (tab, title) in Tab::titles(self.side.tab, usize::from(w.saturating_sub(2))) {
                let end = at + title.chars().count() as u16;
                if col >= at && col < end {
                    self.mode = Mode::Normal;
                    self.side.tab = tab;
                    self.side.scroll = 0;
                    self.want_tab_data();
                    return true;
                }
                at = end + 1;
            }
        }
        false
    }

    fn mouse(&mut self, m: &crossterm::event::MouseEvent) {
        if matches!(m.kind, MouseEventKind::Down(crossterm::event::MouseButton::Left))
            && self.click_outside_panes(m.column, m.row)
        {
            return;
        }
        let Some((id, col, row)) = self.pane_at(m.column, m.row) else {
            return;
        };
        if self.mode == Mode::Normal {
            if matches!(m.kind, MouseEventKind::Down(_))
                && let Some(i) = self.tree.row_of(&id)
            {
                self.tree.selected = i;
                self.panel = Panel::Panes;
                self.sync_subscriptions();
            }
            return;
        }
        if self.selected_run().is_none_or(|r| r.id != id) {
            return;
        }
        let Some(screen) = self.panes.screens.get(&id) else {
            return;
        };
        if screen.mirror.modes.mouse == 0 {
            return;
        }
        let modes = keys::MouseModes {
            reporting: screen.mirror.modes.mouse,
            encoding: screen.mirror.modes.mouse_encoding,
        };
        if let Some(bytes) = keys::encode_mouse_in(m, col, row, modes) {
            self.commands.push(Command::Input { run: id, bytes });
        }
    }

    /// In INSERT, a program with mouse reporting on gets the wheel itself.
    fn program_wants_mouse(&self) -> bool {
        self.mode == Mode::Insert
            && self
                .selected_run()
                .and_then(|r| self.panes.screens.get(&r.id))
                .is_some_and(|s| s.mirror.modes.mouse != 0)
    }

    /// A page of the selected pane: its rows as last drawn, less the
    /// scrolled-back banner and one line kept in view.
    pub(super) fn pane_page(&self) -> isize {
        let rows = self
            .selected_run()
            .and_then(|r| self.panes.sizes.get(&r.id))
            .map_or(24, |(rows, _)| *rows as isize);
        (rows - 2).max(1)
    }

    pub(super) fn scroll_pane(&mut self, lines: isize) {
        let Some(run) = self.selected_run().map(|r| r.id.clone()) else {
            return;
        };
        self.scroll_run(&run, lines);
    }

    /// Scrolls run `run`'s pane back (`lines` > 0) or forward.
    fn scroll_run(&mut self, run: &str, lines: isize) {
        let run = run.to_string();
        let history_lines = self.panes.history_lines;
        if let Some(screen) = self.panes.screens.get_mut(&run) {
            let starts = screen.scroll == 0 && lines > 0;
            if starts && screen.mirror.history().len() == 0 && !screen.mirror.history_gap {
                self.message = Some("nothing above the screen to scroll back to".into());
                return;
            }
            // Never further back than there is, so PgDn returns at once
            // (unless rows are still to come from the log).
            let most = match screen.mirror.history_gap {
                true => usize::MAX / 2,
                false => screen.mirror.history().len(),
            };
            screen.scroll = (screen.scroll as isize + lines).clamp(0, most as isize) as usize;
            if screen.scroll == 0 {
                screen.unseen = 0;
            }
            if starts && screen.mirror.history_gap {
                // Rows that scrolled past faster than they were sent (a
                // flood): the log has them all.
                self.commands.push(screen.ask_history(&run, history_lines));
            }
        }
    }

    /// A run waiting at a question: approve (Y) or deny (N) from NORMAL.
    fn answer_selected(&mut self, yes: bool) {
        let waiting = self
            .selected_run()
            .filter(|r| r.state.is_live() && r.status == crate::api::ActivityStatus::NeedsApproval)
            .map(|r| (r.id.clone(), r.name.clone()));
        let Some((run, name)) = waiting else {
            self.message = Some("the selected run is not waiting for an approval".into());
            return;
        };
        let answer = if yes { "yes" } else { "no" };
        self.commands.push(Command::Answer {
            run,
            answer: answer.into(),
        });
        self.message = Some(format!("answered {answer} to {name}"));
    }

    fn key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if let Some(fullscreen) = self.prefix.take() {
            // Twice: the prefix itself, typed into the run.
            if self.keymap.is_prefix(&key) {
                self.mode = Mode::Insert;
                self.panes.fullscreen = fullscreen;
                self.message = None;
                self.type_key(&key);
                self.only_typed = false;
                return;
            }
            // `d` after it, as tmux detaches: already done.
            if key.code == KeyCode::Char('d') && key.modifiers.is_empty() {
                self.message = None;
                return;
            }
        }
        // The prefix leaves INSERT at once, visibly.
        if self.mode == Mode::Insert {
            if self.keymap.is_prefix(&key) {
                self.prefix = Some(self.panes.fullscreen);
                self.mode = Mode::Normal;
                self.panes.fullscreen = false;
                let p = self.keymap.prefix.to_string();
                self.message = Some(format!("back to NORMAL · {p} again types {p} into the run"));
                return;
            }
            self.type_key(&key);
            return;
        }
        if let Some(mut copy) = self.panes.copy.take() {
            match copy.key(key) {
                CopyOutcome::Keep => self.panes.copy = Some(copy),
                CopyOutcome::Exit => {}
                CopyOutcome::Copy(text) => self.copy_text(&text),
            }
            return;
        }
        if let Some(overlay) = self.overlay.shown.take() {
            self.overlay.shown = self.overlay_key(overlay, key);
            return;
        }
        if self.tree.filtering {
            if self.tree.filter_key(&key) {
                self.rebuild_tree();
            }
            return;
        }
        self.message = None;
        if ctrl && key.code == KeyCode::Char('c') {
            self.quit = true;
            return;
        }
        let Some(action) = self.keymap.action(&key) else { return };
        self.normal_action(action);
    }

    /// What a NORMAL-mode key's action does.
    fn normal_action(&mut self, action: Action) {
        match action {
            Action::Approve | Action::Deny => self.answer_selected(action == Action::Approve),
            Action::Peek => self.open_peek(),
            Action::Mark => self.toggle_mark(),
            // A kept filter goes first: it is the cheaper to make again.
            Action::ClearMarks if !self.tree.filter.is_empty() => {
                self.tree.filter.clear();
                self.rebuild_tree();
                self.message = Some("filter cleared".into());
            }
            Action::ClearMarks => self.clear_marks(),
            Action::Send if !self.tree.marked.is_empty() => self.compose_to_marked(),
            Action::NextUnseen => {
                if !self.next_unseen() {
                    self.message = Some("no run needs you".into());
                }
            }
            Action::Quit => self.quit = true,
            // With the side panel focused, j/k scroll it a line.
            Action::Down if self.panel == Panel::Side => self.scroll_side(1),
            Action::Up if self.panel == Panel::Side => self.scroll_side(-1),
            Action::Down => self.move_selection(1),
            Action::Up => self.move_selection(-1),
            Action::Top => self.select_index(0),
            Action::Bottom => self.select_index(usize::MAX),
            Action::Focus => {
                if self.selected_run().is_some_and(|r| r.state.is_live()) {
                    self.mode = Mode::Insert;
                    if let Some(id) = self.selected_run().map(|r| r.id.clone())
                        && let Some(s) = self.panes.screens.get_mut(&id)
                    {
                        s.scroll = 0;
                    }
                } else if self.selected_run().is_some() {
                    self.message = Some("that run has ended: r runs it again".into());
                }
            }
            Action::New => {
                let hosts = self.hosts.iter().map(|h| h.name.clone()).collect();
                let form = NewRunForm::with_hosts(hosts).knowing(self.installed.clone());
                self.overlay.shown = Some(Overlay::NewRun(Box::new(form)));
            }
            Action::Send => {
                if let Some(r) = self.selected_run() {
                    if r.state.is_live() {
                        self.overlay.shown = Some(Overlay::Compose(Box::new(Composer::new(&r.id, &r.name))));
                    } else {
                        self.message = Some("that run has ended: nothing to send to".into());
                    }
                }
            }
            Action::Cancel | Action::ForceCancel => {
                if let Some(r) = self.selected_run()
                    && r.state.is_live()
                {
                    self.overlay.shown = Some(Overlay::Confirm {
                        run: r.id.clone(),
                        name: r.name.clone(),
                        force: action == Action::ForceCancel,
                    });
                }
            }
            Action::Rerun => self.rerun_selected(),
            Action::Attach => {
                if self.selected_run().is_some_and(|r| r.state.is_live()) {
                    self.panes.fullscreen = true;
                    self.mode = Mode::Insert;
                }
            }
            Action::Zoom
            | Action::ToggleSide
            | Action::Single
            | Action::Split
            | Action::Grid
            | Action::NextPanel
            | Action::NextPane
            | Action::PrevPane
            | Action::ScrollUp
            | Action::ScrollDown => self.view_action(action),
            Action::NextTab => self.cycle_tab(1),
            Action::PrevTab => self.cycle_tab(-1),
            Action::Filter => self.tree.filtering = true,
            Action::Help => {
                self.overlay.help_scroll = 0;
                self.overlay.shown = Some(Overlay::Help);
            }
            Action::Copy => self.copy_screen(),
            Action::NextHunk => self.move_hunk(1),
            Action::PrevHunk => self.move_hunk(-1),
            Action::Comment => self.comment_on_hunk(),
            Action::Merge => self.ask_merge(),
            Action::Delete => self.ask_delete(),
            Action::Rename => {
                if let Some(r) = self.selected_run() {
                    self.overlay.shown = Some(Overlay::Rename(Box::new(super::rename::Rename::new(r))));
                }
            }
        }
    }

    /// Scrolls the side panel by `lines`, never past its last page.
    pub(super) fn scroll_side(&mut self, lines: i32) {
        self.side.scroll_by(lines, self.measured.side_scroll_max);
    }

    /// `r`: an ended run with a conversation is resumed into it, any
    /// other ended run's command starts again; a live one asks first (to
    /// queue a resume of its conversation, or to start another copy).
    fn rerun_selected(&mut self) {
        let Some(r) = self.selected_run() else {
            return;
        };
        let command = match &r.session_id {
            _ if r.state.is_live() => {
                self.overlay.shown = Some(Overlay::ConfirmRerun {
                    run: r.id.clone(),
                    name: r.name.clone(),
                    session: r.session_id.clone(),
                });
                return;
            }
            Some(session) => Command::Resume {
                session: session.clone(),
                queue: false,
            },
            None => Command::Rerun(r.id.clone()),
        };
        self.commands.push(command);
    }

    fn cycle_tab(&mut self, by: isize) {
        self.side.cycle(by);
        // The worktree changes without the run saying so: read it afresh
        // (what was read before shows meanwhile).
        if self.side.tab == Tab::Changes
            && let Some(id) = self.selected_run().map(|r| r.id.clone())
            && self.side.changes.loaded.contains_key(&id)
        {
            self.commands.push(super::app::Command::Changes(id));
        }
        self.want_tab_data();
    }

    fn type_key(&mut self, key: &KeyEvent) {
        let Some(run) = self.selected_run().map(|r| r.id.clone()) else {
            self.mode = Mode::Normal;
            return;
        };
        let modes = self.panes.screens.get(&run).map(|s| s.mirror.modes).unwrap_or_default();
        let bytes = keys::encode_key_in(key, modes);
        if !bytes.is_empty() {
            self.commands.push(Command::Input { run, bytes });
        }
        self.only_typed = true;
    }

    /// `v`: copy mode over the selected pane's history and screen.
    fn copy_screen(&mut self) {
        let Some(run) = self.selected_run().map(|r| r.id.clone()) else {
            return;
        };
        let Some(screen) = self.panes.screens.get(&run) else {
            return;
        };
        let mut lines: Vec<String> = screen.mirror.history().cloned().collect();
        lines.extend(screen.mirror.visible_lines());
        // Where the pane was scrolled back to (as `view.rs` draws it),
        // not the live screen.
        let rows = self.panes.sizes.get(&run).map_or(0, |(rows, _)| usize::from(*rows));
        let scroll = screen.scroll.min(lines.len().saturating_sub(rows));
        let end = lines.len() - scroll;
        self.panes.copy = Some(CopyMode::new(&run, lines).shown_to(end));
    }

    /// Puts text on the clipboard of the user's terminal with OSC 52.
    fn copy_text(&mut self, text: &str) {
        let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        self.commands
            .push(Command::Terminal(format!("\x1b]52;c;{encoded}\x07").into_bytes()));
        let lines = text.lines().count().max(1);
        self.message = Some(format!("copied {lines} line(s) to the clipboard"));
    }

    fn move_selection(&mut self, by: isize) {
        if self.tree.step(by) {
            self.side.scroll = 0;
            self.sync_subscriptions();
        }
    }

    fn select_index(&mut self, i: usize) {
        if self.tree.select_end(i == usize::MAX) {
            self.sync_subscriptions();
        }
    }

    fn overlay_key(&mut self, overlay: Overlay, key: KeyEvent) -> Option<Overlay> {
        match overlay {
            Overlay::Help => {
                // Where the box cannot hold it all, it scrolls.
                let by: i32 = match key.code {
                    KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('?') | KeyCode::Enter => return None,
                    KeyCode::Char('j') | KeyCode::Down => 1,
                    KeyCode::Char('k') | KeyCode::Up => -1,
                    KeyCode::PageDown | KeyCode::Char(' ') => 10,
                    KeyCode::PageUp => -10,
                    _ => 0,
                };
                let to = (i32::from(self.overlay.help_scroll) + by).clamp(0, i32::from(self.measured.help_scroll_max));
                self.overlay.help_scroll = to as u16;
                Some(Overlay::Help)
            }
            Overlay::Confirm { run, name, force } => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter => {
                    self.message = Some(super::updates::cancelling_said(&name));
                    self.cancelling = Some((run.clone(), name));
                    self.commands.push(Command::Cancel { run, force });
                    None
                }
                _ => None,
            },
            Overlay::ConfirmMerge { run, branch, into } => {
                let squash = match key.code {
                    KeyCode::Char('y' | 'Y') | KeyCode::Enter => false,
                    KeyCode::Char('s' | 'S') => true,
                    _ => return None,
                };
                self.message = Some(format!("merging {branch} into {into}…"));
                self.commands.push(Command::Merge { run, squash });
                None
            }
            Overlay::ConfirmDelete { runs, names } => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') => {
                    self.message = Some(format!("deleting {}…", names.join(", ")));
                    self.commands.push(Command::Remove(runs));
                    None
                }
                _ => None,
            },
            Overlay::ConfirmRerun { run, name, session } => match (key.code, session) {
                (KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter, None) => {
                    self.commands.push(Command::Rerun(run));
                    self.message = Some(format!("starting another {name}"));
                    None
                }
                (KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter, Some(session)) => {
                    self.commands.push(Command::Resume { session, queue: true });
                    self.message = Some(format!("queueing a resume of {name}'s conversation"));
                    None
                }
                _ => None,
            },
            Overlay::Compose(mut composer) => match composer.key(key) {
                super::form::Outcome::Keep => Some(Overlay::Compose(composer)),
                super::form::Outcome::Close => None,
                super::form::Outcome::Submit => {
                    let text = composer.text();
                    if text.trim().is_empty() {
                        return Some(Overlay::Compose(composer));
                    }
                    if !composer.targets.is_empty() {
                        self.send_to_marked(&composer, &text);
                        return None;
                    }
                    let prompt_id = composer.prompt_id.clone();
                    self.commands.push(Command::Send {
                        run: composer.run.clone(),
                        text,
                        prompt_id: prompt_id.clone(),
                    });
                    self.message = Some(format!("sending to {}…", composer.run_name));
                    self.overlay.pending_send = Some((prompt_id, super::app::Draft::Compose(composer)));
                    None
                }
            },
            Overlay::Peek(peek) => self.peek_key(peek, key),
            Overlay::Rename(mut rename) => match rename.key(key) {
                super::rename::Outcome::Keep => Some(Overlay::Rename(rename)),
                super::rename::Outcome::Close => None,
                super::rename::Outcome::Submit(name) => {
                    self.message = Some(format!("renaming {} → {name}…", rename.name));
                    self.commands.push(Command::Rename { run: rename.run, name });
                    None
                }
            },
            Overlay::NewRun(mut form) => match form.key(key) {
                super::form::Outcome::Keep => Some(Overlay::NewRun(form)),
                super::form::Outcome::Close => None,
                super::form::Outcome::Submit => match form.params() {
                    Ok(params) => {
                        self.commands.push(Command::Start(Box::new(params)));
                        None
                    }
                    Err(e) => {
                        form.error = Some(e);
                        Some(Overlay::NewRun(form))
                    }
                },
            },
        }
    }
}
