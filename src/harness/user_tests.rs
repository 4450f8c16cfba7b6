use std::collections::BTreeMap;
use std::path::Path;

use super::*;

fn declared(text: &str) -> Result<Families, String> {
    let defs: BTreeMap<String, FamilyDef> = toml::from_str(text).map_err(|e| e.to_string())?;
    Families::read(&defs)
}

const MYCLI: &str = r#"
[mycli]
binary = "mycli"
prompt = ["--prompt", "{}"]
session_id = ["--session-id", "{}"]
resume = ["--resume", "{}"]
fork = ["--fork", "{}"]
sessions = "~/.mycli/sessions/chat-{}.jsonl"
transcript = "claude"
env = ["MYCLI_API_KEY", "MYCLI_*"]
yes = "y"
no = "n"
"#;

fn launch(family: &dyn Adapter, args: &[&str]) -> Launch {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let env = vec![("HOME".to_string(), "/home/u".to_string())];
    family
        .launch(&LaunchContext {
            args: &args,
            env: &env,
            profile: None,
            run_dir: Path::new("/r"),
            agents_bin: Path::new("/a"),
            cwd: Path::new("/w"),
        })
        .unwrap()
}

#[test]
fn a_declared_family_launches_with_a_session_id_of_agents_and_resumes_it_in_the_same_file() {
    let families = declared(MYCLI).unwrap();
    let mycli = families.adapter("mycli").unwrap();
    assert_eq!(mycli.family(), "mycli");
    let new = launch(mycli, &["--verbose"]);
    assert_eq!(new.argv[..2], ["mycli", "--session-id"]);
    assert_eq!(new.argv[3], "--verbose");
    let session = new.session.unwrap();
    assert_eq!(session.id, new.argv[2]);
    let file = format!("/home/u/.mycli/sessions/chat-{}.jsonl", session.id);
    assert_eq!(session.transcript.as_deref(), Some(Path::new(&file)));

    let args = mycli.resume_args("abc-123").unwrap();
    assert_eq!(args, ["--resume", "abc-123"]);
    let resumed = launch(mycli, &["--resume", "abc-123"]);
    assert_eq!(resumed.argv, ["mycli", "--resume", "abc-123"], "no new id on a resume");
    let session = resumed.session.unwrap();
    assert_eq!(session.id, "abc-123");
    assert_eq!(
        session.transcript.as_deref(),
        Some(Path::new("/home/u/.mycli/sessions/chat-abc-123.jsonl"))
    );
    // A fork's new session is the CLI's own: found once its file appears.
    assert!(launch(mycli, &["--fork", "abc-123"]).session.is_none());

    assert_eq!(
        mycli.prompt_args("fix it"),
        Some(vec!["--prompt".into(), "fix it".into()])
    );
    assert_eq!(mycli.answer_keys(true), b"y");
    assert_eq!(mycli.answer_keys(false), b"n");
    assert!(mycli.harness_env().admits("MYCLI_API_KEY") && mycli.harness_env().admits("MYCLI_MODEL"));
    assert!(!mycli.harness_env().admits("OPENAI_API_KEY"));
    assert!(!mycli.sandbox_ready(), "not declared ready");
}

#[test]
fn a_fork_that_resumes_with_one_more_word_is_told_from_a_resume() {
    let families = declared(
        "[forky]\nbinary = \"f\"\nresume = [\"--resume\", \"{}\"]\nfork = [\"--resume\", \"{}\", \"--fork-session\"]\n\
         sessions = \"~/f/{}.jsonl\"\n",
    )
    .unwrap();
    let forky = families.adapter("forky").unwrap();
    let resumed = launch(forky, &["--resume", "s1"]).session.unwrap();
    assert_eq!(resumed.id, "s1");
    assert!(launch(forky, &["--resume", "s1", "--fork-session"]).session.is_none());
}

