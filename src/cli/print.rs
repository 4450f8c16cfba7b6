//! How the CLI shows records to a person.

use crate::api::{BriefRun, HostUnreachable, RunDetail, RunRecord};

/// Errors print on one line, bounded.
pub fn one_line(msg: &str) -> String {
    let flat: String = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::text::bounded(&flat, crate::text::MAX_DIAGNOSTIC)
}

/// On stderr, one line per host that did not answer a list asked of every
/// host: the rows on stdout are all the others'.
pub fn unreachable_hosts(hosts: &[HostUnreachable], what: &str) {
    for h in hosts {
        say_err!("partial: {}; its {what} are not listed", one_line(&h.error));
    }
}

/// Writes human or JSON output to stdout. A reader that went away (`agents
/// ls | head -1`) ends the verb quietly, with the status a shell gives a
/// tool that died of SIGPIPE, instead of a panic on the next line.
pub fn out(text: &str) {
    write_or_quit(&mut std::io::stdout().lock(), text);
}

/// [`out`] for stderr.
pub fn err(text: &str) {
    write_or_quit(&mut std::io::stderr().lock(), text);
}

/// The exit status of a verb whose reader went away: 128 + SIGPIPE.
pub const CLOSED_PIPE: i32 = 141;

fn write_or_quit(w: &mut dyn std::io::Write, text: &str) {
    if let Err(e) = w.write_all(text.as_bytes()).and_then(|()| w.flush())
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        std::process::exit(CLOSED_PIPE);
    }
}

/// A search answered before live transcripts were read whole says so on
/// stderr: its hits may miss what those bytes hold.
pub fn unindexed(bytes: u64) {
    if bytes > 0 {
        say_err!(
            "note: {} of live transcripts not indexed yet; search again in a moment to include them",
            size(bytes)
        );
    }
}

/// Bytes as a person reads them: `812 B`, `4.2 KB`, `23.1 MB`.
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1000 => format!("{b} B"),
        b if b < 1_000_000 => format!("{:.1} KB", b as f64 / 1e3),
        b if b < 1_000_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        b => format!("{:.1} GB", b as f64 / 1e9),
    }
}

fn parse_time(s: &str) -> Option<std::time::SystemTime> {
    humantime::parse_rfc3339(s).ok()
}

/// Running time of a run: start to end, or start to now.
pub fn duration(run: &RunRecord) -> String {
    duration_at(
        run.started_at.as_deref(),
        run.ended_at.as_deref(),
        std::time::SystemTime::now(),
    )
}

fn duration_at(started: Option<&str>, ended: Option<&str>, now: std::time::SystemTime) -> String {
    let Some(start) = started.and_then(parse_time) else {
        return "-".into();
    };
    let end = ended.and_then(parse_time).unwrap_or(now);
    let secs = end.duration_since(start).map(|d| d.as_secs()).unwrap_or(0);
    if secs >= 3600 {
        format!("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
    } else {
        format!("{}:{:02}", secs / 60, secs % 60)
    }
}

/// `0.4s`, `12s`, `3m05s`, `2h10m`: how long ago, or how long until.
pub fn short_duration(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0..10 => format!("{:.1}s", ms as f64 / 1000.0),
        10..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs / 60 % 60),
    }
}

pub fn home_relative(path: &str) -> String {
    let home = dirs::home_dir().map(|h| h.to_string_lossy().into_owned());
    relative_to(home.as_deref(), path)
}

fn relative_to(home: Option<&str>, path: &str) -> String {
    match home {
        Some(home) if path.starts_with(home) && home.len() > 1 => format!("~{}", &path[home.len()..]),
        _ => path.to_string(),
    }
}

/// How many characters of each id `ls` shows: the shortest prefix no
/// other listed id shares, and never fewer than 12 (a ULID's first 10 are
/// its millisecond: runs started together share them).
fn shown_id_lengths(ids: &[&str]) -> Vec<usize> {
    const AT_LEAST: usize = 12;
    let mut sorted: Vec<usize> = (0..ids.len()).collect();
    sorted.sort_unstable_by_key(|&i| ids[i]);
    let shared = |a: usize, b: usize| ids[a].bytes().zip(ids[b].bytes()).take_while(|(x, y)| x == y).count();
    let mut shown = vec![0; ids.len()];
    for (at, &i) in sorted.iter().enumerate() {
        let before = at.checked_sub(1).map_or(0, |j| shared(sorted[j], i));
        let after = sorted.get(at + 1).map_or(0, |&next| shared(next, i));
        shown[i] = (before.max(after) + 1).max(AT_LEAST).min(ids[i].len());
    }
    shown
}

