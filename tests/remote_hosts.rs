//! Remote hosts over a real OpenSSH server on loopback (docs/design.md §8, §11):
//! host keys verified strictly, runs placed on the host through
//! `agents serve --stdio` and mirrored here with the same ids.
//!
//! Client and "remote" are the same machine: the remote agents is this same
//! binary with another AGENTS_HOME (`--remote-home`).

mod common;
mod sshd;

use serde_json::Value;
use sshd::{Net, local_user};

fn find<'a>(runs: &'a Value, id: &str) -> Option<&'a Value> {
    runs.as_array()?.iter().find(|r| r["id"] == id)
}

#[test]
fn a_host_from_the_ssh_config_is_added_and_checked() {
    let net = Net::new();
    net.know_the_host();
    // An alias: HostName, Port, User and IdentityFile come from ~/.ssh/config.
    std::fs::rename(net.ssh_dir().join("id_ed25519"), net.ssh_dir().join("lab_key")).unwrap();
    std::fs::write(
        net.ssh_dir().join("config"),
        format!(
            "Host testbox\n    HostName 127.0.0.1\n    Port {}\n    User {}\n    IdentityFile ~/.ssh/lab_key\n",
            net.sshd.port,
            local_user()
        ),
    )
    .unwrap();
    net.add_host("box", "testbox");

    let report = net.ok(&["hosts", "check", "box"]);
    assert!(report.contains("ok: runs can be placed"), "{report}");
    assert!(report.contains(&net.sshd.fingerprint()), "{report}");

    let check = net.json(&["hosts", "check", "box", "--json"]);
    assert_eq!(check["ok"], true, "{check}");
    assert_eq!(
        check["address"],
        format!("{}@127.0.0.1:{}", local_user(), net.sshd.port)
    );
    assert_eq!(check["remote_version"], format!("agents {}", env!("CARGO_PKG_VERSION")));
    assert_eq!(check["remote_daemon"]["home"], net.remote_home(), "{check}");

    let hosts = net.json(&["hosts", "ls", "--json"]);
    assert_eq!(hosts[0]["name"], "box");
    assert_eq!(hosts[0]["target"], "testbox");
    // A duplicate name is refused; a removed host is gone.
    assert!(net.fails(&["hosts", "add", "box", "x@y"]).contains("already exists"));
    net.ok(&["hosts", "rm", "box"]);
    assert_eq!(net.json(&["hosts", "ls", "--json"]), serde_json::json!([]));
}

#[test]
fn an_unknown_host_key_is_refused_with_its_fingerprint_until_trusted() {
    let net = Net::new();
    net.add_host("box", &net.target());
    let fingerprint = net.sshd.fingerprint();

    let err = net.fails(&["hosts", "check", "box"]);
    assert!(err.contains("is not known"), "{err}");
    assert!(err.contains(&fingerprint), "{err}");
    assert!(err.contains("agents hosts trust box"), "{err}");
    assert!(!net.known_hosts().exists(), "nothing trusted silently");

    // A pinned fingerprint that does not match trusts nothing.
    let err = net.fails(&["hosts", "trust", "box", "--fingerprint", "SHA256:not-it"]);
    assert!(err.contains("not the expected"), "{err}");

    let out = net.ok(&["hosts", "trust", "box", "--fingerprint", &fingerprint]);
    assert!(out.contains(&fingerprint), "{out}");
    let known = std::fs::read_to_string(net.known_hosts()).unwrap();
    assert!(
        known.starts_with(&format!("[127.0.0.1]:{} ssh-ed25519 ", net.sshd.port)),
        "{known}"
    );

    let report = net.ok(&["hosts", "check", "box"]);
    assert!(report.contains("ok: runs can be placed"), "{report}");
    // Trusting again writes nothing more.
    assert!(net.ok(&["hosts", "trust", "box"]).contains("already known"));
    assert_eq!(std::fs::read_to_string(net.known_hosts()).unwrap(), known);
}

