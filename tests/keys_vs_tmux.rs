//! Real programs (vim, less, htop) driven by keys through `agents attach`
//! and through the TUI's INSERT mode, against the same program given the
//! same keys in tmux at the same size: text, cursor and every cell's
//! attributes after each step.
//!
//! attach and the TUI run in a tmux server of their own, and the keys are
//! pressed there (`tmux send-keys`), so they reach attach and the TUI as a
//! real terminal sends them, encoded by the modes attach mirrors onto it.
//! What the user sees is read from that outer pane (for the TUI, the run's
//! pane inside its border), so the drawing is checked too.
//!
//! Every wait is on a condition: after a step's keys, until the reference
//! screen changed, then until ours is the same (a deadline only ends a
//! failing test, with the difference).

mod common;

#[path = "term_vs_tmux/capture.rs"]
#[allow(dead_code)]
mod capture;
#[path = "keys_vs_tmux/programs.rs"]
mod programs;
#[path = "keys_vs_tmux/tmux.rs"]
mod tmux;

use std::time::{Duration, Instant};

use common::{BIN, Home, PATIENCE};
use programs::Program;
use tmux::{Shot, Tmux};

/// How long ours may take to show what tmux shows: generous for a busy
/// 2-core CI, and only reached when they differ.
const SETTLE: Duration = Duration::from_secs(15);

/// The size of attach's terminal (and so of the run and of tmux's pane).
const ATTACH_SIZE: (u16, u16) = (24, 80);
/// The TUI's terminal, and the run's size until the TUI shows it in a
/// pane (measured on screen).
const TUI_SIZE: (u16, u16) = (40, 120);

/// How the keys reach the run.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Via {
    Attach,
    Tui,
}

/// The run's side: the outer tmux where attach or the TUI runs, and where in
/// it the run's screen is.
struct Ours {
    outer: Tmux,
    /// `(top, left, rows, cols)` of the run's screen in the outer pane.
    rect: (usize, usize, usize, usize),
}

impl Ours {
    fn shot(&self) -> Shot {
        let (top, left, rows, cols) = self.rect;
        self.outer.shot().crop(top, left, rows, cols)
    }
}

fn agents_env(home: &Home) -> Vec<(&'static str, String)> {
    vec![
        ("AGENTS_HOME", home.path().display().to_string()),
        ("XDG_CONFIG_HOME", home.config.path().display().to_string()),
    ]
}

/// The run's screen inside the TUI's focused pane: the rectangle inside
/// the thick border (`┏…┓` … `┗`), once drawn.
fn focused_rect(shot: &Shot) -> Option<(usize, usize, usize, usize)> {
    let at = |r: usize, c: usize| shot.rows.get(r).and_then(|row| row.get(c)).map(|p| p.text.as_str());
    let (top, left) =
        (0..shot.rows.len()).find_map(|r| (0..shot.rows[r].len()).find(|&c| at(r, c) == Some("┏")).map(|c| (r, c)))?;
    let right = (left + 1..shot.rows[top].len()).find(|&c| at(top, c) == Some("┓"))?;
    let bottom = (top + 1..shot.rows.len()).find(|&r| at(r, left) == Some("┗"))?;
    Some((top + 1, left + 1, bottom - top - 1, right - left - 1))
}

