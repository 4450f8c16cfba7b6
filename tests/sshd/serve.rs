//! A client of a daemon through `agents serve --stdio`, as the local daemon
//! is of a remote one: requests by hand, to repeat an id or an epoch
//! exactly.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::common;

/// A client of a daemon through `agents serve --stdio`, as the local daemon
/// is of a remote one: requests by hand, to repeat an id exactly.
pub struct Serve {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next: u64,
}

impl Serve {
    pub fn open(home: &common::Home) -> Serve {
        let mut child = Command::new(common::BIN)
            .args(["serve", "--stdio", "--home"])
            .arg(home.path())
            .env_remove("AGENTS_HOME")
            .env("XDG_CONFIG_HOME", home.config.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let mut output = BufReader::new(child.stdout.take().unwrap());
        input
            .write_all(format!("agents/1 {}\n", env!("CARGO_PKG_VERSION")).as_bytes())
            .unwrap();
        let mut header = String::new();
        output.read_line(&mut header).unwrap();
        assert!(header.starts_with("agents/1 "), "{header}");
        Serve {
            child,
            input,
            output,
            next: 1,
        }
    }

    /// One request; its result, or its error's `data`.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        let id = self.next;
        self.next += 1;
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
        let mut frame = ((body.len() + 1) as u32).to_be_bytes().to_vec();
        frame.push(1);
        frame.extend_from_slice(body.as_bytes());
        self.input.write_all(&frame).unwrap();
        loop {
            let mut len = [0u8; 4];
            self.output.read_exact(&mut len).unwrap();
            let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
            self.output.read_exact(&mut body).unwrap();
            // Notifications (`run.changed`) and output frames are not ours.
            if body[0] != 1 {
                continue;
            }
            let message: Value = serde_json::from_slice(&body[1..]).unwrap();
            if message["id"] != id {
                continue;
            }
            if let Some(error) = message.get("error") {
                let mut data = error["data"].clone();
                data["message"] = error["message"].clone();
                return Err(data);
            }
            return Ok(message["result"].clone());
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
