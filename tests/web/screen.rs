//! A run's sheet in a real headless Chromium: its live screen drawn from
//! its cells (colours, attributes, cursor; never its bytes, never markup),
//! equal to `agents logs` at the same moment; keys typed into it; its
//! record, transcript, lineage and events; resumed from the page; and the
//! page's layout on a phone and a desktop, kept as screenshots.

use serde_json::{Value, json};

use crate::browser::Browser;
use crate::common::Home;
use crate::common::fake_claude::WithClaude;
use crate::served::{Served, chromium};

/// Lines as a terminal shows them, blank ones at the end left out.
fn trimmed(lines: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut lines: Vec<String> = lines.into_iter().map(|l| l.trim_end().to_string()).collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

/// The rows the page draws of the open run's screen.
fn drawn(page: &mut Browser) -> Vec<String> {
    let rows = page.eval("Screen.text()");
    trimmed(rows.as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()))
}

#[test]
fn a_runs_screen_is_its_cells_in_colour_equal_to_its_logs_and_takes_keys_typed_into_it() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: no chromium (the CI installs Debian's)");
        return;
    };
    let home = Home::new();
    // Forty numbered lines first: the first of them scroll off its screen.
    let painted =
        r"seq 1 40; printf 'plain line\n\033[1;31mred <script>alert(1)</script></pre>\033[0m after\n'; exec cat";
    let id = home.start(&["--name", "painter", "cmd", "--", "sh", "-c", painted]);
    home.wait_until("it printed", || home.logs(&id).contains("after"));
    let web = Served::start(&home);
    let mut page = Browser::open(chromium, &web.url);
    page.wait_for(
        "listed",
        "document.querySelector('.run .name')?.textContent === 'painter'",
    );
    page.eval("document.querySelector('.run').click()");
    page.wait_for("its screen drawn", "Screen.text().some((l) => l.includes('after'))");

    let red = page.eval(
        "(() => { const s = [...document.querySelectorAll('#rows span')].find((s) => s.textContent.startsWith('red')); \
         return [s.textContent, getComputedStyle(s).color, s.classList.contains('bold')]; })()",
    );
    assert_eq!(
        red,
        json!(["red <script>alert(1)</script></pre>", "rgb(205, 0, 0)", true])
    );
    assert_eq!(page.eval("document.querySelectorAll('#sheet script').length"), json!(0));
    // At the same moment (it waits on its input), the page's screen is
    // the end of what `agents logs` shows.
    let logs = trimmed(home.logs(&id).lines().map(str::to_string));
    let shown = drawn(&mut page);
    assert!(
        !shown.is_empty() && logs.ends_with(&shown),
        "page {shown:?} vs logs {logs:?}"
    );
    assert_eq!(page.eval("document.getElementById('cursor').hidden"), json!(false));
    // What scrolled off, on demand: the lines above the screen, as text.
    assert!(!shown.contains(&"1".to_string()), "line 1 scrolled off: {shown:?}");
    page.eval("document.getElementById('earlier').click()");
    page.wait_for(
        "the earlier lines shown",
        "!document.getElementById('earlier-lines').hidden",
    );
    let earlier = page.eval("document.getElementById('earlier-lines').textContent");
    let earlier: Vec<&str> = earlier.as_str().unwrap().lines().collect();
    assert_eq!(earlier[..3], ["1", "2", "3"], "{earlier:?}");
    assert!(earlier.iter().any(|l| l.starts_with("red <script>")), "{earlier:?}");

    // Typed into: focused by its button, then keys as a person presses them.
    page.eval("document.getElementById('type-into').click()");
    page.wait_for("the keys' box focused", "document.activeElement.id === 'keys'");
    page.press("h", 72, "h");
    page.press("i", 73, "i");
    page.press("Enter", 13, "\r");
    // The terminal's echo and `cat`'s copy of the line.
    home.wait_until("typed into the run", || {
        home.logs(&id).lines().filter(|l| l.trim_end() == "hi").count() == 2
    });
    page.wait_for(
        "and drawn",
        "Screen.text().filter((l) => l.trimEnd() === 'hi').length === 2",
    );
    // As a phone's keyboard types: text put in, no key told.
    page.call("Input.insertText", json!({ "text": "yo" }));
    page.press("Enter", 13, "\r");
    home.wait_until("a phone's keyboard typed into the run", || {
        home.logs(&id).lines().filter(|l| l.trim_end() == "yo").count() == 2
    });
}

/// A PNG's width and height, from its header.
fn png_size(path: &std::path::Path) -> (u32, u32) {
    let png = std::fs::read(path).unwrap();
    assert_eq!(&png[1..4], b"PNG", "{}", path.display());
    let word = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    (word(16), word(20))
}

