//! The page in a real headless Chromium: what a person sees and clicks.

use serde_json::Value;

use crate::browser::Browser;
use crate::common::Home;
use crate::served::{HEADLESS, Served, chromium};

/// The page in a real headless Chromium, opened at the URL printed: it
/// lists the live run and the ended one, and the reason an ended run
/// carries — here a path with markup in it — shows as text.
#[test]
fn the_page_lists_the_runs_in_a_real_browser_and_their_words_stay_text() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: no chromium (the CI installs Debian's)");
        return;
    };
    let home = Home::new();
    let alive = home.start(&["--name", "alive", "cmd", "--", "sleep", "600"]);
    home.start(&["--name", "kid", "--parent", &alive, "cmd", "--", "sleep", "600"]);
    let odd = "/tmp/no-such-<b>bold</b>-dir";
    let blocked = home.run(&["run", "-d", "--name", "odd", "--cwd", odd, "cmd", "--", "true"]);
    assert!(!blocked.status.success(), "blocked: the cwd does not exist");
    let web = Served::start(&home);
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(chromium)
        .args(HEADLESS)
        .args(["--virtual-time-budget=5000", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .env("TMPDIR", profile.path())
        .arg(&web.url)
        .output()
        .expect("chromium");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(dom.contains(r#"<span class="name">alive</span>"#), "{dom}");
    assert!(dom.contains(r#"<span class="name">odd</span>"#), "{dom}");
    assert!(
        dom.contains("no-such-&lt;b&gt;bold&lt;/b&gt;-dir") && !dom.contains("<b>bold</b>"),
        "the reason as text: {dom}"
    );
    // The TUI header's counts, in its words.
    assert!(
        dom.contains("0 working · 0 waiting · 2 idle · 0 succeeded · 0 failed · 1 blocked"),
        "{dom}"
    );
    // The tree: the child under the run that started it.
    let (parent, child) = (
        dom.find(r#"<span class="name">alive</span>"#),
        dom.find(r#"<span class="name">kid</span>"#),
    );
    assert!(parent < child, "{dom}");
    let kid_row = &dom[..child.unwrap()];
    let kid_row = &kid_row[kid_row.rfind("<li").unwrap()..];
    assert!(kid_row.contains(r#"data-depth="1""#), "{kid_row}");
}

/// On a phone's screen: the run that needs you is first; tapped, its sheet
/// offers the question's answers, `yes` answers it, and a prompt typed in
/// the sheet's box reaches the agent — by clicks in a real Chromium.
#[test]
fn in_a_real_browser_a_question_is_answered_and_a_prompt_sent_by_clicks() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: no chromium (the CI installs Debian's)");
        return;
    };
    let home = Home::new();
    home.start(&["--name", "quiet", "cmd", "--", "sleep", "600"]);
    let asker = home.start(&["--name", "asker", "demo", "--", "--ask"]);
    home.wait_until("the question", || home.show(&asker)["status"] == "needs_approval");
    let web = Served::start(&home);
    let mut page = Browser::open(chromium, &web.url);
    page.wait_for(
        "the asker listed first",
        "document.querySelector('.run .name')?.textContent === 'asker'",
    );
    assert_eq!(
        page.eval("location.hash"),
        Value::from(""),
        "the token left the address bar"
    );
    page.wait_for("the change feed up", "feedUp === true");
    page.eval("document.querySelector('.run').click()");
    page.wait_for("its answers offered", "!document.getElementById('answers').hidden");
    // Its screen, as its emulator read it: the question it asks.
    page.wait_for(
        "its screen shown",
        "document.getElementById('screen').textContent.includes('Do you want to proceed?')",
    );
    page.eval("document.getElementById('answer-yes').click()");
    page.wait_for(
        "answered",
        "document.getElementById('outcome').textContent === 'answered yes'",
    );
    home.wait_until("the agent approved", || home.logs(&asker).contains("approved"));
    page.wait_for("no question now", "document.getElementById('answers').hidden");
    page.eval("document.getElementById('prompt').value = 'from a phone'; document.getElementById('send').click()");
    home.wait_until("the prompt typed in", || {
        home.logs(&asker).contains("you said \"from a phone\"")
    });
}

/// A run that starts waiting for you while the page is open is the
/// browser's own notification ("NAME needs you"), once it is allowed; the
/// tab's title counts those that need you; a click on the notification
/// opens the run's sheet.
#[test]
fn a_run_that_starts_waiting_is_a_browser_notification_that_opens_it() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: no chromium (the CI installs Debian's)");
        return;
    };
    let home = Home::new();
    let id = home.start(&["--name", "helper", "demo"]);
    home.wait_until("at its prompt", || home.show(&id)["status"] == "idle");
    let web = Served::start(&home);
    let mut page = Browser::open(chromium, &web.url);
    page.wait_for(
        "the run listed",
        "document.querySelector('.run .name')?.textContent === 'helper'",
    );
    page.wait_for("the change feed up", "feedUp === true");
    // Headless Chromium shows no notifications and grants none (its
    // permission stays `default`, DevTools' grant or not): the browser's
    // Notification is stood in for by one that is allowed and notes each.
    page.eval(
        "window.shown = []; window.Notification = class { \
         static permission = 'granted'; constructor(title, options) { this.title = title; shown.push(this); } }",
    );
    home.ok(&["send", &id, "ask"]);
    page.wait_for(
        "the notification",
        "shown.length === 1 && shown[0].title === 'helper needs you'",
    );
    assert_eq!(page.eval("document.title"), Value::from("(1) agents"));
    page.eval("shown[0].onclick()");
    page.wait_for(
        "its sheet open",
        "document.getElementById('sheet-name').textContent === 'helper'",
    );
}