/// Starts `program` as a run and in tmux, both at `size`, and shows the
/// run through `via`. Through the TUI the run is resized to its pane once
/// both have drawn, and so is tmux's pane: a program redraws differently
/// after a resize (vim drops its file message), so both go through one.
fn open(home: &Home, program: &Program, via: Via) -> (Ours, Tmux) {
    let (rows, cols) = match via {
        Via::Attach => ATTACH_SIZE,
        Via::Tui => TUI_SIZE,
    };
    let size = format!("{cols}x{rows}");
    let mut args = vec!["--size", size.as_str(), "cmd", "--"];
    args.extend(program.argv.iter().map(String::as_str));
    let run = home.start(&args);
    let reference = Tmux::start(rows, cols, &[], &program.argv);
    wait_for(&format!("{} to start in tmux", program.name), || {
        (program.ready)(&reference.shot().lines()).then_some(())
    });
    match via {
        Via::Attach => {
            let argv = [BIN.to_string(), "attach".into(), run];
            let outer = Tmux::start(rows, cols, &agents_env(home), &argv);
            let rect = (0, 0, rows.into(), cols.into());
            (Ours { outer, rect }, reference)
        }
        Via::Tui => {
            wait_for(&format!("{} to start in the run", program.name), || {
                let lines: Vec<String> = home.logs(&run).lines().map(str::to_string).collect();
                (program.ready)(&lines).then_some(())
            });
            let outer = Tmux::start(rows, cols, &agents_env(home), &[BIN.to_string()]);
            let beside = wait_for("the TUI to show the run's pane", || focused_rect(&outer.shot()));
            // The side panel shares the window (under the tree here): `p`
            // hides it, and the run's pane takes its widest, as the steps
            // were written for.
            outer.keys(&["p"]);
            let rect = wait_for("the pane widened with the side panel hidden", || {
                focused_rect(&outer.shot()).filter(|r| r.3 > beside.3)
            });
            reference.resize(rect.2 as u16, rect.3 as u16);
            // Enter: INSERT, where keys go to the run.
            outer.keys(&["Enter"]);
            wait_for("the TUI in INSERT", || {
                outer
                    .shot()
                    .lines()
                    .iter()
                    .any(|l| l.contains(" INSERT "))
                    .then_some(())
            });
            (Ours { outer, rect }, reference)
        }
    }
}

fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(found) = f() {
            return found;
        }
        assert!(started.elapsed() < PATIENCE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until our side shows what the reference shows; panics with the
/// difference after [`SETTLE`].
fn assert_settles_equal(ours: &Ours, reference: &Tmux, what: &str) {
    let started = Instant::now();
    loop {
        let (theirs, mine) = (reference.shot(), ours.shot());
        let differences = mine.differences(&theirs);
        if differences.is_empty() {
            return;
        }
        if started.elapsed() > SETTLE {
            panic!(
                "{what}: differs from tmux\n{}\nours:\n{}\ntmux:\n{}",
                differences.join("\n"),
                mine.lines().join("\n"),
                theirs.lines().join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// The whole comparison for one program through one way in.
fn compare(program: &Program, via: Via) {
    let home = Home::new();
    let (ours, reference) = open(&home, program, via);
    assert_settles_equal(&ours, &reference, &format!("{} at start, {via:?}", program.name));
    for step in program.steps(via) {
        let before = reference.shot();
        for key in &step.keys {
            key.press(&reference);
            key.press(&ours.outer);
        }
        let what = format!("{} after {} through {via:?}", program.name, step.describe());
        wait_for(&format!("tmux to show {what}"), || {
            (reference.shot() != before).then_some(())
        });
        assert_settles_equal(&ours, &reference, &what);
    }
}

#[test]
fn vim_through_attach_matches_vim_in_tmux() {
    compare(&Program::vim(), Via::Attach);
}

#[test]
fn vim_through_the_tui_matches_vim_in_tmux() {
    compare(&Program::vim(), Via::Tui);
}

#[test]
fn less_through_attach_matches_less_in_tmux() {
    compare(&Program::less(), Via::Attach);
}

#[test]
fn less_through_the_tui_matches_less_in_tmux() {
    compare(&Program::less(), Via::Tui);
}

#[test]
fn htop_through_attach_matches_htop_in_tmux() {
    compare(&Program::htop(), Via::Attach);
}

#[test]
fn htop_through_the_tui_matches_htop_in_tmux() {
    compare(&Program::htop(), Via::Tui);
}

/// Underline styles (curly, dotted, dashed, double) and colours, strike,
/// hidden, blink, dim and italic, as attach and the TUI draw them on a
/// terminal that shows them: the same cells as tmux showing the program.
#[test]
fn every_attribute_is_drawn_through_attach_as_tmux_draws_it() {
    compare(&Program::attributes(), Via::Attach);
}

#[test]
fn every_attribute_is_drawn_through_the_tui_as_tmux_draws_it() {
    compare(&Program::attributes(), Via::Tui);
}
