//! `agents attach` to a remote run whose link drops (docs/design.md §8): a banner
//! drawn by agents says the link is reconnecting, the view carries on when
//! it returns, and giving up leaves the way back on the shell. And the
//! session id printed before the screen is taken.

mod common;
mod sshd;

use common::pty::Pty;
use sshd::Net;

/// Ctrl-a d.
const DETACH: &[u8] = b"\x01d";

fn shows(lines: &[String], text: &str) -> bool {
    lines.iter().any(|l| l.contains(text))
}

fn banner(lines: &[String]) -> bool {
    lines.first().is_some_and(|l| l.contains("link to box reconnecting"))
}

#[test]
fn attach_shows_a_reconnecting_banner_while_the_link_is_cut_and_carries_on() {
    let net = Net::with_proxy();
    net.know_the_host();
    net.add_host("box", &net.target_via_proxy());
    let id = net.start_on(
        "box",
        &["cmd", "--", "sh", "-c", "echo first-line; read x; echo got-$x; read y"],
    );
    net.wait_mirrored(&id, "first-line");

    let mut attach = Pty::spawn(&net.local, &["attach", &id], 24, 100, net.local.path(), true);
    attach.wait_screen("the run's first line", |l| shows(l, "first-line"));

    net.proxy().cut();
    let screen = attach.wait_screen("the reconnecting banner", banner);
    assert!(
        screen[0].contains("the run goes on there") && screen[0].contains("Ctrl-a d"),
        "{}",
        screen[0]
    );
    net.proxy().restore();
    attach.wait_screen("the banner gone and the screen whole again", |l| {
        !banner(l) && shows(l, "first-line")
    });
    attach.type_bytes(b"again\r");
    attach.wait_screen("output that came over the restored link", |l| shows(l, "got-again"));

    // Giving up while the link is down leaves the way back on the shell.
    net.proxy().cut();
    attach.wait_screen("the banner again", banner);
    attach.type_bytes(DETACH);
    assert_eq!(attach.exit_code(), 0, "{}", attach.text());
    let text = attach.text();
    assert!(
        text.contains(&format!("({id}) while the link to box is down")),
        "{text}"
    );
    assert!(text.contains(&format!("back to it with: agents attach {id}")), "{text}");
    net.proxy().restore();
    assert_eq!(net.remote.state(&id), "running", "the run went on there");
}

#[test]
fn attach_prints_the_runs_session_id_before_taking_the_terminal() {
    // A stand-in claude: the session id is minted before it starts.
    let bin = tempfile::tempdir().unwrap();
    let claude = bin.path().join("claude");
    std::fs::write(
        &claude,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '2.1.197 (Claude Code)'; exit 0; fi\necho stand-in-ready; exec sleep 60\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = common::Home::with_config(&format!(
        "[engine]\nquiet_ms = 300\n[profiles.stand-in]\nfamily = \"claude\"\nbinary = \"{}\"\n",
        claude.display()
    ));
    let id = home.start(&["stand-in"]);
    let session = home.show(&id)["session_id"].as_str().expect("a session id").to_string();

    let mut attach = Pty::spawn(&home, &["attach", &id], 24, 100, home.path(), true);
    attach.wait_screen("the run's screen", |l| shows(l, "stand-in-ready"));
    attach.type_bytes(DETACH);
    assert_eq!(attach.exit_code(), 0, "{}", attach.text());
    let text = attach.text();
    let said = text.find(&format!("attaching to {id} (session {session})"));
    let screen = text.find("stand-in-ready");
    assert!(said.is_some_and(|at| screen.is_some_and(|s| at < s)), "{text}");
}
