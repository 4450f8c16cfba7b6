//! TUI frame render time (docs/design.md §10: 4 panes of 200×50, under 4 ms).
//!
//! `cargo bench --bench tui_render` (release build). An `App` with 4 live
//! runs in the grid layout, each pane's screen full of coloured text. Each
//! frame one pane gets a new screenful, as a flooding run would, then the
//! whole frame is drawn; only `terminal.draw(|f| view::draw(f, &mut app))` is
//! timed: layout, widgets, the buffer diff and the backend's writes. Two
//! backends: ratatui's `TestBackend` (cells only), and the crossterm backend
//! writing the escape sequences a real terminal would get, into memory.
//!
//! `AGENTS_BENCH_FRAMES` changes the number of frames (default 500).

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant, SystemTime};

use agents::api::{ActivityStatus, RunRecord, RunState};
use agents::tui::app::{App, Layout, Update};
use agents::tui::view;
use ratatui::backend::{Backend, CrosstermBackend, TestBackend};
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

/// The whole screen: with the run tree (26 columns), the side panel (a fifth
/// of the width) and the borders, each of the grid's 4 panes is 200×50.
const WIDTH: u16 = 537;
const HEIGHT: u16 = 106;
const PANES: usize = 4;
const BUDGET_MS: f64 = 4.0;

fn run(i: usize) -> RunRecord {
    let started = humantime::format_rfc3339_millis(SystemTime::now() - Duration::from_secs(75)).to_string();
    RunRecord {
        id: format!("01BENCH{i:019}"),
        name: format!("flood-{i}"),
        harness: "demo".into(),
        host: "local".into(),
        cwd: "/tmp".into(),
        command: vec!["agents".into(), "demo-agent".into()],
        state: RunState::Running,
        status: ActivityStatus::Working,
        parent_id: None,
        root_id: format!("01BENCH{i:019}"),
        detached: false,
        session_id: None,
        pid: Some(1000 + i as i64),
        exit_code: None,
        signal: None,
        reason: None,
        created_at: started.clone(),
        started_at: Some(started),
        ended_at: None,
        rows: 50,
        cols: 200,
        timeout_secs: None,
        worktree: None,
        output_bytes: 0,
        status_since: None,
        evidence: None,
        evidence_at: None,
        routine: None,
        scheduled_at: None,
        log_pruned_at: None,
        waiting: Vec::new(),
        former_names: Vec::new(),
        sandbox: None,
    }
}

