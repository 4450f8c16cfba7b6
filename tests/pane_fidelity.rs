//! A pane's screen and history. After resizes (docs/design.md §6, §9), the screen the
//! TUI is sent for a run must end up cell for cell what the run's supervisor shows, however
//! the resizes fell among the output. Driven through the TUI's real state
//! (`App`) and its real daemon link (`tui::connection::run`), against a real
//! daemon, supervisor and PTY; the pane sizes are given as a layout would.

mod common;

use std::time::Instant;

use agents::api::{AttachParams, AttachResult, method};
use agents::client::Client;
use agents::paths::Paths;
use agents::protocol::Frame;
use agents::protocol::screen::ScreenMirror;
use agents::term::Terminal;
use agents::tui::app::{App, Command, Update};
use common::{Home, PATIENCE};
use tokio::sync::mpsc;

/// Long lines (they wrap differently at each width), and a full-screen
/// repaint on every SIGWINCH, as a TUI program does: each row says its number
/// and the size the program saw. At the size given as arguments the program
/// stops instead, without a repaint, as an agent whose answer ends: the lines
/// around that resize stay on the screen.
const SCRIPT: &str = r#"
stop=0
last="$1 $2"
draw() {
  if [ "$(stty size)" = "$last" ]; then stop=1; return; fi
  set -- $(stty size)
  printf '\033[H\033[2J'
  i=1
  while [ $i -le $1 ]; do printf '\033[%d;1H%d/%dx%d|' $i $i $1 $2; i=$((i+1)); done
  printf '\033[%d;1H' $1
}
trap draw WINCH
n=0
while [ $stop = 0 ] && [ $n -lt 100000 ]; do
  n=$((n+1))
  printf 'line %05d abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 the end\n' $n
  [ $((n % 20)) -eq 0 ] && sleep 0.01
done
trap - WINCH
printf 'DONE'
exec sleep 600
"#;

/// Pane sizes as a user dragging a split or a window edge would give them.
const SIZES: &[(u16, u16)] = &[
    (10, 40),
    (30, 100),
    (8, 25),
    (24, 80),
    (12, 50),
    (40, 132),
    (15, 60),
    (20, 33),
];

fn log_text(home: &Home, run: &str) -> String {
    String::from_utf8_lossy(&std::fs::read(home.log_path(run)).unwrap_or_default()).into_owned()
}

fn log_len(home: &Home, run: &str) -> u64 {
    std::fs::metadata(home.log_path(run)).map(|m| m.len()).unwrap_or(0)
}

/// The TUI's state and its link to the daemon, pumped by hand instead of by
/// the event loop (which would also draw).
struct Tui {
    app: App,
    updates: mpsc::Receiver<Update>,
    commands: mpsc::UnboundedSender<Command>,
    link: tokio::task::JoinHandle<()>,
}

impl Tui {
    fn open(home: &Home) -> Tui {
        let (commands, commands_rx) = mpsc::unbounded_channel();
        let (updates_tx, updates) = mpsc::channel(256);
        let link = tokio::spawn(agents::tui::connection::run(
            Paths::at(home.path().to_path_buf()),
            commands_rx,
            updates_tx,
        ));
        Tui {
            app: App::new(),
            updates,
            commands,
            link,
        }
    }

    /// Ends the link while the daemon still runs: one that lost its daemon
    /// would start another, from this test's binary.
    async fn close(self) {
        let Tui {
            updates,
            commands,
            link,
            ..
        } = self;
        drop((updates, commands));
        tokio::time::timeout(PATIENCE, link)
            .await
            .expect("the TUI's link ends with its channels")
            .expect("the TUI's link task");
    }

    fn send_commands(&mut self) {
        for cmd in self.app.take_commands() {
            if !matches!(cmd, Command::Terminal(_)) {
                let _ = self.commands.send(cmd);
            }
        }
    }

    /// Applies updates until `done` holds.
    async fn pump_until(&mut self, what: &str, done: impl FnMut(&App) -> bool) {
        if !self.try_pump_until(done).await {
            panic!(
                "{what}: not within {PATIENCE:?}; the panes stand at {:?}",
                self.app
                    .screens()
                    .iter()
                    .map(|(id, s)| (id, s.mirror.offset))
                    .collect::<Vec<_>>()
            );
        }
    }

