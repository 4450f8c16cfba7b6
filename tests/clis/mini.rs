//! End to end with the real mini-swe-agent: `agents run mini` in a PTY with
//! a private HOME and the settings its setup would write given in the
//! environment (`MSWEA_CONFIGURED`, `OPENAI_API_KEY`, `OPENAI_BASE_URL`
//! pointing at a small mock of the chat-completions API on loopback). Only
//! the model is mocked.
//!
//! What it proves: its variables are passed by name; the task given with
//! `--prompt` starts it (`-t`); its trajectory, a file of the run's own,
//! is read: the tasks, a `bash` call, its result, the replies and tokens;
//! each "Execute 1 action(s)?" is `needs_approval` and `agents answer yes`
//! runs the command (the one that ends a task too); a task sent later
//! goes in at its "Type new task" line; a prompt sent onto a draft the
//! user is typing there waits until it is erased; an empty line ends it
//! `succeeded`; a resume is a new run given the conversation's recent
//! part as its task (it keeps no sessions).
//!
//! Needs the CLI: `AGENTS_TEST_MINI=/path/to/mini` (and
//! `AGENTS_REQUIRE_MINI=1` makes a missing CLI fail instead of skip).

use crate::common;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::Home;
use common::chat_mock::{self, text_of};
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, has_message, transcript};
use serde_json::{Value, json};

/// The version `.ci/run` installs (its trajectory fixture's).
const PINNED: &str = "2.4.6";

/// The command that ends a task.
const FINISH: &str = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";

/// The mock OpenAI API, answering whole (mini does not stream), every
/// reply a `bash` call as mini wants: a task holding `SHELL` gets `touch
/// perm-marker`, others `Mock reply to: <the task>` and the finishing
/// command; a command's result gets `Ran it.` and the finishing command.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    let Some(messages) = chat_mock::messages(r) else {
        return Reply::not_found();
    };
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let (text, command) = if last["role"] == "tool" {
        ("Ran it.".to_string(), FINISH)
    } else {
        let task = task_of(&text_of(&last["content"]));
        prompts.push(task.clone());
        if task.contains("SHELL") {
            ("I will run it.".to_string(), "touch perm-marker")
        } else {
            (format!("Mock reply to: {task}"), FINISH)
        }
    };
    static CALLS: AtomicU64 = AtomicU64::new(1);
    let mut message = chat_mock::calls("bash", json!({ "command": command }));
    message["content"] = json!(text);
    message["tool_calls"][0]["id"] = json!(format!("call_{}", CALLS.fetch_add(1, Ordering::Relaxed)));
    let usage = json!({ "prompt_tokens": 40, "completion_tokens": 7, "total_tokens": 47 });
    chat_mock::completed(message, usage)
}

/// The user's task in what mini sends: its template's first line, or a
/// later task.
fn task_of(text: &str) -> String {
    let text = text.trim();
    let task = text
        .strip_prefix("Please solve this issue: ")
        .map(|t| t.lines().next().unwrap_or(t))
        .or_else(|| text.strip_prefix("The user added a new task: "))
        .unwrap_or(text);
    task.trim().to_string()
}

/// How long a step of a real mini-swe-agent may take on a busy 2-core
/// machine (it loads LiteLLM at each start).
const PATIENCE: Duration = Duration::from_secs(60);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// The text on its input line, when it waits for a task: the last line,
/// `> …`, under "Type new task".
fn input(lines: &[String]) -> Option<String> {
    let used: Vec<&String> = lines.iter().filter(|l| !l.trim().is_empty()).collect();
    let (last, above) = (used.last()?, used.get(used.len().checked_sub(2)?)?);
    (above.contains("Type new task") && last.starts_with('>')).then(|| last.trim_start_matches('>').trim().to_string())
}

/// It waits for a new task, its line empty.
fn waits_for_a_task(home: &Home, run: &str) -> bool {
    let lines: Vec<String> = home.logs(run).lines().map(str::to_string).collect();
    input(&lines).is_some_and(|t| t.is_empty())
}

/// Its `nth` question of the run ("Execute 1 action(s)?", before a
/// command) is up; `agents answer yes` lets the command run. (Two
/// questions may follow so closely that its status never leaves
/// `needs_approval` between them: they are told apart by count.)
fn allow(home: &Home, run: &str, nth: usize, what: &str) {
    wait(home, run, what, || {
        home.logs(run).matches("Execute 1 action(s)?").count() >= nth && home.show(run)["status"] == "needs_approval"
    });
    home.ok(&["answer", run, "yes"]);
}