/// A screenful of 200-column lines, every word in its own colours (256-colour
/// foregrounds, some backgrounds, bold and underline), different for each `seed`.
fn coloured_screen(seed: usize, lines: usize) -> Vec<u8> {
    let words = [
        "compiling",
        "checking",
        "running",
        "ok",
        "warning:",
        "test",
        "finished",
        "module",
    ];
    let mut out = Vec::new();
    for l in 0..lines {
        let mut width = 0;
        let mut w = seed * 7 + l * 13;
        while width < 196 {
            let word = words[w % words.len()];
            let fg = 16 + (w * 37 % 216);
            let attrs = match w % 5 {
                0 => format!("\x1b[1;38;5;{fg}m"),
                1 => format!("\x1b[38;5;{fg};48;5;{}m", 232 + w % 24),
                2 => format!("\x1b[4;38;5;{fg}m"),
                _ => format!("\x1b[38;5;{fg}m"),
            };
            let text = format!("{word}_{:04} ", (seed + w) % 10_000);
            width += text.len();
            out.extend_from_slice(attrs.as_bytes());
            out.extend_from_slice(text.as_bytes());
            out.extend_from_slice(b"\x1b[0m");
            w += 1;
        }
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Where the crossterm backend writes: counts the bytes, keeps none.
struct Counting(Rc<Cell<u64>>);

impl std::io::Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.set(self.0.get() + buf.len() as u64);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Figures {
    mean: f64,
    p50: f64,
    p99: f64,
    max: f64,
}

fn figures(mut ms: Vec<f64>) -> Figures {
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    Figures {
        mean: ms.iter().sum::<f64>() / ms.len() as f64,
        p50: at(0.50),
        p99: at(0.99),
        max: ms[ms.len() - 1],
    }
}

/// Draws `frames` frames, one pane changed before each; returns each draw's time in ms.
fn measure<B: Backend>(terminal: &mut Terminal<B>, frames: usize) -> (Vec<f64>, Vec<(u16, u16)>)
where
    B::Error: std::fmt::Debug,
{
    let mut app = App::new();
    app.update(Update::Runs((0..PANES).map(run).collect()));
    app.set_layout(Layout::Grid);
    app.sync_subscriptions();
    // Each pane's run as its supervisor has it: an emulator, and what its
    // pane was last sent.
    let mut sources: Vec<(agents::term::Terminal, agents::protocol::screen::ScreenWatch)> = (0..PANES)
        .map(|_| {
            (
                agents::term::Terminal::new(50, 200),
                agents::protocol::screen::ScreenWatch::new(),
            )
        })
        .collect();
    for (i, (term, watch)) in sources.iter_mut().enumerate() {
        term.feed(&coloured_screen(i, 50));
        if let Some(update) = watch.next(term, 0) {
            app.update(Update::Screen {
                run: run(i).id,
                update: Box::new(update),
            });
        }
    }
    // The first frame lays the panes out (and sizes their screens).
    terminal.draw(|f| view::draw(f, &mut app)).expect("draw");
    app.take_commands();
    let mut sizes: Vec<(u16, u16)> = app.pane_sizes().values().copied().collect();
    sizes.sort();

    let warmup = 20;
    let mut times = Vec::with_capacity(frames);
    let mut offsets = [0u64; PANES];
    for frame in 0..frames + warmup {
        let pane = frame % PANES;
        let bytes = coloured_screen(frame + PANES, 50);
        offsets[pane] += bytes.len() as u64;
        let (term, watch) = &mut sources[pane];
        term.feed(&bytes);
        if let Some(update) = watch.next(term, offsets[pane]) {
            app.update(Update::Screen {
                run: run(pane).id,
                update: Box::new(update),
            });
        }
        let t = Instant::now();
        terminal.draw(|f| view::draw(f, &mut app)).expect("draw");
        let took = t.elapsed();
        app.take_commands();
        if frame >= warmup {
            times.push(took.as_secs_f64() * 1000.0);
        }
    }
    (times, sizes)
}

fn main() {
    let frames: usize = std::env::var("AGENTS_BENCH_FRAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500);
    println!("TUI frame render: {PANES} panes in the grid layout, a {WIDTH}×{HEIGHT} screen, {frames} frames,");
    println!("one pane's whole screen of coloured text new before each frame");
    // Wall-clock figures: on a busy machine they include waiting for a CPU.
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average: {}",
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );

    let mut test = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("terminal");
    let (times, sizes) = measure(&mut test, frames);
    let sizes: Vec<String> = sizes.iter().map(|(r, c)| format!("{c}×{r}")).collect();
    println!("pane sizes: {}", sizes.join(", "));
    let test = figures(times);

    let area = Rect::new(0, 0, WIDTH, HEIGHT);
    let written = Rc::new(Cell::new(0u64));
    let mut escapes = Terminal::with_options(
        CrosstermBackend::new(Counting(written.clone())),
        TerminalOptions {
            viewport: Viewport::Fixed(area),
        },
    )
    .expect("terminal");
    let (times, _) = measure(&mut escapes, frames);
    let written = written.get();
    let crossterm = figures(times);

    for (name, f) in [("TestBackend", &test), ("crossterm → memory", &crossterm)] {
        let verdict = |ms: f64| if ms < BUDGET_MS { "ok" } else { "OVER" };
        println!(
            "{name:>20}: mean {:.2} ms, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms   (budget < {BUDGET_MS} ms: p50 {}, p99 {})",
            f.mean,
            f.p50,
            f.p99,
            f.max,
            verdict(f.p50),
            verdict(f.p99),
        );
    }
    println!(
        "{:>20}  {:.0} KB of escape sequences per frame",
        "",
        written as f64 / 1024.0 / (frames + 21) as f64
    );
}