    /// Applies updates until `done` holds (true) or for `PATIENCE` (false).
    async fn try_pump_until(&mut self, mut done: impl FnMut(&App) -> bool) -> bool {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            self.send_commands();
            if done(&self.app) {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            match tokio::time::timeout_at(deadline, self.updates.recv()).await {
                Ok(Some(update)) => self.app.update(update),
                Ok(None) => panic!("the TUI's link ended"),
                Err(_) => return false,
            }
        }
    }

    /// PgUp on the selected pane, as its user scrolls back.
    fn scroll_back(&mut self) {
        use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
        self.app
            .handle(Event::Key(KeyEvent::new(KeyCode::PageUp, KeyModifiers::NONE)));
    }

    /// Moves the tree's selection to `run` (Down, from the top), as its
    /// user does.
    fn select(&mut self, run: &str) {
        use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
        let key = |code| Event::Key(KeyEvent::new(code, KeyModifiers::NONE));
        self.app.handle(key(KeyCode::Home));
        for _ in 0..self.app.runs().len() {
            if self.app.selected_run().is_some_and(|r| r.id == run) {
                break;
            }
            self.app.handle(key(KeyCode::Down));
        }
        assert_eq!(self.app.selected_run().map(|r| r.id.as_str()), Some(run));
        self.send_commands();
    }

    /// The pane is laid out at `rows` × `cols`, as `view::draw` does.
    fn lay_out(&mut self, run: &str, rows: u16, cols: u16) {
        self.app.panes_laid_out(vec![(run.to_string(), rows, cols)]);
        self.send_commands();
    }
}

/// The supervisor's screen now, through the API: a fresh subscription
/// starts with a snapshot of it.
async fn supervisor_screen(home: &Home, run: &str) -> (u64, Terminal) {
    let mut client = Client::connect_existing(&Paths::at(home.path().to_path_buf()), true)
        .await
        .expect("connect to the daemon");
    let mut events = client.events.take().expect("events were asked for");
    let _: AttachResult = client
        .call::<method::RunsAttach>(AttachParams {
            run: run.into(),
            offset: None,
            lossless: false,
            screen: false,
            ..Default::default()
        })
        .await
        .expect("runs.attach");
    loop {
        let frame = tokio::time::timeout(PATIENCE, events.recv())
            .await
            .expect("a snapshot within patience")
            .expect("the daemon kept the connection");
        if let Frame::Snapshot {
            run: r,
            offset,
            rows,
            cols,
            bytes,
        } = frame
            && r == run
        {
            let mut term = Terminal::new(rows, cols);
            term.feed(&bytes);
            return (offset, term);
        }
    }
}

fn describe(term: &Terminal) -> String {
    let (rows, cols) = term.size();
    let mut out = format!("{rows}x{cols}, cursor {:?}\n", term.cursor());
    for (i, line) in term.visible_lines().iter().enumerate() {
        out.push_str(&format!("{i:>3}|{line}\n"));
    }
    out
}

/// Cell for cell: size, every cell's text and attributes, cursor.
fn same_screen(pane: &ScreenMirror, supervisor: &Terminal) -> bool {
    let (rows, cols) = supervisor.size();
    let mut row = Vec::new();
    (pane.rows, pane.cols) == (rows, cols)
        && pane.cursor == supervisor.cursor()
        && (0..rows).all(|r| {
            supervisor.row_cells(r, &mut row);
            (0..cols).all(|c| pane.cell(r, c) == row.get(c as usize))
        })
}

fn assert_same_screen(pane: &ScreenMirror, supervisor: &Terminal) {
    assert!(
        same_screen(pane, supervisor),
        "the pane's screen differs from the supervisor's\n-- pane --\n{}-- supervisor --\n{}",
        pane.visible_lines().join("\n"),
        describe(supervisor)
    );
}

