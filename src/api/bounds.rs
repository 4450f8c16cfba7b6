//! Size bounds of what a request may ask to store, checked before anything
//! is stored, and of what an answer may hold, so that every answer fits its
//! frame (`protocol::MAX_FRAME`, 1 MiB) by construction.

use super::{ApiError, StartParams};

/// A harness or profile name: family names are a few letters; profiles
/// are names a person types.
pub const HARNESS: usize = 64;
/// A cwd: `PATH_MAX` on Linux.
pub const CWD: usize = 4096;
/// One argument, and all of them: a reconstructed conversation handed to a
/// harness as its first prompt runs to tens of KiB; a page of `runs.list`
/// holds many runs' commands.
pub const ARG: usize = 64 * 1024;
pub const ARGS: usize = 128 * 1024;
/// A prompt or an answer typed into a run.
pub const PROMPT: usize = 128 * 1024;
/// Names of variables passed with `--env`.
pub const ENV_NAMES: usize = 256;
/// How many bytes of runs one `runs.list` answer carries at most: with the
/// JSON-RPC envelope it stays well inside the 1 MiB frame.
pub const LIST_BYTES: usize = 768 * 1024;

fn too_long(what: &str, len: usize, max: usize) -> ApiError {
    ApiError::bad_request(format!("{what}: {len} bytes; at most {max}"))
}

/// `at most max bytes`, else a one-line `bad_request` naming `what`.
pub fn check(what: &str, value: &str, max: usize) -> Result<(), ApiError> {
    match value.len() {
        len if len > max => Err(too_long(what, len, max)),
        _ => Ok(()),
    }
}

/// Every field of a start that would be stored, within its bound.
pub fn check_start(p: &StartParams) -> Result<(), ApiError> {
    if p.spec.harness.trim().is_empty() {
        return Err(ApiError::bad_request(
            "no harness given: name one, as in `agents run claude`",
        ));
    }
    check("the harness name", &p.spec.harness, HARNESS)?;
    if p.spec.timeout_secs == Some(0) {
        return Err(ApiError::bad_request(
            "a timeout of 0 s would end the run at once: give 1 or more",
        ));
    }
    check("the cwd", &p.spec.cwd, CWD)?;
    for arg in &p.spec.args {
        check("an argument", arg, ARG)?;
    }
    let total: usize = p.spec.args.iter().map(String::len).sum();
    if total > ARGS {
        return Err(too_long("the arguments", total, ARGS));
    }
    let out_of_range = |n: Option<u16>, range: std::ops::RangeInclusive<u16>| n.is_some_and(|n| !range.contains(&n));
    if out_of_range(p.rows, 2..=1000) || out_of_range(p.cols, 2..=2000) {
        return Err(ApiError::bad_request(format!(
            "size {}x{} out of range (2-2000 columns, 2-1000 rows)",
            p.cols.unwrap_or(0),
            p.rows.unwrap_or(0)
        )));
    }
    if let Some(prompt) = &p.spec.prompt {
        check("the prompt", prompt, PROMPT)?;
    }
    if p.spec.pass_env.len() > ENV_NAMES {
        return Err(ApiError::bad_request(format!(
            "{} variable names passed; at most {ENV_NAMES}",
            p.spec.pass_env.len()
        )));
    }
    for name in &p.spec.pass_env {
        check("a variable name", name, HARNESS * 4)?;
        if !crate::values::is_env_name(name) {
            // Never the value after a `=`: it may be a secret.
            let shown = match name.split_once('=') {
                Some((name, _)) => format!("{name}=…"),
                None => name.clone(),
            };
            return Err(ApiError::bad_request(format!(
                "--env {shown:?}: not a variable name; give the name, and its value is read from your environment"
            )));
        }
    }
    Ok(())
}

/// Run names: short, and safe as a branch name and a folder name.
pub fn validate_name(name: &str) -> Result<(), ApiError> {
    // Run ids (ULIDs) are upper-case letters and digits, and a reference
    // may be an id prefix: a name made of those alone could be read as one.
    if !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()) {
        return Err(ApiError::bad_request(format!(
            "bad run name '{name}': it could be read as a run id; use a lower-case letter, '-', '_' or '.' in it"
        )));
    }
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with(['-', '.']);
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "bad run name '{name}': use up to 64 letters, digits, '-', '_' or '.'"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::RunSpec;

    #[test]
    fn a_start_too_large_to_store_is_refused_naming_the_field() {
        let ok = StartParams {
            spec: RunSpec {
                harness: "cmd".into(),
                cwd: "/".into(),
                args: vec!["x".repeat(12 * 1024)],
                ..RunSpec::default()
            },
            ..StartParams::default()
        };
        assert!(check_start(&ok).is_ok());
        let big_name = StartParams {
            spec: RunSpec {
                harness: "h".repeat(900 * 1024),
                ..ok.spec.clone()
            },
            ..ok.clone()
        };
        let e = check_start(&big_name).unwrap_err();
        assert_eq!(e.message, format!("the harness name: {} bytes; at most 64", 900 * 1024));
        let many = StartParams {
            spec: RunSpec {
                args: vec!["a".repeat(60 * 1024); 3],
                ..ok.spec.clone()
            },
            ..ok
        };
        assert_eq!(
            check_start(&many).unwrap_err().message,
            format!("the arguments: {} bytes; at most {ARGS}", 180 * 1024)
        );
    }
}
