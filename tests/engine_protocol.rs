//! The daemon's socket (docs/design.md §5) from the outside: subscriptions
//! through the library's client, and a client too slow to keep up. Bad
//! input on raw connections and the daemon's lifecycle are in
//! `engine_socket.rs`.

mod common;

use agents::api::{AttachParams, AttachResult, ErrorCode, method};
use agents::client::Client;
use agents::daemon::LAG_LIMIT;
use agents::harness::demo::{BYE, FLOOD_END, PROMPT};
use agents::protocol::rpc::{Message, Request};
use agents::protocol::{Frame, exchange_headers, read_frame, write_frame};
use agents::term::Terminal;
use common::serving::{assert_daemon_serves, paths, runtime};
use common::{Home, PATIENCE};
use serde_json::{Value, json};
use tokio::io::BufReader;
use tokio::sync::mpsc;

fn log_len(home: &Home, run: &str) -> u64 {
    std::fs::metadata(home.log_path(run)).map(|m| m.len()).unwrap_or(0)
}

fn log_tail_contains(home: &Home, run: &str, needle: &str) -> bool {
    let log = std::fs::read(home.log_path(run)).unwrap_or_default();
    let tail = &log[log.len().saturating_sub(64 * 1024)..];
    String::from_utf8_lossy(tail).contains(needle)
}

fn wait_for_prompt(home: &Home, run: &str) {
    home.wait_until("the demo agent shows its prompt", || {
        log_tail_contains(home, run, PROMPT)
    });
}

fn shows_line(lines: &[String], text: &str) -> bool {
    lines.iter().any(|l| l.contains(text))
}

/// Compares large byte strings without printing megabytes on failure.
fn assert_same_bytes(got: &[u8], want: &[u8], what: &str) {
    if got != want {
        let at = got
            .iter()
            .zip(want)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        panic!(
            "{what}: {} bytes received, {} expected; first difference at byte {at}: {:?} vs {:?}",
            got.len(),
            want.len(),
            String::from_utf8_lossy(&got[at.min(got.len())..(at + 40).min(got.len())]),
            String::from_utf8_lossy(&want[at.min(want.len())..(at + 40).min(want.len())]),
        );
    }
}

/// What a subscriber is told about one run, in order.
#[derive(Debug)]
enum Seen {
    Output {
        offset: u64,
        bytes: Vec<u8>,
    },
    Snapshot {
        offset: u64,
        rows: u16,
        cols: u16,
        screen: Vec<u8>,
    },
    /// `output.end`: caught up with the live run (`last` false), skipped
    /// ahead to a snapshot (`skipped`), or the run's output is over (`last`).
    End {
        offset: Option<u64>,
        last: bool,
        skipped: bool,
        error: Option<String>,
    },
}

fn seen(frame: Frame, run: &str) -> Option<Seen> {
    match frame {
        Frame::Output { run: r, offset, bytes } if r == run => Some(Seen::Output { offset, bytes }),
        Frame::Snapshot {
            run: r,
            offset,
            rows,
            cols,
            bytes,
        } if r == run => Some(Seen::Snapshot {
            offset,
            rows,
            cols,
            screen: bytes,
        }),
        Frame::Control(bytes) => match Message::parse(&bytes) {
            Ok(Message::Request(note)) if note.method == method::OUTPUT_END && note.params["run"] == run => {
                Some(Seen::End {
                    offset: note.params["offset"].as_u64(),
                    last: note.params["final"] == true,
                    skipped: note.params["skipped"] == true,
                    error: note.params["error"].as_str().map(str::to_string),
                })
            }
            _ => None,
        },
        _ => None,
    }
}

/// One subscription's frames, however the connection was made.
struct Subscriber {
    run: String,
    events: mpsc::Receiver<Frame>,
    /// Keeps the connection open while we read.
    _client: Option<Client>,
}

impl Subscriber {
    async fn next(&mut self) -> Seen {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let frame = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .unwrap_or_else(|_| panic!("nothing more about run {} within {PATIENCE:?}", self.run))
                .unwrap_or_else(|| panic!("the daemon closed the connection while streaming {}", self.run));
            if let Some(s) = seen(frame, &self.run) {
                return s;
            }
        }
    }
}