/// How often the race is run: where the last resize falls among the output
/// is up to the scheduler, and one round may miss the window where it shows.
const ROUNDS: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_resizes_among_output_a_pane_shows_exactly_the_supervisor_s_screen() {
    for _ in 0..ROUNDS {
        resizes_among_output(&Home::new()).await;
    }
}

async fn resizes_among_output(home: &Home) {
    let (last_rows, last_cols) = *SIZES.last().unwrap();
    let id = home.start(&[
        "cmd",
        "--",
        "bash",
        "-c",
        SCRIPT,
        "bash",
        &last_rows.to_string(),
        &last_cols.to_string(),
    ]);
    home.wait_until("the script prints", || log_text(home, &id).contains("line 00001"));

    let mut tui = Tui::open(home);
    // As the TUI does: the pane is subscribed and laid out together, so
    // the first resize races the subscription's snapshot.
    tui.pump_until("the run is listed", |app| app.run(&id).is_some()).await;

    for (i, &(rows, cols)) in SIZES.iter().enumerate() {
        tui.lay_out(&id, rows, cols);
        if i == SIZES.len() - 1 {
            // The program stops printing when it sees this one.
            break;
        }
        if i % 3 == 2 {
            // Two resizes in a row: output between them is not waited for.
            continue;
        }
        // More output comes after the resize (the program's repaint, if its
        // SIGWINCH came in time, among it).
        let at = log_len(home, &id);
        let more = tui
            .try_pump_until(|app| app.screens().get(&id).is_some_and(|s| s.mirror.offset > at + 20_000))
            .await;
        if !more {
            let text = log_text(home, &id);
            panic!(
                "no output after the resize to {rows}x{cols} within {PATIENCE:?}: the log went from {at} to {} bytes, the pane at {}; the log ends {:?}",
                text.len(),
                tui.app.screens().get(&id).map_or(0, |s| s.mirror.offset),
                &text[text.len().saturating_sub(300)..]
            );
        }
    }

    home.wait_until("the script stops", || log_text(home, &id).contains("DONE"));
    let end = log_len(home, &id);
    tui.pump_until("the pane has applied all output", |app| {
        app.screens().get(&id).is_some_and(|s| s.mirror.offset >= end)
    })
    .await;
    assert_eq!(log_len(home, &id), end, "nothing is printed after DONE");

    let deadline = Instant::now() + PATIENCE;
    let (offset, supervisor) = loop {
        let (offset, term) = supervisor_screen(home, &id).await;
        if offset >= end || Instant::now() > deadline {
            break (offset, term);
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(offset, end, "the supervisor's screen stands for the whole log");
    // The pane may still be sent what the last resize calls for.
    tui.try_pump_until(|app| same_screen(&app.screens()[&id].mirror, &supervisor))
        .await;
    assert_same_screen(&tui.app.screens()[&id].mirror, &supervisor);
    assert_eq!(supervisor.size(), (last_rows, last_cols));
    tui.close().await;
    home.ok(&["cancel", &id]);
}

/// `agents logs` and an exported cast replay the log at the sizes the
/// run's screen took, each from the offset it took it at: a line printed
/// before a resize wraps as it did then (and is cropped as the screen
/// cropped it), not at the run's last size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_and_casts_replay_each_size_from_the_offset_it_was_taken_at() {
    let home = Home::new();
    let id = home.start(&[
        "cmd",
        "--size",
        "80x24",
        "--",
        "sh",
        "-c",
        "printf '%0150d\\n' 0 | tr 0 A; read -r x; printf '%0150d\\n' 0 | tr 0 B; echo DONE; exec sleep 600",
    ]);
    home.wait_until("the first long line is out", || {
        log_text(&home, &id).contains(&"A".repeat(150))
    });
    let client = Client::connect_existing(&Paths::at(home.path().to_path_buf()), false)
        .await
        .expect("connect to the daemon");
    ask_size(&client, &id, (24, 40)).await;
    home.ok(&["send", &id, "go"]);
    home.wait_until("the second long line is out", || log_text(&home, &id).contains("DONE"));

    // The supervisor's screen: the A line wrapped at 80 and was cropped to
    // 40; the B line wrapped at 40.
    let (_, supervisor) = supervisor_screen(&home, &id).await;
    let mut screen: Vec<String> = supervisor
        .visible_lines()
        .iter()
        .map(|l| l.trim_end().to_string())
        .collect();
    while screen.last().is_some_and(|l| l.is_empty()) {
        screen.pop();
    }
    assert_eq!(screen.iter().filter(|l| l.starts_with('A')).count(), 2, "{screen:#?}");
    let logs = home.logs(&id);
    let lines: Vec<&str> = logs.lines().collect();
    assert!(
        ends_with_rows(&lines, &screen),
        "logs end with the supervisor's screen, its wrapped rows joined\n-- logs --\n{logs}-- supervisor --\n{}",
        describe(&supervisor)
    );

    let cast = home.path().join("run.cast");
    home.ok(&["export", &id, "--cast", &cast.to_string_lossy()]);
    let text = std::fs::read_to_string(&cast).unwrap();
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    let header = lines.next().unwrap();
    assert_eq!(
        (header["width"].as_u64(), header["height"].as_u64()),
        (Some(80), Some(24)),
        "{header}"
    );
    let events: Vec<serde_json::Value> = lines.collect();
    let at = |what: &dyn Fn(&serde_json::Value) -> bool| events.iter().position(what);
    let resized = at(&|e| e[1] == "r").unwrap_or_else(|| panic!("no \"r\" event: {events:?}"));
    assert_eq!(events[resized][2], "40x24");
    let a = at(&|e| e[1] == "o" && e[2].as_str().is_some_and(|t| t.contains('A'))).unwrap();
    let b = at(&|e| e[1] == "o" && e[2].as_str().is_some_and(|t| t.contains('B'))).unwrap();
    assert!(a < resized && resized < b, "{events:?}");
    let times: Vec<f64> = events.iter().filter_map(|e| e[0].as_f64()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "times never go back: {times:?}");
}

/// Asks for `size` (rows, cols) for `run` as the viewer `client` is.
async fn ask_size(client: &Client, run: &str, (rows, cols): (u16, u16)) {
    client
        .call::<method::RunsResize>(agents::api::ResizeParams {
            run: run.into(),
            rows,
            cols,
        })
        .await
        .expect("runs.resize");
}

fn size_of(home: &Home, run: &str) -> (u64, u64) {
    let shown = home.show(run);
    (
        shown["rows"].as_u64().unwrap_or_default(),
        shown["cols"].as_u64().unwrap_or_default(),
    )
}

/// The viewer that last resized or typed sets the size (tmux's
/// `window-size latest`); when it leaves, the latest one still there does,
/// and when the last has left the run is back at its `--size`, as the
/// program itself sees (`stty size`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_latest_viewer_sets_the_size_and_the_run_returns_to_its_own_once_all_have_left() {
    let home = Home::new();
    let id = home.start(&[
        "cmd",
        "--size",
        "80x24",
        "--",
        "sh",
        "-c",
        "while read -r line; do echo \"size $line: $(stty size)\"; done",
    ]);
    let paths = Paths::at(home.path().to_path_buf());
    let seen = |label: &str, size: &str| {
        home.ok(&["send", &id, label]);
        let expected = format!("size {label}: {size}");
        home.wait_until(&format!("the program sees {size}"), || {
            log_text(&home, &id).contains(&expected)
        });
    };
    let first = Client::connect_existing(&paths, false).await.unwrap();
    let second = Client::connect_existing(&paths, false).await.unwrap();
    ask_size(&first, &id, (30, 100)).await;
    ask_size(&second, &id, (40, 120)).await;
    seen("a", "40 120");
    // The first viewer types: its size is the run's again.
    first
        .send_frame(Frame::Input {
            run: id.clone(),
            bytes: b"b\r".to_vec(),
        })
        .await
        .unwrap();
    home.wait_until("the typist's size", || log_text(&home, &id).contains("size b: 30 100"));
    // It leaves: the other's size.
    drop(first);
    home.wait_until("the remaining viewer's size", || size_of(&home, &id) == (40, 120));
    seen("c", "40 120");
    // The last leaves (detaching, not even closing): the run's own size.
    second
        .call::<method::RunsDetach>(agents::api::DetachParams {
            run: id.clone(),
            screen: None,
            sub: None,
        })
        .await
        .unwrap();
    home.wait_until("the run's own size", || size_of(&home, &id) == (24, 80));
    seen("d", "24 80");
}

