//! `runs.start`'s JSON, pinned: what a client, a remote daemon or a stored
//! mirror wrote is read, and written again, byte for byte.

use super::StartParams;

fn again(json: &str) -> String {
    let params: StartParams = serde_json::from_str(json).unwrap();
    serde_json::to_string(&params).unwrap()
}

#[test]
fn a_start_with_every_field_reads_and_writes_the_same_json() {
    let full = concat!(
        r#"{"harness":"claude","args":["--model","m"],"name":"n","cwd":"/w","parent":"p","#,
        r#""detached":true,"timeout_secs":60,"rows":24,"cols":80,"worktree":true,"prompt":"hi","#,
        r#""env":[["HOME","/h"]],"pass_env":["KEY"],"host":"box","launch_id":"L1","#,
        r#""team":{"team":"t","member":"m"},"placed":true}"#
    );
    assert_eq!(again(full), full);
}

#[test]
fn a_bare_start_fills_its_defaults_and_leaves_the_optional_fields_out() {
    let bare = r#"{"harness":"demo","cwd":"/w"}"#;
    let written = concat!(
        r#"{"harness":"demo","args":[],"name":null,"cwd":"/w","parent":null,"detached":false,"#,
        r#""timeout_secs":null,"rows":null,"cols":null,"worktree":false,"prompt":null,"env":[],"pass_env":[]}"#
    );
    assert_eq!(again(bare), written);
    assert_eq!(again(written), written);
}

/// `runs.list`'s `state`: `live`, `ended` or one state; anything else is
/// refused, naming the states.
#[test]
fn a_list_state_names_live_ended_or_one_state() {
    use crate::api::{ErrorCode, ListParams, RunState};
    let states = |state: Option<&str>| {
        ListParams {
            state: state.map(String::from),
            ..Default::default()
        }
        .states()
    };
    assert_eq!(states(None).unwrap(), []);
    assert_eq!(
        states(Some("live")).unwrap(),
        [RunState::Pending, RunState::Starting, RunState::Running]
    );
    let ended = states(Some("ended")).unwrap();
    assert!(ended.contains(&RunState::Lost) && !ended.iter().any(|s| s.is_live()));
    assert_eq!(states(Some("timed_out")).unwrap(), [RunState::TimedOut]);
    let e = states(Some("finished")).unwrap_err();
    assert_eq!(e.code, ErrorCode::BadRequest);
    assert!(
        e.message.contains("'finished'") && e.message.contains("succeeded"),
        "{}",
        e.message
    );
}