/// Subscribes through the library's client, as `agents logs` and `attach` do.
async fn subscribe(home: &Home, run: &str, offset: Option<u64>, lossless: bool) -> Subscriber {
    // `connect_existing`: the daemon is up (the run was started through it),
    // and starting one from here would start this test binary instead.
    let mut client = Client::connect_existing(&paths(home), true)
        .await
        .expect("connect to the daemon");
    let events = client.events.take().expect("events were asked for");
    let _: AttachResult = client
        .call::<method::RunsAttach>(AttachParams {
            run: run.into(),
            offset,
            lossless,
            screen: false,
            ..Default::default()
        })
        .await
        .expect("runs.attach");
    Subscriber {
        run: run.into(),
        events,
        _client: Some(client),
    }
}

/// Output received so far, checked to be contiguous: each frame starts
/// where the previous one ended, so nothing is missing or repeated.
struct Contiguous {
    from: u64,
    bytes: Vec<u8>,
    frames: usize,
}

impl Contiguous {
    fn new(from: u64) -> Contiguous {
        Contiguous {
            from,
            bytes: Vec::new(),
            frames: 0,
        }
    }

    fn end(&self) -> u64 {
        self.from + self.bytes.len() as u64
    }

    fn push(&mut self, offset: u64, bytes: &[u8]) {
        assert_eq!(
            offset,
            self.end(),
            "an output frame at {offset} after {} frames ending at {}: a gap or a duplicate",
            self.frames,
            self.end()
        );
        self.bytes.extend_from_slice(bytes);
        self.frames += 1;
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

// ── 1. Replay from an offset ────────────────────────────────────────────

#[test]
fn a_subscription_from_an_offset_replays_a_finished_run_s_log_from_there() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sh", "-c", "seq 1 100000"]);
    home.wait_end(&id);
    let log = std::fs::read(home.log_path(&id)).expect("the output log");
    assert!(log.len() > 600_000, "seq wrote only {} bytes", log.len());
    let from = 12_345u64;

    let rt = runtime();
    let got = rt.block_on(async {
        let mut sub = subscribe(&home, &id, Some(from), true).await;
        let mut got = Contiguous::new(from);
        loop {
            match sub.next().await {
                Seen::Output { offset, bytes } => got.push(offset, &bytes),
                Seen::End {
                    last: true,
                    error,
                    offset,
                    ..
                } => {
                    assert_eq!(error, None);
                    assert_eq!(offset, Some(got.end()), "the end names where the output ended");
                    break got;
                }
                Seen::End { skipped: false, .. } => {}
                other => panic!("a lossless replay of an ended run sent {other:?}"),
            }
        }
    });
    assert!(
        got.frames > 1,
        "{} bytes in one frame: frames are capped",
        got.bytes.len()
    );
    assert_same_bytes(&got.bytes, &log[from as usize..], "replay from offset 12345");
}

#[test]
fn a_subscription_to_a_live_run_replays_then_continues_live_without_gap_or_duplicate() {
    let home = Home::new();
    let id = home.start(&["demo"]);
    wait_for_prompt(&home, &id);
    let at_subscribe = log_len(&home, &id);
    let from = at_subscribe / 2;
    assert!(from > 0);

    let rt = runtime();
    let got = rt.block_on(async {
        let mut sub = subscribe(&home, &id, Some(from), true).await;
        let mut got = Contiguous::new(from);
        // The replay, up to the live end, then the caught-up notice.
        loop {
            match sub.next().await {
                Seen::Output { offset, bytes } => got.push(offset, &bytes),
                Seen::End {
                    last: false,
                    skipped: false,
                    offset,
                    ..
                } => {
                    // The daemon hears of new output within a few ms, so
                    // "caught up" may name an offset a moment older than
                    // the file the test read; the rest follows live.
                    assert_eq!(offset, Some(got.end()));
                    break;
                }
                other => panic!("during the replay: {other:?}"),
            }
        }
        // Live output: the answer to a prompt sent after subscribing.
        home.ok(&["send", &id, "hello"]);
        while !got.text().contains("you said \"hello\"") {
            match sub.next().await {
                Seen::Output { offset, bytes } => got.push(offset, &bytes),
                other => panic!("while live: {other:?}"),
            }
        }
        home.ok(&["send", &id, "exit"]);
        loop {
            match sub.next().await {
                Seen::Output { offset, bytes } => got.push(offset, &bytes),
                Seen::End { last: true, error, .. } => {
                    assert_eq!(error, None);
                    break got;
                }
                other => panic!("at the end: {other:?}"),
            }
        }
    });
    assert_eq!(home.wait_end(&id)["state"], "succeeded");
    assert!(got.end() > at_subscribe);
    let log = std::fs::read(home.log_path(&id)).expect("the output log");
    assert_same_bytes(&got.bytes, &log[from as usize..], "replay then live");
}

#[test]
fn a_subscription_from_the_end_gets_only_the_end_and_one_past_it_is_a_bad_request() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sh", "-c", "echo done"]);
    home.wait_end(&id);
    let len = log_len(&home, &id);
    assert!(len > 0);