/// A run takes its pane's size each time it is shown: back at its own size
/// while another run was selected, it is resized again when selected again,
/// as the program itself sees (its lines were cut at the pane's edge).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_shown_again_takes_its_pane_s_size_again() {
    let home = Home::new();
    let script = "while read -r line; do echo \"size $line: $(stty size)\"; done";
    let first = home.start(&["cmd", "--size", "120x40", "--", "sh", "-c", script]);
    let second = home.start(&["cmd", "--size", "120x40", "--", "sh", "-c", script]);
    let mut tui = Tui::open(&home);
    tui.pump_until("both runs are listed", |app| {
        app.run(&first).is_some() && app.run(&second).is_some()
    })
    .await;
    for (step, run) in [("shown", &first), ("another shown", &second), ("shown again", &first)] {
        tui.select(run);
        tui.lay_out(run, 20, 89);
        home.wait_until(&format!("{step}: the pane's size"), || size_of(&home, run) == (20, 89));
        if run == &second {
            home.wait_until("the first, left, is at its own size", || {
                size_of(&home, &first) == (40, 120)
            });
        }
    }
    home.ok(&["send", &first, "again"]);
    home.wait_until("the program sees the pane's size", || {
        log_text(&home, &first).contains("size again: 20 89")
    });
    tui.close().await;
}