#[test]
fn the_page_fits_a_phone_and_a_desktop_and_both_are_kept_as_screenshots() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: no chromium (the CI installs Debian's)");
        return;
    };
    let home = Home::new();
    home.start(&[
        "--name",
        "a-run-whose-name-is-rather-longer-than-a-phone-is-wide",
        "cmd",
        "--",
        "sleep",
        "600",
    ]);
    let wide = "printf '%0150d\\n' 0; exec sleep 600";
    home.start(&["--name", "wide", "cmd", "--", "sh", "-c", wide]);
    let asker = home.start(&["--name", "asker", "demo", "--", "--ask"]);
    home.wait_until("the question", || home.show(&asker)["status"] == "needs_approval");
    let web = Served::start(&home);
    let mut page = Browser::open(chromium, &web.url);
    for (width, height, mobile, name) in [
        (390, 844, true, "phone-390x844"),
        (1280, 800, false, "desktop-1280x800"),
    ] {
        page.size(width, height, mobile);
        page.wait_for(
            "the asker first",
            "document.querySelector('.run .name')?.textContent === 'asker'",
        );
        page.eval("document.querySelector('.run').click()");
        page.wait_for(
            "its question on its screen",
            "Screen.text().some((l) => l.includes('Do you want to proceed?'))",
        );
        assert_eq!(page.eval("window.innerWidth"), Value::from(width));
        assert_eq!(
            page.eval("document.documentElement.scrollWidth <= window.innerWidth"),
            Value::Bool(true),
            "no sideways scrolling at {width} px: {}",
            page.eval("document.documentElement.scrollWidth")
        );
        let shot = page.screenshot(name);
        assert_eq!(png_size(&shot), (width, height), "{}", shot.display());
        eprintln!("kept {}", shot.display());
    }
}

#[test]
fn a_sheet_shows_the_record_transcript_lineage_and_events_and_resumes_the_conversation() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: no chromium (the CI installs Debian's)");
        return;
    };
    let home = Home::new();
    let claude = WithClaude::new();
    let first = claude.ok(&home, &["run", "-d", "--name", "talker", "claude"]);
    home.wait_until("its transcript indexed", || {
        home.run(&["transcript", &first]).status.success()
    });
    home.ok(&["cancel", "--force", &first]);
    home.wait_end(&first);
    // The web view passes its environment to what it resumes, as the CLI.
    let mut web = claude.cmd(&home, &["web", "--listen", "127.0.0.1:0", "--json"]);
    let web = Served::spawn(&mut web);
    let mut page = Browser::open(chromium, &web.url);
    page.wait_for(
        "listed",
        "document.querySelector('.run .name')?.textContent === 'talker'",
    );
    page.eval("document.querySelector('.run').click()");
    page.wait_for("resume offered", "!document.getElementById('ended-actions').hidden");

    let tab = |page: &mut Browser, name: &str| {
        page.eval(&format!("document.querySelector('#tabs [data-tab={name}]').click()"))
    };
    tab(&mut page, "record");
    page.wait_for(
        "its record",
        &format!("[...document.querySelectorAll('#tab-record dd')].some((d) => d.textContent === '{first}')"),
    );
    tab(&mut page, "screen");
    assert_eq!(
        page.eval("getComputedStyle(document.getElementById('tab-record')).display"),
        Value::from("none"),
        "another tab hides the record"
    );
    tab(&mut page, "events");
    page.wait_for(
        "its events",
        "[...document.querySelectorAll('#tab-events .kind')].some((k) => k.textContent === 'RUN_CREATED')",
    );
    tab(&mut page, "transcript");
    page.wait_for(
        "the agent's transcript",
        "[...document.querySelectorAll('#tab-transcript .message.user .text')].some((t) => t.textContent === 'hello')",
    );

    page.eval("document.getElementById('resume').click()");
    page.wait_for(
        "the resumed run's sheet",
        &format!("selected !== '{first}' && document.getElementById('outcome').textContent.startsWith('resumed')"),
    );
    let resumed = page.eval("selected").as_str().unwrap().to_string();
    home.wait_until("resumed natively", || {
        String::from_utf8_lossy(&home.raw_log(&resumed)).contains("--resume")
    });
    tab(&mut page, "lineage");
    page.wait_for(
        "its lineage: the run it resumed, and it",
        "document.querySelectorAll('#tab-lineage .node').length === 2 \
         && document.querySelector('#tab-lineage .node.focus').textContent.includes('running')",
    );
}