    let rt = runtime();
    rt.block_on(async {
        let mut sub = subscribe(&home, &id, Some(len), true).await;
        match sub.next().await {
            Seen::End { last: true, offset, .. } => assert_eq!(offset, Some(len)),
            other => panic!("from the very end: {other:?}"),
        }

        let client = Client::connect_existing(&paths(&home), false).await.expect("connect");
        let err = client
            .call::<method::RunsAttach>(AttachParams {
                run: id.clone(),
                offset: Some(len + 1),
                lossless: true,
                screen: false,
                ..Default::default()
            })
            .await
            .expect_err("an offset past the end of the log");
        assert_eq!(err.code, ErrorCode::BadRequest, "{err}");
        assert!(err.message.contains("past the end"), "{err}");
    });
}

#[test]
fn a_subscription_without_an_offset_to_an_ended_run_gets_its_final_screen_then_the_end() {
    let home = Home::new();
    // Over a MiB, so the screen is rebuilt from a checkpoint and what followed.
    let id = home.start(&["--size", "80x24", "cmd", "--", "sh", "-c", "seq 1 200000"]);
    home.wait_end(&id);
    let len = log_len(&home, &id);
    assert!(len > 1 << 20);

    let rt = runtime();
    rt.block_on(async {
        let mut sub = subscribe(&home, &id, None, false).await;
        match sub.next().await {
            Seen::Snapshot {
                offset,
                rows,
                cols,
                screen,
            } => {
                assert_eq!((offset, rows, cols), (len, 24, 80));
                let mut term = Terminal::new(rows, cols);
                term.feed(&screen);
                let mut want: Vec<String> = (199_978..=200_000).map(|n| n.to_string()).collect();
                want.push(String::new());
                assert_eq!(term.visible_lines(), want);
            }
            other => panic!("expected the final screen first, got {other:?}"),
        }
        match sub.next().await {
            Seen::End { last: true, offset, .. } => assert_eq!(offset, Some(len)),
            other => panic!("after the final screen: {other:?}"),
        }
    });
}

// ── 2. A slow client ────────────────────────────────────────────────────

/// A connection made by hand, whose socket nobody reads until
/// `start_reading`: the slowest client there is. (The library's client
/// reads the socket into its own 256-frame buffer whether or not anyone
/// looks, so it cannot be made to stall at a known point.)
struct RawConnection {
    reader: BufReader<tokio::net::unix::OwnedReadHalf>,
    writer: tokio::net::unix::OwnedWriteHalf,
}

impl RawConnection {
    async fn open(home: &Home) -> RawConnection {
        let stream = tokio::net::UnixStream::connect(paths(home).daemon_socket())
            .await
            .expect("connect to daemon.sock");
        let (r, mut writer) = stream.into_split();
        let mut reader = BufReader::new(r);
        exchange_headers(&mut reader, &mut writer)
            .await
            .expect("version headers");
        RawConnection { reader, writer }
    }

    async fn request(&mut self, id: u64, name: &str, params: Value) {
        write_frame(&mut self.writer, &Frame::control(&Request::new(id, name, params)))
            .await
            .expect("send a request");
    }

    fn start_reading(self, run: &str) -> Subscriber {
        let RawConnection { mut reader, writer } = self;
        let (tx, events) = mpsc::channel(1024);
        tokio::spawn(async move {
            let _writer = writer;
            while let Ok(frame) = read_frame(&mut reader).await {
                if tx.send(frame).await.is_err() {
                    break;
                }
            }
        });
        Subscriber {
            run: run.into(),
            events,
            _client: None,
        }
    }
}