/// History on demand: a TUI opened after a run printed thousands of lines
/// scrolls back through all of them, and shows, line for line, what
/// `agents logs` prints for the run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pane_scrolls_back_through_output_printed_before_the_tui_opened() {
    let home = Home::new();
    let id = home.start(&[
        "cmd",
        "--size",
        "80x20",
        "--",
        "bash",
        "-c",
        "for i in $(seq 1 3000); do echo \"row $i, printed before the TUI opened\"; done; echo DONE; exec sleep 600",
    ]);
    home.wait_until("the output is all printed", || log_text(&home, &id).contains("DONE"));

    let end = log_len(&home, &id);
    let mut tui = Tui::open(&home);
    tui.pump_until("the pane shows the run's screen", |app| {
        app.screens().get(&id).is_some_and(|s| s.mirror.offset >= end)
    })
    .await;
    // As the user scrolls back. (A supervisor still parsing when the pane
    // opened sends the rows it then scrolls off as a gap, filled now.)
    tui.scroll_back();
    tui.pump_until("the pane has the rows that scrolled off before it opened", |app| {
        app.screens()
            .get(&id)
            .is_some_and(|s| !s.mirror.history_gap && s.mirror.history().len() >= 2980)
    })
    .await;
    let screen = &tui.app.screens()[&id].mirror;
    let mut pane: Vec<String> = screen.history().cloned().collect();
    pane.extend(screen.visible_lines());
    while pane.last().is_some_and(String::is_empty) {
        pane.pop();
    }
    assert_eq!(pane[0], "row 1, printed before the TUI opened");
    let logs = home.ok(&["logs", &id]);
    let logs: Vec<&str> = logs.lines().collect();
    if let Err(why) = joins_rows(&logs, &pane) {
        panic!(
            "the pane's history and screen are not what `agents logs` prints, wrapped rows joined: {why}\n\
             logs:\n{logs:#?}\npane:\n{pane:#?}"
        );
    }
    tui.close().await;
    home.ok(&["cancel", &id]);
}

/// Each run's screen size as its emulator last sent it to the pane.
fn shown_sizes(app: &App) -> Vec<(String, (u16, u16))> {
    let mut out: Vec<_> = app
        .screens()
        .iter()
        .map(|(id, s)| (id.clone(), (s.mirror.rows, s.mirror.cols)))
        .collect();
    out.sort();
    out
}

/// The size each visible pane was laid out at.
fn pane_sizes(app: &App) -> Vec<(String, (u16, u16))> {
    let shown = app.pane_runs();
    let mut out: Vec<_> = app
        .pane_sizes()
        .iter()
        .filter(|(id, _)| shown.contains(id))
        .map(|(id, size)| (id.clone(), *size))
        .collect();
    out.sort();
    out
}

