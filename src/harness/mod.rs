//! Harness adapters: what command a run spawns. The engine knows `shell`,
//! `cmd` and the built-in `demo` agent; the agent families (claude, codex,
//! gemini, aider) plug in here behind the same seam.

pub mod demo;
pub mod screen;

use std::path::{Path, PathBuf};

/// Harness names this build can launch.
pub const KNOWN: &[&str] = &["shell", "cmd", "demo"];

/// Resolves a harness name and its arguments to the argv to spawn, or the
/// reason the run is blocked before spawn.
pub fn command_line(harness: &str, args: &[String], env: &[(String, String)]) -> Result<Vec<String>, String> {
    let lookup = |key: &str| env.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    let mut argv = match harness {
        "shell" => {
            let shell = lookup("SHELL").filter(|s| !s.is_empty()).unwrap_or("/bin/sh");
            let mut argv = vec![shell.to_string()];
            argv.extend(args.iter().cloned());
            argv
        }
        "cmd" => {
            if args.is_empty() {
                return Err("bad option: the cmd harness needs a command after --".into());
            }
            args.to_vec()
        }
        "demo" => {
            let exe = std::env::current_exe().map_err(|e| format!("cannot find the agents binary: {e}"))?;
            let mut argv = vec![exe.to_string_lossy().into_owned(), "demo-agent".into()];
            argv.extend(args.iter().cloned());
            argv
        }
        other => {
            return Err(format!("unknown harness '{other}' (known: {})", KNOWN.join(", ")));
        }
    };
    let program = find_binary(&argv[0], lookup("PATH"))
        .ok_or_else(|| format!("binary not found: {} (searched PATH)", argv[0]))?;
    argv[0] = program.to_string_lossy().into_owned();
    Ok(argv)
}

/// Finds an executable the way a shell would: a path with a slash is taken
/// as is, a bare name is searched in PATH.
pub fn find_binary(name: &str, path_var: Option<&str>) -> Option<PathBuf> {
    if name.contains('/') {
        let p = Path::new(name);
        return is_executable(p).then(|| p.to_path_buf());
    }
    let path_var = path_var.unwrap_or("/usr/local/bin:/usr/bin:/bin");
    std::env::split_paths(path_var)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_binaries_and_unknown_harnesses_are_reasons_not_panics() {
        let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
        let err = command_line("cmd", &["no-such-binary-xyz".into()], &env).unwrap_err();
        assert!(err.contains("binary not found: no-such-binary-xyz"), "{err}");
        assert!(command_line("nope", &[], &env).unwrap_err().contains("unknown harness"));
        assert!(command_line("cmd", &[], &env).unwrap_err().contains("bad option"));
        let argv = command_line("cmd", &["sh".into(), "-c".into(), "true".into()], &env).unwrap();
        assert!(argv[0].ends_with("/sh"));
    }
}