/// `agents ls`: one line per run; TOKENS is all of a run's tokens, cache
/// included (`agents show` breaks them down). Built in one pass over
/// cells measured once: `ls` of thousands of runs prints at once.
pub fn table(runs: &[BriefRun]) -> String {
    const HEADER: [&str; 10] = [
        "ID", "NAME", "HARNESS", "HOST", "STATE", "STATUS", "TIME", "PID", "TOKENS", "CWD",
    ];
    let ids: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
    let shown = shown_id_lengths(&ids);
    let home = dirs::home_dir().map(|h| h.to_string_lossy().into_owned());
    let now = std::time::SystemTime::now();
    let mut rows: Vec<[String; 10]> = Vec::with_capacity(runs.len() + 1);
    rows.push(HEADER.map(String::from));
    for (r, shown) in runs.iter().zip(shown) {
        rows.push([
            r.id.get(..shown).unwrap_or(&r.id).to_string(),
            r.name.clone(),
            r.harness.clone(),
            r.host.clone(),
            r.state.as_str().into(),
            if r.state.is_live() { r.status.as_str() } else { "-" }.into(),
            duration_at(r.started_at.as_deref(), r.ended_at.as_deref(), now),
            r.pid.map_or_else(|| "-".into(), |p| p.to_string()),
            r.tokens.map_or_else(|| "-".into(), crate::transcript::usage::count),
            relative_to(home.as_deref(), &r.cwd),
        ]);
    }
    columns(rows)
}

/// Rows of cells as aligned columns, two spaces apart, each line without
/// trailing blanks. Names and paths come from agents and users: each cell
/// is made one inert line first.
pub fn columns<const N: usize>(mut rows: Vec<[String; N]>) -> String {
    for cell in rows.iter_mut().flatten() {
        if let std::borrow::Cow::Owned(inert) = crate::text::inert_line(cell) {
            *cell = inert;
        }
    }
    let lengths: Vec<[usize; N]> = rows
        .iter()
        .map(|row| row.each_ref().map(|c| c.chars().count()))
        .collect();
    let mut widths = [0usize; N];
    for row in &lengths {
        for (w, len) in widths.iter_mut().zip(row) {
            *w = (*w).max(*len);
        }
    }
    let mut out = String::with_capacity(rows.len() * (widths.iter().sum::<usize>() + 2 * N));
    for (row, lengths) in rows.iter().zip(&lengths) {
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                out.push_str("  ");
            }
            out.push_str(cell);
            if i + 1 < N {
                out.extend(std::iter::repeat_n(' ', widths[i] - lengths[i]));
            }
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
    }
    out
}