/// Who sets the size: in the split and grid layouts, and after the user's
/// terminal is resized, every visible pane's run has its pane's size (its
/// screen is sent at that size, and the daemon stores it); a run no pane
/// shows any more is back at its `--size`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_every_layout_and_after_a_terminal_resize_each_visible_pane_s_run_has_its_pane_s_size() {
    use agents::tui::app::Layout;
    use ratatui::backend::TestBackend;
    let home = Home::new();
    let ids: Vec<String> = (0..4)
        .map(|_| home.start(&["cmd", "--size", "70x21", "--", "sh", "-c", "echo ready; exec sleep 600"]))
        .collect();
    let mut tui = Tui::open(&home);
    tui.pump_until("the runs are listed", |app| ids.iter().all(|id| app.run(id).is_some()))
        .await;
    let mut terminal = ratatui::Terminal::new(TestBackend::new(160, 48)).unwrap();
    for (layout, size) in [
        (Layout::Split, (160, 48)),
        (Layout::Grid, (160, 48)),
        (Layout::Grid, (121, 37)),
        (Layout::Split, (121, 37)),
    ] {
        tui.app.set_layout(layout);
        tui.app.sync_subscriptions();
        terminal.backend_mut().resize(size.0, size.1);
        terminal.autoresize().unwrap();
        terminal.draw(|f| agents::tui::view::draw(f, &mut tui.app)).unwrap();
        let want = pane_sizes(&tui.app);
        assert_eq!(want.len(), layout.capacity(), "{layout:?}: {want:?}");
        tui.pump_until(
            &format!("{layout:?} at {size:?}: every pane's run at its pane's size"),
            |app| {
                shown_sizes(app)
                    .iter()
                    .filter(|(id, _)| want.iter().any(|(w, _)| w == id))
                    .cloned()
                    .collect::<Vec<_>>()
                    == want
            },
        )
        .await;
        for (id, (rows, cols)) in &want {
            let record = home.json(&["show", id, "--json"]);
            assert_eq!(
                (record["rows"].as_u64(), record["cols"].as_u64()),
                (Some(*rows as u64), Some(*cols as u64)),
                "{layout:?}: run {id}'s stored size"
            );
        }
    }
    // The split layout shows two of the four: the other two are back at
    // the size they were started at.
    let shown = tui.app.pane_runs();
    for id in ids.iter().filter(|id| !shown.contains(id)) {
        home.wait_until("a run no pane shows is back at its --size", || {
            let record = home.json(&["show", id, "--json"]);
            (record["rows"].as_u64(), record["cols"].as_u64()) == (Some(21), Some(70))
        });
    }
    tui.close().await;
    for id in &ids {
        home.ok(&["cancel", id]);
    }
}