#[test]
fn a_changed_host_key_is_refused_and_never_trusted() {
    let net = Net::new();
    // known_hosts holds another ed25519 key for this host and port.
    let other = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(other.path().join("k"))
        .status()
        .unwrap();
    assert!(status.success());
    let other_pub = std::fs::read_to_string(other.path().join("k.pub")).unwrap();
    let mut fields = other_pub.split_whitespace();
    let line = format!(
        "[127.0.0.1]:{} {} {}\n",
        net.sshd.port,
        fields.next().unwrap(),
        fields.next().unwrap()
    );
    std::fs::write(net.known_hosts(), &line).unwrap();
    net.add_host("box", &net.target());

    let err = net.fails(&["hosts", "check", "box"]);
    assert!(err.contains("HOST KEY CHANGED"), "{err}");
    assert!(err.contains(&net.sshd.fingerprint()), "{err}");
    assert!(err.contains("line 1"), "{err}");

    let err = net.fails(&["hosts", "trust", "box"]);
    assert!(err.contains("HOST KEY CHANGED"), "{err}");
    assert_eq!(std::fs::read_to_string(net.known_hosts()).unwrap(), line);

    // A run placed there is blocked, and says why.
    let out = net.run(&["run", "-d", "--host", "box", "cmd", "--", "true"]);
    assert!(!out.status.success());
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let run = net.json(&["show", &id, "--json"]);
    assert_eq!(run["state"], "blocked");
    assert!(run["reason"].as_str().unwrap().contains("HOST KEY CHANGED"), "{run}");
}

#[test]
fn a_remote_run_succeeds_and_its_output_is_read_here() {
    let net = Net::new();
    net.know_the_host();
    net.add_host("box", &net.target());
    let remote_cwd = tempfile::tempdir().unwrap();

    let id = net.start_on(
        "box",
        &[
            "--cwd",
            &remote_cwd.path().display().to_string(),
            "cmd",
            "--",
            "sh",
            "-c",
            "echo remote-ok; pwd",
        ],
    );
    let ended: Value = serde_json::from_str(&net.ok(&["wait", &id, "--json"])).unwrap();
    assert_eq!(ended["state"], "succeeded", "{ended}");
    assert_eq!(ended["host"], "box");

    // The same id here and there.
    let here = net.json(&["ls", "--all", "--json"]);
    let mirrored = find(&here, &id).expect("the remote run is listed here");
    assert_eq!(mirrored["host"], "box");
    assert_eq!(mirrored["state"], "succeeded");
    let there = net.remote.show(&id);
    assert_eq!(there["host"], "local");
    assert_eq!(there["state"], "succeeded");
    assert_eq!(there["cwd"], remote_cwd.path().display().to_string());

    let logs = net.ok(&["logs", &id]);
    assert!(
        logs.contains("remote-ok"),
        "{logs:?} mirror {:?} remote {:?} show {}",
        std::fs::read(net.local.log_path(&id)),
        std::fs::read(net.remote.log_path(&id)),
        net.ok(&["show", &id])
    );
    assert!(logs.contains(&remote_cwd.path().display().to_string()), "{logs}");
    let raw = net.cmd(&["logs", "--raw", &id]).output().unwrap().stdout;
    assert_eq!(
        raw,
        std::fs::read(net.remote.log_path(&id)).unwrap(),
        "mirror == remote log"
    );
    let table = net.ok(&["ls", "--all"]);
    assert!(table.contains("HOST") && table.contains(" box "), "{table}");

    let hosts = net.json(&["hosts", "ls", "--json"]);
    assert_eq!(hosts[0]["link"], "up", "{hosts}");
    assert!(hosts[0]["latency_ms"].is_u64(), "{hosts}");
    assert_eq!(hosts[0]["live_runs"], 0);
}

#[test]
fn prompts_and_cancels_for_a_remote_run_go_over_the_link() {
    let net = Net::new();
    net.know_the_host();
    net.add_host("box", &net.target());

    let reader = net.start_on("box", &["cmd", "--", "sh", "-c", "read line; echo got-$line"]);
    let sent = net.ok(&["send", &reader, "hello"]);
    assert!(sent.contains("prompt"), "{sent}");
    let ended: Value = serde_json::from_str(&net.ok(&["wait", &reader, "--json"])).unwrap();
    assert_eq!(ended["state"], "succeeded", "{ended}");
    assert!(net.ok(&["logs", &reader]).contains("got-hello"));

    let sleeper = net.start_on("box", &["cmd", "--", "sleep", "600"]);
    net.wait_until("the remote sleeper runs", || net.remote.state(&sleeper) == "running");
    let shown = net.json(&["show", &sleeper, "--json"]);
    assert_eq!(shown["host"], "box");
    assert_eq!(shown["state"], "running");
    net.ok(&["cancel", &sleeper]);
    assert_eq!(net.json(&["show", &sleeper, "--json"])["state"], "cancelled");
    assert_eq!(net.remote.state(&sleeper), "cancelled");
}

