//! A host reached by a command instead of SSH (docs/design.md §8): one
//! that yields a stdin/stdout on the host, as `docker exec -i devbox`,
//! `kubectl exec -i pod/dev-0 --` or `gcloud compute ssh vm-1 --` do. Each
//! command agents runs there (`agents --version`, `agents serve --stdio`,
//! `cat > FILE` of an install) is one run of it, with the command's words
//! appended: `sh -c LINE` for a command that takes words, or LINE alone
//! for one that hands it to a shell there, as `ssh` does.
//!
//! The process is ours (spawned here, its handle held), so ending it is
//! safe: closing the link kills every one still running.

use parking_lot::Mutex;
use std::process::Stdio;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::sync::watch;

use super::error::RemoteError;
use super::ssh::{EXEC_OUTPUT_CAP, EXEC_TIMEOUT, ExecOutput, RemoteStream, STDERR_TAIL, STREAM_BUFFER, append_capped};
use crate::store::hosts::HostCommand;

/// The command of one host, run once per remote command.
pub struct CommandLink {
    name: String,
    command: HostCommand,
    /// Set when the link closes: every stream still running is killed.
    closing: watch::Sender<bool>,
}

impl CommandLink {
    pub fn new(name: &str, command: &HostCommand) -> Result<CommandLink, RemoteError> {
        if command.words.is_empty() {
            return Err(RemoteError::Other(format!(
                "host {name} has an empty command; add it again with --command"
            )));
        }
        Ok(CommandLink {
            name: name.to_string(),
            command: command.clone(),
            closing: watch::channel(false).0,
        })
    }

    /// The command as a person would type it (for messages).
    pub fn describe(&self) -> String {
        shell_words::join(&self.command.words)
    }

    fn spawn(&self, line: &str, stdin: Stdio) -> Result<Child, RemoteError> {
        let (program, args) = self.command.words.split_first().expect("checked in new");
        let mut command = Command::new(program);
        command.args(args);
        if self.command.shell_line {
            command.arg(line);
        } else {
            command.args(["sh", "-c", line]);
        }
        command
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command.spawn().map_err(|e| RemoteError::Unreachable {
            name: self.name.clone(),
            address: self.describe(),
            why: format!("cannot run {program}: {e}"),
        })
    }

    /// Runs `line` there and collects its output, as an SSH exec does.
    pub async fn exec(&self, line: &str) -> Result<ExecOutput, RemoteError> {
        let mut child = self.spawn(line, Stdio::null())?;
        let (mut stdout, mut stderr) = (child.stdout.take().expect("piped"), child.stderr.take().expect("piped"));
        let collect = async {
            let mut out = ExecOutput::default();
            let (read_out, read_err) = tokio::join!(
                read_capped(&mut stdout, &mut out.stdout),
                read_capped(&mut stderr, &mut out.stderr)
            );
            read_out.and(read_err)?;
            out.status = child.wait().await?.code().map(|c| c as u32);
            Ok::<_, std::io::Error>(out)
        };
        match tokio::time::timeout(EXEC_TIMEOUT, collect).await {
            Ok(Ok(out)) => Ok(out),
            Ok(Err(e)) => Err(RemoteError::Other(format!("`{}` failed: {e}", self.describe()))),
            Err(_) => Err(RemoteError::Other(format!(
                "`{line}` did not finish within {}s on {}",
                EXEC_TIMEOUT.as_secs(),
                self.name
            ))),
        }
    }

    /// Starts `line` there and hands back its stdin/stdout as a stream;
    /// it ends when the command does, or is killed when the link closes.
    pub async fn stream(&self, line: &str) -> Result<RemoteStream, RemoteError> {
        let mut child = self.spawn(line, Stdio::piped())?;
        let writer = Box::new(Stdin(child.stdin.take()));
        let mut stdout = child.stdout.take().expect("piped");
        let stderr_pipe = child.stderr.take().expect("piped");
        let (mut into_reader, reader) = tokio::io::duplex(STREAM_BUFFER);
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (exit_tx, exited) = watch::channel(None);
        tokio::spawn(keep_tail(stderr_pipe, stderr.clone()));
        let mut closing = self.closing.subscribe();
        tokio::spawn(async move {
            let pump = tokio::io::copy(&mut stdout, &mut into_reader);
            tokio::select! {
                _ = pump => {}
                _ = closing.wait_for(|c| *c) => {
                    let _ = child.start_kill();
                }
            }
            // Its output is all read (or it was killed): the reader sees
            // the end of file when `into_reader` drops.
            drop(into_reader);
            if let Ok(status) = child.wait().await {
                exit_tx.send_replace(status.code().map(|c| c as u32));
            }
        });
        Ok(RemoteStream {
            reader,
            writer,
            stderr,
            exited,
        })
    }