/// `agents logs` prints what the pane shows: history and screen, a line
/// the screen wrapped printed whole (as `tmux capture-pane -J`), after a
/// resize between long lines and with line-drawing characters (DEC
/// special graphics) among them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_print_what_the_pane_shows_after_a_resize_and_with_line_drawing() {
    let home = Home::new();
    let gates = tempfile::tempdir().unwrap();
    let gate = gates.path().join("gate");
    let script = format!(
        "box() {{ printf '\\033(0lqqqqk\\033(B %s\\n\\033(0x\\033(B    \\033(0x\\033(B\\n\\033(0mqqqqj\\033(B\\n' \"$1\"; }}; \
         i=0; while [ $i -lt 30 ]; do box before$i; printf '%0100d\\n' $i | tr 0 a; i=$((i+1)); done; \
         while [ ! -e '{gate}' ]; do sleep 0.02; done; \
         i=0; while [ $i -lt 30 ]; do box after$i; printf '%0100d\\n' $i | tr 0 b; i=$((i+1)); done; \
         echo DONE; exec sleep 600",
        gate = gate.display()
    );
    let id = home.start(&["cmd", "--size", "80x12", "--", "sh", "-c", &script]);
    home.wait_until("the first half is printed", || {
        log_text(&home, &id).contains("before29")
    });
    let mut tui = Tui::open(&home);
    tui.pump_until("the run is listed", |app| app.run(&id).is_some()).await;
    tui.lay_out(&id, 12, 45);
    tui.pump_until("the pane is at its size", |app| {
        app.screens()
            .get(&id)
            .is_some_and(|s| (s.mirror.rows, s.mirror.cols) == (12, 45))
    })
    .await;
    std::fs::write(&gate, b"").unwrap();
    home.wait_until("the second half is printed", || log_text(&home, &id).contains("DONE"));
    let end = log_len(&home, &id);
    tui.pump_until("the pane has it all", |app| {
        app.screens().get(&id).is_some_and(|s| s.mirror.offset >= end)
    })
    .await;
    // Rows that scrolled past faster than a frame carries are a gap in
    // the pane's history until its user scrolls back over it.
    tui.scroll_back();
    tui.pump_until("the pane's history is whole", |app| {
        app.screens().get(&id).is_some_and(|s| !s.mirror.history_gap)
    })
    .await;
    let screen = &tui.app.screens()[&id].mirror;
    let mut pane: Vec<String> = screen.history().cloned().collect();
    pane.extend(screen.visible_lines());
    while pane.last().is_some_and(String::is_empty) {
        pane.pop();
    }
    assert!(pane.iter().any(|l| l.contains("┌────┐ after0")), "{pane:#?}");
    let logs = home.ok(&["logs", &id]);
    let logs: Vec<&str> = logs.lines().collect();
    if let Err(why) = joins_rows(&logs, &pane) {
        panic!(
            "the pane's history and screen are not what `agents logs` prints, wrapped rows joined: {why}\n\
             logs:\n{logs:#?}\npane:\n{pane:#?}"
        );
    }
    tui.close().await;
    home.ok(&["cancel", &id]);
}

/// `agents logs --follow` started before a resize wraps the lines printed
/// after it at the new width, as the run's screen did, and prints what
/// `agents logs` prints once the run is done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_follow_takes_each_size_the_run_takes_while_it_follows() {
    let home = Home::new();
    let gates = tempfile::tempdir().unwrap();
    let gate = gates.path().join("gate");
    let script = format!(
        "printf '%0100d\\n' 0 | tr 0 a; echo FIRST; \
         while [ ! -e '{gate}' ]; do sleep 0.02; done; \
         printf '%0100d\\n' 0 | tr 0 b; echo DONE; exec sleep 600",
        gate = gate.display()
    );
    let id = home.start(&["cmd", "--size", "80x12", "--", "sh", "-c", &script]);
    home.wait_until("the first line is out", || log_text(&home, &id).contains("FIRST"));
    let mut follow = home
        .cmd(&["logs", "--follow", &id])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let printed = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let reader = {
        let (stdout, printed) = (follow.stdout.take().unwrap(), printed.clone());
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                printed.lock().unwrap().push(line);
            }
        })
    };
    let has = |text: &str| printed.lock().unwrap().iter().any(|l| l.contains(text));
    home.wait_until("logs --follow printed the first line", || has("FIRST"));
    let client = Client::connect_existing(&Paths::at(home.path().to_path_buf()), false)
        .await
        .expect("connect to the daemon");
    ask_size(&client, &id, (12, 40)).await;
    std::fs::write(&gate, b"").unwrap();
    home.wait_until("logs --follow printed the last line", || has("DONE"));
    let followed = printed.lock().unwrap().clone();
    let b_rows: Vec<&String> = followed.iter().filter(|l| l.starts_with('b')).collect();
    assert_eq!(
        b_rows.iter().map(|l| l.len()).collect::<Vec<_>>(),
        vec![100],
        "the line the run wrapped at 40 columns after the resize, printed whole: {followed:#?}"
    );
    let _ = follow.kill();
    let _ = follow.wait();
    let _ = reader.join();
    // From the resize on, as `agents logs` prints them. (A row printed
    // before it stays as printed: the screen cropped the first line's row
    // at the resize, which a follower cannot take back.)
    let logs = home.ok(&["logs", &id]);
    let from_first = |lines: Vec<String>| -> Vec<String> {
        lines
            .into_iter()
            .skip_while(|l| l != "FIRST")
            .filter(|l| !l.is_empty())
            .collect()
    };
    let logs = from_first(logs.lines().map(str::to_string).collect());
    assert_eq!(logs.len(), 3, "FIRST, the b line whole, DONE: {logs:#?}");
    assert_eq!(from_first(followed), logs, "logs --follow printed what logs prints");
    home.ok(&["cancel", &id]);
}

