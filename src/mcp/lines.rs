//! The lines between the MCP client and rmcp: rmcp drops a line that is
//! not a JSON-RPC message without a word, and a client waiting for its
//! answer then waits for ever (issue #34). Each line is looked at first:
//! one that is not JSON is answered with JSON-RPC's parse error (-32700),
//! one that is JSON but no JSON-RPC message with an invalid-request error
//! (-32600); the rest go to rmcp. Both kinds of answer reach stdout whole,
//! one line at a time, in between rmcp's own.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// The longest line taken (a prompt is at most 128 KiB, well inside).
const MAX_LINE: usize = 4 << 20;

/// Bytes buffered between these tasks and rmcp.
const PIPE: usize = 1 << 16;

/// The reader and writer rmcp serves on, joined to `input` and `output`.
pub fn guarded<I, O>(input: I, output: O) -> (DuplexStream, DuplexStream)
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (to_rmcp, rmcp_reads) = tokio::io::duplex(PIPE);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(PIPE);
    let (refusals, refused) = mpsc::channel::<String>(16);
    tokio::spawn(sort_input(input, to_rmcp, refusals));
    tokio::spawn(join_output(from_rmcp, refused, output));
    (rmcp_reads, rmcp_writes)
}

/// Passes on the lines that are messages; answers the rest.
async fn sort_input<I: AsyncRead + Unpin>(input: I, mut to_rmcp: DuplexStream, refusals: mpsc::Sender<String>) {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut input)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let refusal = match refusal(text) {
            Some(refusal) => refusal,
            None => {
                if to_rmcp.write_all(text).await.is_err() || to_rmcp.write_all(b"\n").await.is_err() {
                    break;
                }
                continue;
            }
        };
        if refusals.send(refusal).await.is_err() {
            break;
        }
        // A line cut at the bound: the rest of it is no message either.
        if line.len() > MAX_LINE {
            let _ = skip_line(&mut input).await;
        }
    }
    let _ = to_rmcp.shutdown().await;
}

async fn skip_line<R: AsyncBufReadExt + Unpin>(input: &mut R) -> std::io::Result<()> {
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|b| *b == b'\n') {
            Some(at) => {
                input.consume(at + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

/// The error answer for a line that is not a JSON-RPC message, if it is not.
fn refusal(text: &[u8]) -> Option<String> {
    let error = |id: Value, code: i64, message: String| {
        Some(json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }).to_string())
    };
    if text.len() > MAX_LINE {
        return error(
            Value::Null,
            -32700,
            format!("Parse error: a line longer than {MAX_LINE} bytes"),
        );
    }
    let value: Value = match serde_json::from_slice(text) {
        Ok(value) => value,
        Err(e) => return error(Value::Null, -32700, format!("Parse error: {e}")),
    };
    // A batch is a list of messages: rmcp reads those itself.
    if value.is_array() {
        return None;
    }
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let message = value.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && (value.get("method").is_some_and(Value::is_string)
            || value.get("result").is_some()
            || value.get("error").is_some());
    match message {
        true => None,
        false => error(id, -32600, "Invalid Request: not a JSON-RPC 2.0 message".into()),
    }
}

/// rmcp's lines and the refusals, each written whole.
async fn join_output<O: AsyncWrite + Unpin>(
    from_rmcp: DuplexStream,
    mut refused: mpsc::Receiver<String>,
    mut output: O,
) {
    let mut from_rmcp = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let mut refusals_open = true;
    loop {
        line.clear();
        tokio::select! {
            read = from_rmcp.read_until(b'\n', &mut line) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            },
            refusal = refused.recv(), if refusals_open => match refusal {
                Some(refusal) => {
                    line.extend_from_slice(refusal.as_bytes());
                    line.push(b'\n');
                }
                None => {
                    refusals_open = false;
                    continue;
                }
            },
        }
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_that_are_no_message_are_refused_with_their_code() {
        let code = |line: &str| {
            refusal(line.as_bytes()).map(|r| serde_json::from_str::<Value>(&r).unwrap()["error"]["code"].clone())
        };
        assert_eq!(code("not json"), Some(json!(-32700)));
        assert_eq!(code(r#"{"id": 3}"#), Some(json!(-32600)));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        assert_eq!(code(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), None);
        assert_eq!(code(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#), None);
        let refused: Value = serde_json::from_str(&refusal(br#"{"id": 3}"#).unwrap()).unwrap();
        assert_eq!(refused["id"], 3);
    }
}
