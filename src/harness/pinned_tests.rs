//! Every family's launch and session words, pinned before its adapter
//! became a description: what each harness is started with must not
//! change (the argv and environment are tested against the real CLIs).

use std::path::Path;

use super::{KNOWN, LaunchContext, Profile, adapter_for};

/// A minted session id reads the same each time.
fn masked(text: &str) -> String {
    let bytes = text.as_bytes();
    let is_uuid = |w: &[u8]| {
        w.len() == 36
            && w.iter().enumerate().all(|(i, b)| {
                if [8, 13, 18, 23].contains(&i) {
                    *b == b'-'
                } else {
                    b.is_ascii_hexdigit()
                }
            })
    };
    let (mut out, mut i) = (String::new(), 0);
    while i < bytes.len() {
        if i + 36 <= bytes.len() && is_uuid(&bytes[i..i + 36]) {
            out.push_str("<uuid>");
            i += 36;
        } else {
            let c = text[i..].chars().next().unwrap_or('?');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn described(family: &str) -> String {
    let adapter = adapter_for(family).unwrap();
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let profile = Profile {
        binary: Some("/opt/bin/x".into()),
        config_home: Some("~/cfg".into()),
        model: Some("m1".into()),
        ..Profile::default()
    };
    let own_home = adapter.config_home_var().map(|v| (v.to_string(), "/own".to_string()));
    let base = vec![("HOME".to_string(), "/home/u".to_string())];
    let with_own: Vec<_> = base.iter().cloned().chain(own_home).collect();
    type Env = Vec<(String, String)>;
    let cases: [(&str, Vec<String>, &Env, Option<&Profile>); 4] = [
        ("plain", strings(&["hello"]), &base, None),
        ("profile", strings(&["--flag"]), &base, Some(&profile)),
        ("own home", Vec::new(), &with_own, None),
        ("resuming", adapter.resume_args("S1").unwrap_or_default(), &base, None),
    ];
    let mut said = format!(
        "{family}: program {} config {:?} version {} sessions {} pastes {} enter {} yes {:?} no {:?}\n",
        adapter.program(),
        adapter.config_home_var(),
        adapter.has_version(),
        adapter.has_sessions(),
        adapter.pastes_prompts(),
        adapter.enter_delay_ms(),
        adapter.answer_keys(true),
        adapter.answer_keys(false),
    );
    let e = adapter.harness_env();
    said += &format!("  env {:?} {:?} {:?}\n", e.shared, e.names, e.prefixes);
    said += &format!(
        "  resume {:?}\n  fork {:?}\n",
        adapter.resume_args("S1"),
        adapter.fork_args("S1")
    );
    for prompt in ["hi there", "-x", "@f", "login now"] {
        said += &format!("  prompt {prompt:?}: {:?}\n", adapter.prompt_args(prompt));
    }
    for (name, args, env, profile) in &cases {
        let ctx = LaunchContext {
            args,
            env,
            profile: *profile,
            run_dir: Path::new("/run"),
            agents_bin: Path::new("/bin/agents"),
            cwd: Path::new("/home/u/proj"),
        };
        said += &format!("  {name}: {:?}\n", adapter.launch(&ctx));
    }
    masked(&said)
}

#[test]
fn every_family_s_launch_and_session_words_are_as_pinned() {
    let got: String = KNOWN.iter().map(|f| described(f)).collect();
    let want =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/harness/launches.txt"))
            .unwrap_or_default();
    if got != want {
        let out = std::env::temp_dir().join("launches.txt");
        std::fs::write(&out, &got).unwrap();
        panic!(
            "launches differ from the pinned ones; what they are now: {}",
            out.display()
        );
    }
}