#[test]
fn a_missing_remote_binary_blocks_the_run_with_the_reason() {
    let net = Net::new();
    net.know_the_host();
    net.ok(&[
        "hosts",
        "add",
        "box",
        &net.target(),
        "--remote-bin",
        "/nonexistent/agents",
        "--remote-home",
        &net.remote_home(),
    ]);
    let report = net.run(&["hosts", "check", "box"]);
    assert!(!report.status.success());
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        text.contains("not ready") && text.contains("/nonexistent/agents"),
        "{text}"
    );

    let out = net.run(&["run", "-d", "--host", "box", "cmd", "--", "sh", "-c", "echo never"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("blocked"), "{err}");
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let run = net.json(&["show", &id, "--json"]);
    assert_eq!(run["state"], "blocked");
    assert_eq!(run["host"], "box");
    let reason = run["reason"].as_str().unwrap();
    assert!(
        reason.contains("/nonexistent/agents") && reason.contains("not found"),
        "{reason}"
    );
    // Nothing started there: no remote daemon, no run.
    assert!(!net.remote.path().join("daemon.sock").exists());
    assert!(!net.remote.path().join("runs").join(&id).exists());
}

#[test]
fn a_remote_run_is_followed_again_after_the_local_daemon_restarts() {
    let net = Net::new();
    net.know_the_host();
    net.add_host("box", &net.target());
    let id = net.start_on("box", &["cmd", "--", "sh", "-c", "echo before; read x; echo got-$x"]);
    net.wait_mirrored(&id, "before");
    net.ok(&["daemon", "stop"]);

    // The next command starts the daemon again; it follows the run from
    // the mirror's length, and the prompt is forwarded to the host.
    net.ok(&["send", &id, "again"]);
    let ended: Value = serde_json::from_str(&net.ok(&["wait", &id, "--json"])).unwrap();
    assert_eq!(ended["state"], "succeeded", "{ended}");
    let mirror = std::fs::read(net.local.log_path(&id)).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&mirror),
        String::from_utf8_lossy(&std::fs::read(net.remote.log_path(&id)).unwrap()),
        "no byte lost or doubled across the restart"
    );
    assert!(String::from_utf8_lossy(&mirror).contains("got-again"));
}

/// One frame: `u32` length, kind 1 (control), JSON.
fn control_frame(json: &str) -> Vec<u8> {
    let mut out = ((json.len() + 1) as u32).to_be_bytes().to_vec();
    out.push(1);
    out.extend_from_slice(json.as_bytes());
    out
}

fn read_control(r: &mut impl std::io::Read) -> Value {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).unwrap();
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    r.read_exact(&mut body).unwrap();
    assert_eq!(body[0], 1, "a control frame");
    serde_json::from_slice(&body[1..]).unwrap()
}

fn read_line(r: &mut impl std::io::Read) -> String {
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while r.read(&mut b).unwrap() == 1 && b[0] != b'\n' {
        line.push(b[0]);
    }
    String::from_utf8(line).unwrap()
}