#[test]
fn a_client_that_falls_too_far_behind_gets_a_snapshot_while_a_lossless_client_gets_every_byte() {
    let home = Home::new();
    let id = home.start(&["demo"]);
    wait_for_prompt(&home, &id);
    // Three lag limits: the stalled client's queue and socket buffer hold a
    // few MiB, so it ends far more than one limit behind.
    let flood = 3 * LAG_LIMIT;

    let rt = runtime();
    let slow = rt.block_on(async {
        let mut slow = RawConnection::open(&home).await;
        slow.request(
            1,
            method::RUNS_ATTACH,
            json!({ "run": id, "offset": 0, "lossless": false }),
        )
        .await;
        slow
    });
    let mut fast = rt.block_on(subscribe(&home, &id, Some(0), true));
    let fast_reader = rt.spawn(async move {
        let mut got = Contiguous::new(0);
        loop {
            match fast.next().await {
                Seen::Output { offset, bytes } => got.push(offset, &bytes),
                Seen::End { last: true, error, .. } => {
                    assert_eq!(error, None);
                    break got;
                }
                Seen::End { skipped: false, .. } => {}
                other => panic!("the lossless client was sent {other:?}"),
            }
        }
    });

    home.ok(&["send", &id, &format!("flood {flood}")]);
    // The daemon answers while the flood runs and the slow client reads
    // nothing: once per MiB of flood, and at least once however soon the
    // flood was over (a fast machine floods 24 MiB in a fraction of a
    // second): the slow client is then behind by all of it, unread.
    let mut at = log_len(&home, &id);
    loop {
        assert_daemon_serves(&home);
        if at >= flood {
            break;
        }
        home.wait_until("the flood goes on", || {
            let now = log_len(&home, &id);
            (now >= at + (1 << 20) || now >= flood).then(|| at = now).is_some()
        });
    }
    home.wait_until("the flood is over", || log_tail_contains(&home, &id, FLOOD_END));

    // Only now does the slow client read what the daemon kept for it: the
    // output it was sent before it stalled, then a snapshot and the skip
    // notice, then the output from there. Most often it is skipped once, as
    // it starts reading; it is skipped during the flood too when the daemon
    // got round to its stream only once the flood was far ahead (a busy
    // machine), and then again as it starts reading if still too far behind.
    let mut segments = rt.block_on(async {
        let mut sub = slow.start_reading(&id);
        let mut segments = vec![Segment {
            screen: None,
            got: Contiguous::new(0),
        }];
        let mut exit_sent = false;
        loop {
            match sub.next().await {
                Seen::Output { offset, bytes } => segments.last_mut().unwrap().got.push(offset, &bytes),
                Seen::Snapshot {
                    offset,
                    rows,
                    cols,
                    screen,
                } => {
                    let mut term = Terminal::new(rows, cols);
                    term.feed(&screen);
                    match sub.next().await {
                        Seen::End {
                            skipped: true,
                            last: false,
                            offset: skip,
                            ..
                        } => assert_eq!(skip, Some(offset), "the skip names the snapshot's offset"),
                        other => panic!("after the snapshot, expected the skip notice, got {other:?}"),
                    }
                    segments.push(Segment {
                        screen: Some(term),
                        got: Contiguous::new(offset),
                    });
                    if !exit_sent {
                        home.ok(&["send", &id, "exit"]);
                        exit_sent = true;
                    }
                }
                Seen::End {
                    last: false,
                    skipped: false,
                    ..
                } => {}
                Seen::End { last: true, error, .. } => {
                    assert_eq!(error, None);
                    break segments;
                }
                other => panic!("the slow client was sent {other:?}"),
            }
        }
    });
    let fast = rt.block_on(fast_reader).expect("the lossless reader");
    assert_eq!(home.wait_end(&id)["state"], "succeeded");
    let log = std::fs::read(home.log_path(&id)).expect("the output log");

    assert!(segments.len() > 1, "the slow client was never skipped ahead");
    for pair in segments.windows(2) {
        let (before, after) = (&pair[0].got, &pair[1].got);
        assert!(
            after.from > before.end() + LAG_LIMIT,
            "skipped from {} to {}: less than the lag limit",
            before.end(),
            after.from
        );
    }
    let last = segments.pop().expect("a last segment");
    for (i, segment) in segments.iter().enumerate() {
        let what = format!("segment {i} of the slow client's output");
        assert_same_bytes(
            &segment.got.bytes,
            &log[segment.got.from as usize..segment.got.end() as usize],
            &what,
        );
    }
    // The last snapshot and the output after it make the run's last screen.
    let mut screen = last.screen.expect("the last segment starts at a snapshot");
    screen.feed(&last.got.bytes);
    let lines = screen.visible_lines();
    assert!(
        shows_line(&lines, FLOOD_END) && shows_line(&lines, BYE),
        "the screen from the last snapshot on: {lines:#?}"
    );
    assert_same_bytes(
        &last.got.bytes,
        &log[last.got.from as usize..],
        "after the last snapshot",
    );
    assert_same_bytes(&fast.bytes, &log, "the lossless client");
}

/// What a client that is not lossless got from one point on: from the
/// start, or from a snapshot it was sent when skipped ahead.
struct Segment {
    screen: Option<Terminal>,
    got: Contiguous,
}

// ── 3. Bad input on the socket ──────────────────────────────────────────