#[test]
fn a_session_it_named_itself_is_the_newest_file_of_its_shape_since_the_run_began() {
    let home = tempfile::tempdir().unwrap();
    let families = declared(
        "[selfnamed]\nbinary = \"x\"\nresume = [\"-r\", \"{}\"]\nsessions = \"~/s/{}.json\"\ntranscript = \"gemini\"\n",
    )
    .unwrap();
    let family = families.adapter("selfnamed").unwrap();
    let query = SessionQuery {
        cwd: "/w".into(),
        started: std::time::SystemTime::now() - std::time::Duration::from_secs(2),
        config_home: None,
        home: Some(home.path().to_path_buf()),
    };
    assert!(family.find_session(&query).is_none(), "no folder yet");
    std::fs::create_dir_all(home.path().join("s")).unwrap();
    std::fs::write(home.path().join("s/notes.txt"), "not a session").unwrap();
    std::fs::write(home.path().join("s/s-42.json"), "{}").unwrap();
    let found = family.find_session(&query).unwrap();
    assert_eq!(found.id, "s-42");
    assert_eq!(family.session_roots(&query), vec![home.path().join("s")]);
    assert!(launch(family, &[]).session.is_none(), "no id of agents: found later");
}

#[test]
fn a_wrong_declaration_is_refused_naming_the_family_and_what_is_wrong() {
    let refused = |text: &str, says: &str| {
        let e = declared(text).unwrap_err();
        assert!(e.contains(says), "{text}: {e}");
    };
    refused("[a]\nprompt = [\"{}\"]\n", "harnesses.a: binary is needed");
    refused(
        "[a]\nbinary = \"a\"\nresume = [\"--resume\"]\n",
        "harnesses.a: resume needs {}",
    );
    refused("[claude]\nbinary = \"c\"\n", "claude is a family agents knows already");
    refused("[shell]\nbinary = \"c\"\n", "shell is a family agents knows already");
    refused("[\"My CLI\"]\nbinary = \"c\"\n", "a-z, 0-9");
    refused(
        "[a]\nbinary = \"a\"\nsessions = \"~/s/{}.x\"\ntranscript = \"word\"\n",
        "transcript 'word' is not a format",
    );
    refused(
        "[a]\nbinary = \"a\"\ntranscript = \"claude\"\n",
        "transcript needs sessions",
    );
    refused(
        "[a]\nbinary = \"a\"\nsessions = \"~/s/{}.db\"\ntranscript = \"opencode\"\n",
        "transcript 'opencode' is not a format",
    );
    refused("[a]\nbinary = \"a\"\nsessions = \"relative/{}.x\"\n", "sessions must");
    refused("[a]\nbinary = \"a\"\nsessions = \"~/{}/s.x\"\n", "in the file's name");
    refused("[a]\nbinary = \"a\"\nenv = [\"NOT A NAME\"]\n", "not a variable name");
    refused("[a]\nbinary = \"a\"\nyes = \"\"\n", "yes must be 1 to 16 bytes");
    refused("[a]\nbinary = \"a\"\nflavour = 1\n", "unknown field");
}

#[test]
fn an_unchanged_declaration_read_again_is_the_same_family_and_a_changed_one_a_new_one() {
    let first = declared(MYCLI).unwrap().adapter("mycli").unwrap();
    let again = declared(MYCLI).unwrap().adapter("mycli").unwrap();
    assert!(std::ptr::addr_eq(first, again), "kept once");
    let changed = declared(&MYCLI.replace("yes = \"y\"", "yes = \"Y\"")).unwrap();
    let changed = changed.adapter("mycli").unwrap();
    assert!(!std::ptr::addr_eq(first, changed));
    assert_eq!(changed.answer_keys(true), b"Y");
    // Built-ins are found through a config's families too, and listed first.
    let families = declared(MYCLI).unwrap();
    assert_eq!(families.adapter("codex").unwrap().family(), "codex");
    assert_eq!(families.known().last(), Some(&"mycli"));
}