#[test]
fn serve_stdio_relays_the_protocol_to_this_hosts_daemon_starting_it() {
    use std::io::Write;
    let home = common::Home::new();
    let mut serve = std::process::Command::new(common::BIN)
        .args(["serve", "--stdio", "--home"])
        .arg(home.path())
        .env_remove("AGENTS_HOME")
        .env("XDG_CONFIG_HOME", home.config.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = serve.stdin.take().unwrap();
    let mut output = serve.stdout.take().unwrap();
    input
        .write_all(format!("agents/1 {}\n", env!("CARGO_PKG_VERSION")).as_bytes())
        .unwrap();
    input
        .write_all(&control_frame(
            r#"{"jsonrpc":"2.0","id":7,"method":"daemon.status","params":{}}"#,
        ))
        .unwrap();
    assert!(read_line(&mut output).starts_with("agents/1 "));
    let answer = read_control(&mut output);
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["home"], home.path().display().to_string());
    drop(input);
    assert!(serve.wait().unwrap().success(), "serve ends when its peer does");

    // A peer of another protocol is told why, in a frame, and refused.
    let mut serve = std::process::Command::new(common::BIN)
        .args(["serve", "--stdio", "--home"])
        .arg(home.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut input = serve.stdin.take().unwrap();
    let mut output = serve.stdout.take().unwrap();
    input.write_all(b"agents/999 9.9.9\n").unwrap();
    assert!(read_line(&mut output).starts_with("agents/1 "));
    let refusal = read_control(&mut output);
    assert_eq!(refusal["error"]["data"]["code"], "version_mismatch", "{refusal}");
    assert!(!serve.wait().unwrap().success());
}

/// Appends `text` to the client's `~/.ssh/config`.
fn ssh_config(net: &Net, text: &str) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(net.ssh_dir().join("config"))
        .unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

/// Places `echo WORD` on `host` and insists it ran there.
fn echo_on(net: &Net, host: &str, word: &str) {
    let id = net.start_on(host, &["cmd", "--", "sh", "-c", &format!("echo {word}")]);
    let ended: Value = serde_json::from_str(&net.ok(&["wait", &id, "--json"])).unwrap();
    assert_eq!(ended["state"], "succeeded", "{ended}");
    assert!(net.ok(&["logs", &id]).contains(word));
    assert_eq!(net.remote.show(&id)["state"], "succeeded", "it ran there");
}

#[test]
fn a_host_defined_only_in_an_included_file_is_found() {
    // As OrbStack, Colima and many companies write them.
    let net = Net::new();
    net.know_the_host();
    let included = net.ssh_dir().join("config.d");
    std::fs::create_dir(&included).unwrap();
    std::fs::write(
        included.join("lab"),
        format!(
            "Host lab-box\n    HostName 127.0.0.1\n    Port {}\n    User {}\n    IdentityFile ~/.ssh/id_ed25519\n",
            net.sshd.port,
            local_user()
        ),
    )
    .unwrap();
    ssh_config(&net, &format!("Include {}/*\n", included.display()));
    net.add_host("box", "lab-box");
    let check = net.json(&["hosts", "check", "box", "--json"]);
    assert_eq!(check["ok"], true, "{check}");
    assert_eq!(
        check["address"],
        format!("{}@127.0.0.1:{}", local_user(), net.sshd.port)
    );
    echo_on(&net, "box", "found-by-include");
}

#[test]
fn a_host_behind_a_jump_host_is_reached_through_it_by_proxyjump_or_proxycommand() {
    // The host's own port is reached only through the jump host here as
    // it would be behind a bastion: a second sshd forwards to it.
    let net = Net::new();
    net.know_the_host();
    let jump = sshd::Sshd::start(&net.ssh_dir().join("id_ed25519.pub"), net.remote.config.path());
    net.know_the_host_at_line(&jump.known_hosts_line());
    let config = net.ssh_dir().join("config");
    // The jump is reached by OpenSSH's own client, which takes `~` as the
    // account's home: its files are named in full.
    ssh_config(
        &net,
        &format!(
            "Host jump\n    HostName 127.0.0.1\n    Port {jport}\n    User {user}\n    IdentityFile {key}\n    \
             UserKnownHostsFile {known}\n    StrictHostKeyChecking yes\n\
             Host inner\n    HostName 127.0.0.1\n    Port {port}\n    User {user}\n    ProxyJump jump\n\
             Host inner-by-command\n    HostName 127.0.0.1\n    Port {port}\n    User {user}\n    \
             ProxyCommand ssh -F {config} -o BatchMode=yes -W %h:%p jump\n",
            jport = jump.port,
            port = net.sshd.port,
            user = local_user(),
            key = net.ssh_dir().join("id_ed25519").display(),
            known = net.known_hosts().display(),
            config = config.display(),
        ),
    );
    let through_jump = || jump.log().matches("Accepted publickey").count();
    for (name, alias) in [("box", "inner"), ("box2", "inner-by-command")] {
        let before = through_jump();
        net.add_host(name, alias);
        let check = net.json(&["hosts", "check", name, "--json"]);
        assert_eq!(check["ok"], true, "{alias}: {check}\njump log:\n{}", jump.log());
        echo_on(&net, name, &format!("through-{alias}"));
        assert!(
            through_jump() > before,
            "{alias} went through the jump host:\n{}",
            jump.log()
        );
    }
}
