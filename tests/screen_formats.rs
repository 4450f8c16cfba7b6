//! Screen formats end to end: a client of an older build attaches without
//! naming a format (or names 1) and still gets a screen it can draw, in
//! format 1; a client that asks for format 2 gets underline styles and
//! colours too. Against a real daemon, supervisor and run.

mod common;

use agents::api::{AckParams, method};
use agents::client::Client;
use agents::paths::Paths;
use agents::protocol::Frame;
use agents::protocol::screen::{Color, FORMAT, FORMAT_V1, ScreenMirror, ScreenUpdate, Underline, flag};
use common::{Home, PATIENCE};
use serde_json::json;

/// Bold red, single underline, curly underline in an underline colour,
/// strike-through: one word each.
const PRINTED: &str = r"printf '\033[1;31mbold\033[m \033[4msingle\033[m \033[4:3;58;5;2mcurly\033[m \033[9mstrike\033[m\n'; exec sleep 600";

/// Attaches as a client that sends `screen_format` as given (an old build
/// sends none), until the screen shows the last word; returns the mirror
/// and the format byte of every update.
fn attach(home: &Home, run: &str, screen_format: Option<u8>) -> (ScreenMirror, Vec<u8>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let paths = Paths::at(home.path().to_path_buf());
        let mut client = Client::connect_existing(&paths, true).await.expect("connect");
        let mut events = client.events.take().expect("events were asked for");
        let mut params = json!({ "run": run, "screen": true });
        if let Some(format) = screen_format {
            params["screen_format"] = json!(format);
        }
        client.call_raw(method::RUNS_ATTACH, params).await.expect("attach");
        let mut mirror = ScreenMirror::new(1, 1, 0);
        let mut formats = Vec::new();
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while !mirror.visible_lines().iter().any(|l| l.contains("strike")) {
            let frame = tokio::time::timeout_at(deadline, events.recv())
                .await
                .unwrap_or_else(|_| panic!("the screen never showed the words: {:?}", mirror.visible_lines()))
                .expect("the daemon kept the connection");
            if let Frame::Screen { run: of, bytes, .. } = frame
                && of == run
            {
                formats.push(bytes[0]);
                mirror
                    .apply(ScreenUpdate::decode(&bytes).expect("an update decodes"))
                    .expect("an update applies");
                let ack = AckParams {
                    run: run.to_string(),
                    offset: mirror.seq,
                    screen: true,
                    sub: 0,
                };
                client.notify::<method::RunsAck>(ack).await.expect("ack");
            }
        }
        (mirror, formats)
    })
}

/// The style of the first cell of `word` on the screen.
fn style_of(mirror: &ScreenMirror, word: &str) -> agents::protocol::screen::Style {
    let lines = mirror.visible_lines();
    let (row, line) = lines
        .iter()
        .enumerate()
        .find(|(_, l)| l.contains(word))
        .expect("the word");
    let col = line[..line.find(word).unwrap()].chars().count();
    mirror.cell(row as u16, col as u16).expect("a cell").style
}

#[test]
fn a_client_that_asks_for_no_format_or_format_1_gets_a_screen_it_can_draw() {
    let home = Home::new();
    let run = home.start(&["cmd", "--", "sh", "-c", PRINTED]);
    for asked in [None, Some(FORMAT_V1)] {
        let (mirror, formats) = attach(&home, &run, asked);
        assert!(
            formats.iter().all(|f| *f == FORMAT_V1),
            "{asked:?}: formats {formats:?}"
        );
        assert!(mirror.visible_lines()[0].starts_with("bold single curly strike"));
        let bold = style_of(&mirror, "bold");
        assert_eq!((bold.flags & flag::BOLD, bold.fg), (flag::BOLD, Color::Idx(1)));
        // The curly underline reaches it as an underline (its style and
        // colour are format 2's); strike-through fits format 1's flags.
        let curly = style_of(&mirror, "curly");
        assert_ne!(curly.flags & flag::UNDERLINE, 0);
        assert_eq!(
            (curly.underline, curly.underline_color),
            (Underline::Single, Color::Default)
        );
        assert_ne!(style_of(&mirror, "strike").flags & flag::STRIKE, 0);
    }
    let (mirror, formats) = attach(&home, &run, Some(FORMAT));
    assert!(formats.iter().all(|f| *f == FORMAT), "formats {formats:?}");
    let curly = style_of(&mirror, "curly");
    assert_eq!(
        (curly.underline, curly.underline_color),
        (Underline::Curly, Color::Idx(2))
    );
    assert_eq!(style_of(&mirror, "single").underline, Underline::Single);
}
