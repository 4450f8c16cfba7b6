//! `agents show RUN --tree` and `agents sessions show ID`: lineage as
//! indented text (or `--json`, the tool table's answer as it is).

use anyhow::Result;

use crate::api::{Edge, Lineage, LineageNode, RunRef, SessionDetail, SessionRef, method};
use crate::client::Client;
use crate::paths::Paths;

pub async fn tree(paths: &Paths, run: String, json: bool) -> Result<i32> {
    let client = Client::connect(paths, false).await?;
    let lineage: Lineage = client.call::<method::RunsLineage>(RunRef { run }).await?;
    if json {
        crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&lineage)?));
    } else {
        crate::cli::print::out(&crate::text::inert(&tree_text(&lineage)));
    }
    Ok(0)
}

pub async fn session(client: &Client, session: String, json: bool) -> Result<i32> {
    let detail: SessionDetail = client.call::<method::SessionsShow>(SessionRef { session }).await?;
    if json {
        crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&detail)?));
    } else {
        crate::cli::print::out(&crate::text::inert(&session_text(&detail)));
    }
    Ok(0)
}

/// The line `sessions resume` prints when the run could not resume
/// natively and was given the old conversation's context instead.
pub async fn reconstructed_notice(client: &Client, record: &crate::api::RunRecord) -> Option<String> {
    let detail: crate::api::RunDetail = client
        .call::<method::RunsShow>(RunRef { run: record.id.clone() })
        .await
        .ok()?;
    if detail.harness.resume_mode.as_deref() != Some("reconstructed") {
        return None;
    }
    let event = detail.events.iter().find(|e| e.kind == "CONTEXT_RECONSTRUCTED")?;
    let session = event.data["session"].as_str().unwrap_or("?");
    Some(format!(
        "session {session} cannot be resumed natively ({}): run {} ({}) starts a new {} conversation with its context reconstructed from {} of {} messages",
        event.data["why"].as_str().unwrap_or("no reason recorded"),
        record.id,
        record.name,
        record.harness,
        event.data["messages"],
        event.data["of"],
    ))
}

fn short(id: &str) -> &str {
    &id[..id.len().min(10)]
}

/// The tree, one node a line, box-drawn; the run asked about is marked `◀`.
pub fn tree_text(l: &Lineage) -> String {
    let mut out = String::new();
    line(&mut out, &l.root, &l.focus, "", "");
    if l.truncated > 0 {
        out.push_str(&format!("… {} more not shown\n", l.truncated));
    }
    out
}

fn line(out: &mut String, n: &LineageNode, focus: &str, lead: &str, rest: &str) {
    out.push_str(lead);
    out.push_str(&node_text(n));
    if n.edge != Edge::Subagent && n.id == focus {
        out.push_str("  ◀");
    }
    out.push('\n');
    let count = n.children.len();
    for (i, child) in n.children.iter().enumerate() {
        let last = i + 1 == count;
        let lead = format!("{rest}{}", if last { "└─ " } else { "├─ " });
        let rest = format!("{rest}{}", if last { "   " } else { "│  " });
        line(out, child, focus, &lead, &rest);
    }
}

fn node_text(n: &LineageNode) -> String {
    match n.edge {
        Edge::Subagent => {
            let mut s = format!("subagent {} {}  {}", n.name, short(&n.id), n.state);
            if let Some(d) = &n.description {
                s.push_str(&format!("  \"{d}\""));
            }
            s
        }
        edge => {
            let marker = match edge {
                Edge::ResumeOf => "resume-of ",
                Edge::ForkOf => "fork-of ",
                Edge::RerunOf => "rerun-of ",
                Edge::Root | Edge::Child | Edge::Subagent => "",
            };
            let mut s = format!(
                "{marker}{}  {}  {}  {}",
                n.name,
                short(&n.id),
                n.harness.as_deref().unwrap_or("-"),
                n.state
            );
            if let Some(mode) = &n.resume_mode
                && mode != "native"
            {
                s.push_str(&format!("  ({mode})"));
            }
            if n.detached {
                s.push_str("  (detached)");
            }
            s
        }
    }
}

pub fn session_text(d: &SessionDetail) -> String {
    let mut out = String::new();
    let mut field = |k: &str, v: String| out.push_str(&format!("{k:<11} {v}\n"));
    field("session", d.id.clone());
    field("harness", d.harness.clone());
    field("title", d.title.clone().unwrap_or_else(|| "-".into()));
    field("cwd", d.cwd.clone().unwrap_or_else(|| "-".into()));
    let transcript = match (&d.transcript_path, d.transcript_exists) {
        (Some(p), true) => p.clone(),
        (Some(p), false) => format!("{p} (missing)"),
        (None, _) => "-".into(),
    };
    field("transcript", transcript);
    field("first seen", d.first_seen.clone());
    field("last seen", d.last_seen.clone());
    match &d.totals {
        Some(t) => {
            field("messages", t.messages.to_string());
            field(
                "tokens",
                format!(
                    "in {} · out {} · cache read {} · cache write {}",
                    t.input_tokens, t.output_tokens, t.cache_read_tokens, t.cache_write_tokens
                ),
            );
            if let Some(m) = &t.model {
                field("model", m.clone());
            }
        }
        None => field("messages", "not indexed".into()),
    }
    out.push_str("runs\n");
    for r in &d.runs {
        let mut how = r.relation.as_str().to_string();
        if let Some(from) = &r.from_run {
            how.push_str(&format!(" {}", short(from)));
        }
        if let Some(mode) = &r.resume_mode {
            how.push_str(&format!(" ({mode})"));
        }
        out.push_str(&format!(
            "  {}  {:<16} {:<11} {:<24} {}\n",
            short(&r.id),
            r.name,
            r.state.as_str(),
            how,
            r.started_at.as_deref().unwrap_or(&r.created_at)
        ));
    }
    if !d.subagents.is_empty() {
        out.push_str("subagents\n");
        for s in &d.subagents {
            let sub = &s.subagent;
            let state = if sub.ended_at.is_some() { "done" } else { "running" };
            let description = sub
                .description
                .as_deref()
                .map(|d| format!("  \"{d}\""))
                .unwrap_or_default();
            out.push_str(&format!(
                "  {}  {:<16} {:<8} run {}{description}\n",
                short(&sub.agent_id),
                sub.agent_type.as_deref().unwrap_or("subagent"),
                state,
                short(&s.run_id)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(edge: Edge, id: &str, children: Vec<LineageNode>) -> LineageNode {
        LineageNode {
            edge,
            id: id.into(),
            name: id.to_lowercase(),
            state: "running".into(),
            harness: (edge != Edge::Subagent).then(|| "claude".into()),
            session_id: None,
            description: (edge == Edge::Subagent).then(|| "List the files".into()),
            resume_mode: (edge == Edge::ResumeOf).then(|| "reconstructed".into()),
            detached: false,
            children,
        }
    }

    #[test]
    fn the_tree_is_drawn_with_edges_marked_and_the_focus_pointed_at() {
        let l = Lineage {
            focus: "B".into(),
            root: n(
                Edge::Root,
                "A",
                vec![
                    n(Edge::Child, "B", vec![n(Edge::Subagent, "a1", vec![])]),
                    n(Edge::ResumeOf, "C", vec![]),
                ],
            ),
            truncated: 0,
        };
        assert_eq!(
            tree_text(&l),
            "a  A  claude  running\n\
             ├─ b  B  claude  running  ◀\n\
             │  └─ subagent a1 a1  running  \"List the files\"\n\
             └─ resume-of c  C  claude  running  (reconstructed)\n"
        );
    }
}