#[test]
fn a_real_mini_run_does_its_tasks_asking_before_each_command() {
    let Some(mini) = real_cli::pinned_binary("MINI", "mini", PINNED) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let bin = BinDir::with(&mini, "mini");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env("MSWEA_CONFIGURED", "true")
            .env("MSWEA_COST_TRACKING", "ignore_errors")
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .env("OPENAI_API_KEY", "mock-key")
            .env("OPENAI_BASE_URL", &api.url)
            .env_remove("MSWEA_GLOBAL_CONFIG_DIR");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    let id = agents(&[
        "run",
        "-d",
        "mini",
        "--size",
        "120x40",
        "--prompt",
        "hello narwhal",
        "--",
        "-m",
        "openai/mock-model",
    ]);
    let run = home.show(&id);
    assert_eq!(run["harness_version"], real_cli::version_under_test(&mini, PINNED));
    let passed = run["env_harness"].as_array().unwrap();
    for var in ["MSWEA_CONFIGURED", "OPENAI_API_KEY", "OPENAI_BASE_URL"] {
        assert!(passed.contains(&json!(var)), "{passed:?}");
    }
    let file = PathBuf::from(
        run["transcript_path"]
            .as_str()
            .expect("its trajectory is known at once"),
    );
    assert!(
        file.starts_with(user_home.path().join(".config/mini-swe-agent/agents")),
        "{file:?}"
    );

    // The task, then the command that ends it, asked about. mini writes
    // a step to its trajectory once the step is over: the last one's
    // messages are in it once the next task starts, or it ends.
    allow(&home, &id, 1, "mini asks to end the first task");
    wait(&home, &id, "the first task is done", || {
        waits_for_a_task(&home, &id) && home.logs(&id).contains("Mock reply to: hello narwhal")
    });

    // A prompt never lands on the user's half-typed draft.
    real_cli::a_draft_holds_a_prompt_till_erased(&home, &id, input, &[0x15]);
    allow(&home, &id, 2, "mini asks to end the queued task");
    wait(&home, &id, "the queued task is done", || {
        waits_for_a_task(&home, &id) && home.logs(&id).contains("Mock reply to: QUEUED-ONE")
    });

    home.ok(&["send", &id, "SHELL please"]);
    allow(&home, &id, 3, "mini asks to run the command");
    allow(&home, &id, 4, "mini asks to end the task");
    wait(&home, &id, "the command ran and the task is done", || {
        cwd.join("perm-marker").exists() && waits_for_a_task(&home, &id) && home.logs(&id).contains("Ran it.")
    });
    assert_eq!(api.prompts.all(), ["hello narwhal", "QUEUED-ONE", "SHELL please"]);

    // An empty line ends it.
    common::pty::type_through_attach(&home, &id, |l| input(l).is_some_and(|t| t.is_empty()), b"\r", |_| true);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    wait(&home, &id, "its whole trajectory is read", || {
        has_message(&transcript(&home, &id), "assistant", "Ran it.")
    });
    let messages = transcript(&home, &id);
    let users: Vec<&Value> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| &m["text"])
        .collect();
    assert_eq!(
        users,
        ["hello narwhal", "QUEUED-ONE", "SHELL please"],
        "each task alone: {messages:?}"
    );
    assert!(has_message(&messages, "assistant", "Mock reply to: QUEUED-ONE"));
    // Its calls, each a `bash` command: the one that touched the file, and
    // its result.
    let touch = messages
        .iter()
        .find(|m| m["tool_calls"][0]["input"]["command"] == "touch perm-marker")
        .unwrap_or_else(|| panic!("the command's call: {messages:?}"));
    let call_id = &touch["tool_calls"][0]["id"];
    let result = messages
        .iter()
        .find(|m| m["tool_result"]["tool_use_id"] == *call_id)
        .unwrap();
    assert!(
        result["text"].as_str().unwrap().contains("\"returncode\": 0"),
        "{result}"
    );
    assert!(
        messages.iter().any(|m| m["usage"]["output"] == 7),
        "the replies' tokens: {messages:?}"
    );
    let session = home.show(&id)["session_id"].as_str().unwrap().to_string();
    // It cannot resume a run: `sessions resume` starts a new one, its task
    // the conversation's recent part.
    let said = agents(&["sessions", "resume", &session, "-d"]);
    assert!(said.contains("cannot be resumed natively"), "{said}");
    let again = said.lines().last().unwrap().to_string();
    let argv = real_cli::argv_of(&home, &again);
    let task = argv.iter().position(|a| a == "-t").map(|at| argv[at + 1].clone());
    assert!(task.is_some_and(|t| t.contains("SHELL please")), "{argv:?}");
    home.ok(&["cancel", &again]);
}