    /// Kills every stream still running.
    pub fn close(&self) {
        self.closing.send_replace(true);
    }
}

/// A command's stdin whose shutdown closes it, as the end of an SSH
/// channel's input does: `cat > FILE` there ends at the end of the copy.
struct Stdin(Option<tokio::process::ChildStdin>);

impl tokio::io::AsyncWrite for Stdin {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        match self.0.as_mut() {
            Some(stdin) => std::pin::Pin::new(stdin).poll_write(cx, buf),
            None => std::task::Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into())),
        }
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.0.as_mut() {
            Some(stdin) => std::pin::Pin::new(stdin).poll_flush(cx),
            None => std::task::Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.0 = None;
        std::task::Poll::Ready(Ok(()))
    }
}

async fn read_capped(from: &mut (impl AsyncRead + Unpin), into: &mut Vec<u8>) -> std::io::Result<()> {
    let mut buf = [0u8; 8192];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        append_capped(into, &buf[..n], EXEC_OUTPUT_CAP);
    }
}

/// Keeps the last few KiB a stream's command (or a proxy) wrote to stderr.
pub(super) async fn keep_tail(mut from: impl AsyncRead + Unpin, tail: Arc<Mutex<Vec<u8>>>) {
    let mut buf = [0u8; 4096];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let mut tail = tail.lock();
        tail.extend_from_slice(&buf[..n]);
        let excess = tail.len().saturating_sub(STDERR_TAIL);
        tail.drain(..excess);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    fn link(words: &[&str], shell_line: bool) -> CommandLink {
        let command = HostCommand {
            words: words.iter().map(|w| w.to_string()).collect(),
            shell_line,
        };
        CommandLink::new("box", &command).unwrap()
    }

    #[tokio::test]
    async fn a_command_runs_the_line_through_a_shell_there_either_way() {
        // Words: `env sh -c LINE`; one line: `sh -c LINE` itself.
        for l in [link(&["env"], false), link(&["sh", "-c"], true)] {
            let out = l.exec("echo one && echo two >&2; exit 3").await.unwrap();
            assert_eq!(out.stdout, b"one\n");
            assert_eq!(out.stderr, b"two\n");
            assert_eq!(out.status, Some(3));
        }
    }

    #[tokio::test]
    async fn a_stream_carries_bytes_both_ways_and_ends_when_closed() {
        let l = link(&["env"], false);
        let mut stream = l.stream("cat").await.unwrap();
        stream.writer.write_all(b"ping\n").await.unwrap();
        let mut got = [0u8; 5];
        stream.reader.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping\n");
        l.close();
        let mut rest = Vec::new();
        stream.reader.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
    }

    #[tokio::test]
    async fn the_end_of_a_streams_input_reaches_the_command() {
        let l = link(&["env"], false);
        let mut stream = l.stream("cat; echo done").await.unwrap();
        stream.writer.write_all(b"all\n").await.unwrap();
        stream.writer.shutdown().await.unwrap();
        let mut out = Vec::new();
        stream.reader.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, b"all\ndone\n");
        assert_eq!(*stream.exited.wait_for(|s| s.is_some()).await.unwrap(), Some(0));
    }

    #[tokio::test]
    async fn a_command_that_is_not_there_is_unreachable_with_its_name() {
        let l = link(&["no-such-command-here"], false);
        let err = l.exec("true").await.unwrap_err().to_string();
        assert!(err.contains("cannot run no-such-command-here"), "{err}");
        assert!(
            CommandLink::new(
                "box",
                &HostCommand {
                    words: vec![],
                    shell_line: false
                }
            )
            .is_err()
        );
    }
}
