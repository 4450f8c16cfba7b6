//! A command host for the remote tests (docs/design.md §8, §11): the host
//! is reached by running a script here (`agents hosts add NAME --command
//! GATE`), as a container is by `docker exec -i`. The script gives the
//! host's side an environment of its own (a clean one, its own HOME and
//! config), as sshd's session does in `Sshd`, and has the fault switches of
//! `proxy.rs` as files: a cut kills every command running through it and
//! refuses new ones, a stall stops them (SIGSTOP: their pipes fill, nothing
//! closes), a restore lets them all go on.
//!
//! Each command is a process group of its own (`setsid`). A process is
//! signalled only once it is known to be one of this gate's: it or its
//! group was started through the gate, and its command line names the
//! script or its environment carries the gate's marker.

use std::path::{Path, PathBuf};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

pub struct Gate {
    dir: tempfile::TempDir,
}

impl Gate {
    /// A gate whose commands run with `HOME=home` and
    /// `XDG_CONFIG_HOME=config` (the "remote" user's).
    pub fn new(home: &Path, config: &Path) -> Gate {
        let dir = tempfile::Builder::new().prefix("gate").tempdir().unwrap();
        let gate = dir.path().display().to_string();
        let script = format!(
            "#!/bin/sh\n\
             gate='{gate}'\n\
             echo $$ >> \"$gate/started\"\n\
             if [ -e \"$gate/cut\" ]; then echo 'the test gate is cut' >&2; exit 255; fi\n\
             if [ -e \"$gate/stall\" ]; then kill -STOP $$; fi\n\
             exec setsid -w env -i PATH=\"$PATH\" USER=\"$USER\" LANG=C.UTF-8 HOME='{home}' \
             XDG_CONFIG_HOME='{config}' AGENTS_TEST_GATE=\"$gate\" \"$@\"\n",
            home = home.display(),
            config = config.display(),
        );
        let path = dir.path().join("gate.sh");
        std::fs::write(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        Gate { dir }
    }

    /// What `--command` takes.
    pub fn command(&self) -> String {
        self.script().display().to_string()
    }

    fn script(&self) -> PathBuf {
        self.dir.path().join("gate.sh")
    }

    /// Kills every command running through the gate and refuses new ones.
    pub fn cut(&self) {
        std::fs::write(self.dir.path().join("cut"), "").unwrap();
        self.signal(Signal::SIGKILL);
    }

    /// Stops every command running through it, and each new one.
    pub fn stall(&self) {
        std::fs::write(self.dir.path().join("stall"), "").unwrap();
        self.signal(Signal::SIGSTOP);
    }

    pub fn restore(&self) {
        let _ = std::fs::remove_file(self.dir.path().join("cut"));
        let _ = std::fs::remove_file(self.dir.path().join("stall"));
        self.signal(Signal::SIGCONT);
    }

    /// Commands started through the gate so far, refused ones included.
    pub fn accepted(&self) -> usize {
        std::fs::read_to_string(self.dir.path().join("started"))
            .unwrap_or_default()
            .lines()
            .count()
    }

    /// Signals each command started through the gate and every process
    /// of its group (the shell there and what it started; a daemon it
    /// starts leaves the group), as the processes of a container exec go
    /// with it; a group whose leader is gone included.
    fn signal(&self, signal: Signal) {
        let started = std::fs::read_to_string(self.dir.path().join("started")).unwrap_or_default();
        let started: Vec<i32> = started.lines().filter_map(|l| l.trim().parse().ok()).collect();
        let Ok(procs) = std::fs::read_dir("/proc") else {
            return;
        };
        for pid in procs.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()) {
            let group = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    stat[stat.rfind(')')? + 2..]
                        .split_whitespace()
                        .nth(2)?
                        .parse::<i32>()
                        .ok()
                });
            let listed = started.contains(&pid) || group.is_some_and(|g| started.contains(&g));
            if listed && self.is_ours(pid) {
                let _ = kill(Pid::from_raw(pid), signal);
            }
        }
    }

    fn is_ours(&self, pid: i32) -> bool {
        let read = |what: &str| std::fs::read(format!("/proc/{pid}/{what}")).unwrap_or_default();
        let marker = format!("AGENTS_TEST_GATE={}", self.dir.path().display());
        let has = |bytes: Vec<u8>, needle: &[u8]| bytes.split(|b| *b == 0).any(|part| part == needle);
        let script = self.script().display().to_string();
        let cmdline = read("cmdline");
        cmdline.split(|b| *b == 0).any(|arg| arg == script.as_bytes()) || has(read("environ"), marker.as_bytes())
    }
}

impl Drop for Gate {
    /// Nothing of a failed test stays stopped or running through it.
    fn drop(&mut self) {
        self.cut();
    }
}