/// The variable names a run was given from the client's environment
/// (values are never kept): the harness's own, then those named with
/// `--env`.
fn env_line(h: &crate::api::HarnessDetail) -> Option<String> {
    let mut parts = Vec::new();
    if !h.env_harness.is_empty() {
        parts.push(format!("{} (passed by default)", h.env_harness.join(" ")));
    }
    let named: Vec<&str> = h
        .env_passed
        .iter()
        .filter(|n| !h.env_harness.contains(n))
        .map(String::as_str)
        .collect();
    if !named.is_empty() {
        parts.push(format!("{} (--env)", named.join(" ")));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

pub fn detail(d: &RunDetail) -> String {
    let mut f = Fields::default();
    who_and_how(d, &mut f);
    state_fields(d, &mut f);
    conversation_fields(d, &mut f);
    let r = &d.run;
    f.opt("worktree", r.worktree.clone());
    f.opt(
        "sandbox",
        r.sandbox.as_deref().map(|how| {
            let how = crate::values::sandbox::Sandbox::parse(how).unwrap_or(crate::values::sandbox::Sandbox::On);
            how.describe().to_string()
        }),
    );
    if let Some(routine) = &r.routine {
        let at = r.scheduled_at.as_deref().unwrap_or("-");
        f.push("routine", format!("{routine}, scheduled for {at}"));
    }
    f.push("size", format!("{}x{}", r.cols, r.rows));
    f.push("created", r.created_at.clone());
    f.push("started", r.started_at.clone().unwrap_or_else(|| "-".into()));
    f.push("ended", r.ended_at.clone().unwrap_or_else(|| "-".into()));
    f.push("time", duration(r));
    f.push("output", format!("{} bytes", r.output_bytes));
    if let Some(at) = &r.log_pruned_at {
        f.push("log", format!("log pruned at {at} (retention)"));
    }
    let mut out = f.0;
    out.push_str("events\n");
    for e in &d.events {
        let data = if e.data.is_null() || e.data == serde_json::json!({}) {
            String::new()
        } else {
            one_line(&e.data.to_string())
        };
        out.push_str(&format!(
            "  {:>3}  {}  {:<16} {}\n",
            e.seq,
            e.at,
            e.kind,
            crate::text::bounded(&data, 160)
        ));
    }
    out
}

/// A record's lines, `key  value`, each value made inert.
#[derive(Default)]
struct Fields(String);

impl Fields {
    fn push(&mut self, k: &str, v: String) {
        self.0.push_str(&format!("{k:<10} {}\n", crate::text::inert_line(&v)));
    }

    fn opt(&mut self, k: &str, v: Option<String>) {
        if let Some(v) = v {
            self.push(k, v);
        }
    }
}

/// Which run, which harness (its attempts), what it ran, where.
fn who_and_how(d: &RunDetail, f: &mut Fields) {
    let r = &d.run;
    f.push("id", r.id.clone());
    f.push("name", r.name.clone());
    let mut harness = r.harness.clone();
    if let Some(v) = &d.harness.harness_version {
        harness = format!("{harness} {v}");
    }
    if let Some(p) = &d.harness.profile {
        harness = format!("{harness} (profile {p})");
    }
    f.push("harness", harness);
    // More than one attempt: an account problem made the run fall back.
    if d.harness.attempts.len() > 1 {
        for a in &d.harness.attempts {
            let mut line = format!(
                "{} profile {} · {}",
                a.n,
                a.profile.as_deref().unwrap_or("-"),
                a.outcome.as_deref().unwrap_or("running")
            );
            if let Some(reason) = &a.reason {
                line.push_str(&format!(": {reason}"));
            }
            f.push("attempt", line);
        }
    }
    f.push("command", shell_words::join(&r.command));
    f.opt("env", env_line(&d.harness));
    f.push("host", r.host.clone());
    f.push("cwd", r.cwd.clone());
}

/// Where the run stands: state and status with why, prompts waiting, its
/// end, its process and parent.
fn state_fields(d: &RunDetail, f: &mut Fields) {
    let r = &d.run;
    let state = if r.state.is_live() {
        format!("{} · {}", r.state.as_str(), r.status.as_str())
    } else {
        r.state.as_str().to_string()
    };
    f.push("state", state);
    f.opt("why", r.evidence_line(std::time::SystemTime::now()));
    f.opt("reason", r.reason.clone());
    for w in &r.waiting {
        f.push("waiting", format!("{} {}: {}", w.id, short(&w.text, 40), w.why));
    }
    for u in &d.undelivered {
        f.push("unsent", format!("{} {}: {}", u.id, short(&u.text, 40), u.reason));
    }
    f.opt("exit", r.exit_code.map(|c| c.to_string()));
    f.opt("signal", r.signal.clone());
    f.push("pid", r.pid.map(|p| p.to_string()).unwrap_or_else(|| "-".into()));
    f.push("parent", r.parent_id.clone().unwrap_or_else(|| "-".into()));
    if r.detached {
        f.push("detached", "yes".into());
    }
}

/// Its conversation: session, transcript, usage, where it resumed from,
/// its subagents.
fn conversation_fields(d: &RunDetail, f: &mut Fields) {
    let r = &d.run;
    let removed = d.events.iter().any(|e| e.kind == "SESSION_REMOVED");
    let session = r.session_id.clone().unwrap_or_else(|| "-".into());
    f.push(
        "session",
        match removed {
            true => format!("{session} (conversation removed)"),
            false => session,
        },
    );
    f.opt("transcript", d.harness.transcript_path.clone());
    if let Some(u) = &d.usage {
        use crate::transcript::usage;
        f.push("tokens", usage::summary(u));
        // Continuation lines: the subagents' share, and each model's when
        // there are several (one model is the whole line already).
        if let Some(sub) = usage::subagents_line(u) {
            f.push("", format!("subagents: {sub}"));
        }
        if u.models.len() > 1 {
            for m in &u.models {
                let cost = m.estimated_cost_usd.map(usage::dollars).unwrap_or_else(|| "—".into());
                let name = m.model.as_deref().unwrap_or("several models");
                f.push("", format!("{name}: {} — est. {cost}", usage::tokens_line(&m.tokens)));
            }
        }
        f.push("messages", u.messages.to_string());
    }
    if let Some(from) = &d.harness.resumed_from {
        let how = d.harness.resume_mode.as_deref().unwrap_or("fork");
        f.push("from", format!("session {from} ({how})"));
    }
    for sub in &d.harness.subagents {
        let kind = sub.agent_type.as_deref().unwrap_or("subagent");
        let state = if sub.ended_at.is_some() { "done" } else { "running" };
        f.push("subagent", format!("{} {kind} ({state})", sub.agent_id));
    }
}

/// `text` on one line, at most `max` characters, `…` where it was cut.
pub fn short(text: &str, max: usize) -> String {
    let line = text.replace('\n', " ⏎ ");
    match line.char_indices().nth(max) {
        Some((at, _)) => format!("{:?}…", &line[..at]),
        None => format!("{line:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ls_shows_each_id_as_far_as_it_differs_from_the_others_and_never_only_its_millisecond() {
        // Three runs started in the same millisecond, two of them sharing
        // 12 characters; one alone.
        let ids = [
            "01M92D29RVZMD5C28R0XQS1H15",
            "01M92D29RVZMX5C28R0XQS1H15",
            "01M92D29RVQAB000000000000",
            "01M93AAAAAAAAAAAAAAAAAAAAA",
        ];
        let shown = shown_id_lengths(&ids);
        assert_eq!(shown[0], 13, "one past the 12 it shares");
        assert_eq!(shown[1], 13);
        assert_eq!(shown[2], 12, "at least 12: two random characters");
        assert_eq!(shown[3], 12);
        let prefixes: Vec<&str> = ids.iter().zip(&shown).map(|(id, n)| &id[..*n]).collect();
        for (i, p) in prefixes.iter().enumerate() {
            let matching = ids.iter().filter(|id| id.starts_with(p)).count();
            assert_eq!(matching, 1, "{p} names {} alone", ids[i]);
        }
    }
}