/// Each of `lines` (as `agents logs` prints them: a soft-wrapped line
/// whole) is the next one or more of `rows` (as a screen shows them, one
/// row each) joined, and together they are all of `rows`.
fn joins_rows(lines: &[&str], rows: &[String]) -> Result<(), String> {
    let mut rows = rows.iter();
    for (n, line) in lines.iter().enumerate() {
        let mut joined = String::new();
        for row in rows.by_ref() {
            joined.push_str(row);
            if joined.len() >= line.len() {
                break;
            }
        }
        if joined != *line {
            return Err(format!("line {n} is {line:?}, the rows joined {joined:?}"));
        }
    }
    match rows.next() {
        Some(row) => Err(format!("the rows go on past the lines with {row:?}")),
        None => Ok(()),
    }
}

/// The last of `lines` end with `rows` joined: the first row may finish a
/// line begun above the screen.
fn ends_with_rows(lines: &[&str], rows: &[String]) -> bool {
    let mut rows = rows.iter().rev().peekable();
    for line in lines.iter().rev() {
        if rows.peek().is_none() {
            return true;
        }
        let mut joined = String::new();
        for row in rows.by_ref() {
            joined.insert_str(0, row);
            if joined.len() >= line.len() {
                break;
            }
        }
        let whole = joined == *line;
        let finishes = rows.peek().is_none() && line.ends_with(joined.as_str());
        if !whole && !finishes {
            return false;
        }
    }
    rows.peek().is_none()
}

/// An ended run can no longer take its pane's size: a pane narrower than
/// the run was shows its last screen rewrapped to the pane, its long line
/// whole (it was cut at the pane's edge), and again at a new width.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_run_s_last_screen_is_rewrapped_to_its_pane_and_nothing_is_cut() {
    use agents::tui::app::Layout;
    use ratatui::backend::TestBackend;
    let home = Home::new();
    let line = "Error: no key. Set GROK_API_KEY, use --api-key, or set apiKey in ~/.grok/user-settings.json";
    let script = format!("printf '%s\\n' '{} {line}'; exit 1", "x".repeat(40));
    let id = home.start(&["cmd", "--size", "120x20", "--", "sh", "-c", &script]);
    assert_eq!(home.wait_end(&id)["state"], "failed");
    let mut tui = Tui::open(&home);
    tui.pump_until("the run is listed", |app| app.run(&id).is_some()).await;
    let mut terminal = ratatui::Terminal::new(TestBackend::new(110, 30)).unwrap();
    for width in [110, 90] {
        tui.app.set_layout(Layout::Split);
        tui.app.sync_subscriptions();
        terminal.backend_mut().resize(width, 30);
        terminal.autoresize().unwrap();
        terminal.draw(|f| agents::tui::view::draw(f, &mut tui.app)).unwrap();
        let (_, (rows, cols)) = pane_sizes(&tui.app)
            .into_iter()
            .find(|(r, _)| *r == id)
            .expect("its pane");
        assert!(cols < 120, "the pane is narrower than the run was: {cols}");
        tui.pump_until(
            &format!("at {width} columns: the screen rewrapped to its pane"),
            |app| {
                let Some(s) = app.screens().get(&id) else {
                    return false;
                };
                // A row ending at a space is shown trimmed: words are compared.
                let words = |t: &str| t.split_whitespace().collect::<String>();
                let joined = words(&s.mirror.visible_lines().join(" "));
                (s.mirror.rows, s.mirror.cols) == (rows, cols) && joined.contains(&words(line))
            },
        )
        .await;
    }
    tui.close().await;
}
