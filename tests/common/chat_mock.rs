//! What the real-CLI tests of OpenAI-compatible agents (opencode, Kilo,
//! Qwen Code, pi, Cline…) share of their mock model API: the request's
//! last message and its text, the one script every test's model follows
//! (`turn`), and a chat completion streamed as the API does
//! (`chat.completion.chunk` events over SSE: the delta, the finish reason,
//! the usage, then `[DONE]`).

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::real_cli::{Prompts, Reply, Request};

/// The request's messages, for a path that is chat completions; else none.
pub fn messages(r: &Request) -> Option<Vec<Value>> {
    if !r.path().ends_with("/chat/completions") {
        return None;
    }
    Some(r.json()["messages"].as_array().cloned().unwrap_or_default())
}

/// The text of a message's `content`: a string, or the text parts of a list.
pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// An assistant delta saying `text`.
pub fn says(text: &str) -> Value {
    json!({ "role": "assistant", "content": text })
}

/// An assistant delta calling the tool `name` with `args`; each call its
/// own id, as a real API gives (Letta Code merges calls that share one).
pub fn calls(name: &str, args: Value) -> Value {
    static CALLS: AtomicU64 = AtomicU64::new(1);
    let id = format!("call_{}", CALLS.fetch_add(1, Ordering::Relaxed));
    json!({ "role": "assistant", "tool_calls": [{ "index": 0, "id": id, "type": "function",
        "function": { "name": name, "arguments": args.to_string() } }] })
}

/// The user's words in a message: its text, trimmed.
pub fn words(message: &Value) -> String {
    text_of(&message["content"]).trim().to_string()
}

/// The script every test's model follows in a turn of the main
/// conversation: a tool's result sent back gets "Ran it."; else the user's
/// words (as `words` reads them from the last message) are recorded, and
/// get `shell` (a call of the CLI's shell tool) when they say SHELL, any
/// others `Mock reply to: <words>`.
pub fn turn(
    messages: &[Value],
    prompts: &Prompts,
    words: impl FnOnce(&Value) -> String,
    shell: impl FnOnce() -> Value,
) -> Value {
    let last = messages.last().cloned().unwrap_or(Value::Null);
    if last["role"] == "tool" {
        return says("Ran it.");
    }
    let text = words(&last);
    prompts.push(text.clone());
    match text.contains("SHELL") {
        true => shell(),
        false => says(&format!("Mock reply to: {text}")),
    }
}

/// The tokens a reply reports; `cached`: ten of the prompt's read from
/// cache.
pub fn usage(cached: bool) -> Value {
    let mut usage = json!({ "prompt_tokens": 40, "completion_tokens": 7, "total_tokens": 47 });
    if cached {
        usage["prompt_tokens_details"] = json!({ "cached_tokens": 10 });
    }
    usage
}

/// The one model the mock serves, for the CLIs that list them first.
pub fn models() -> Reply {
    let models = json!({ "object": "list", "data": [{ "id": "mock-model", "object": "model" }] });
    Reply::ok("application/json", models.to_string())
}

/// `message` as one whole completion (for a client that does not stream),
/// with `usage`.
pub fn completed(message: Value, usage: Value) -> Reply {
    let finish = if message.get("tool_calls").is_some() {
        "tool_calls"
    } else {
        "stop"
    };
    let body = json!({ "id": "chatcmpl-whole", "object": "chat.completion", "created": 1, "model": "mock-model",
        "choices": [{ "index": 0, "message": message, "finish_reason": finish }], "usage": usage });
    Reply::ok("application/json", body.to_string())
}

/// `delta` as one streamed completion ending in `usage`: finished by a tool
/// call when it makes one, else by `stop`.
pub fn streamed(delta: Value, usage: Value) -> Reply {
    let finish = match delta.get("tool_calls") {
        Some(_) => "tool_calls",
        None => "stop",
    };
    // Each completion its own id, as a real API gives (Letta Code merges
    // replies that share one).
    static COMPLETIONS: AtomicU64 = AtomicU64::new(1);
    let id = format!("chatcmpl-{}", COMPLETIONS.fetch_add(1, Ordering::Relaxed));
    let chunk = |choices: Value, usage: Value| {
        json!({ "id": id, "object": "chat.completion.chunk", "created": 1, "model": "mock-model",
            "choices": choices, "usage": usage })
    };
    let events = [
        chunk(
            json!([{ "index": 0, "delta": delta, "finish_reason": null }]),
            Value::Null,
        ),
        chunk(
            json!([{ "index": 0, "delta": {}, "finish_reason": finish }]),
            Value::Null,
        ),
        chunk(json!([]), usage),
    ];
    let mut body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    Reply::ok("text/event-stream", body)
}
