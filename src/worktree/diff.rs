//! A unified diff (`git diff` output) read into files and hunks: the
//! summary a Changes answer carries, and the hunks the TUI's Changes tab
//! moves between and quotes back to the agent.

/// One file's part of a diff.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileDiff {
    pub path: String,
    /// `added`, `modified`, `deleted` or `renamed`.
    pub status: &'static str,
    pub added: usize,
    pub removed: usize,
    pub binary: bool,
    pub hunks: Vec<Hunk>,
}

/// One `@@` hunk: its header and its lines, each with its ` `/`+`/`-` mark.
#[derive(Debug, Clone, PartialEq)]
pub struct Hunk {
    pub header: String,
    pub lines: Vec<String>,
}

/// The files of `text`, in the diff's order. Lines outside any file are
/// ignored, so a cut diff reads up to its cut.
pub fn parse(text: &str) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            files.push(FileDiff {
                path: same_path(rest).unwrap_or_else(|| rest.to_string()),
                status: "modified",
                ..FileDiff::default()
            });
            continue;
        }
        let Some(file) = files.last_mut() else { continue };
        if let Some(hunk) = file.hunks.last_mut() {
            match line.as_bytes().first() {
                Some(b'+') => file.added += 1,
                Some(b'-') => file.removed += 1,
                Some(b' ') | Some(b'\\') => {}
                _ => {
                    header_line(file, line);
                    continue;
                }
            }
            hunk.lines.push(line.to_string());
        } else {
            header_line(file, line);
        }
    }
    files
}

/// A line of a file's header, or a hunk's start.
fn header_line(file: &mut FileDiff, line: &str) {
    if line.starts_with("@@") {
        file.hunks.push(Hunk {
            header: line.to_string(),
            lines: Vec::new(),
        });
    } else if line.starts_with("new file mode") {
        file.status = "added";
    } else if line.starts_with("deleted file mode") {
        file.status = "deleted";
    } else if let Some(to) = line.strip_prefix("rename to ") {
        file.status = "renamed";
        file.path = unquote(to);
    } else if let Some(to) = line.strip_prefix("+++ b/") {
        file.path = unquote(name_of(to));
    } else if let Some(from) = line.strip_prefix("--- a/")
        && file.status == "deleted"
    {
        file.path = unquote(name_of(from));
    } else if line.starts_with("Binary files ") {
        file.binary = true;
    }
}

/// The name on a `---` / `+++` line: git ends it with a tab when it holds
/// a space, so that a reader can tell where it ends.
fn name_of(rest: &str) -> &str {
    rest.strip_suffix('\t').unwrap_or(rest)
}

/// `a/P b/P` → `P` (both halves the same, as for every file but a rename).
fn same_path(rest: &str) -> Option<String> {
    let half = rest.len().checked_sub(1)? / 2;
    let (a, b) = (rest.get(..half)?, rest.get(half + 1..)?);
    let (a, b) = (a.strip_prefix("a/")?, b.strip_prefix("b/")?);
    (a == b).then(|| a.to_string())
}

/// git quotes a path with unusual bytes (`"t\303\251st"`); shown as git
/// printed it but without the quotes.
fn unquote(path: &str) -> String {
    path.strip_prefix('"')
        .and_then(|p| p.strip_suffix('"'))
        .unwrap_or(path)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "\
diff --git a/src/lib.rs b/src/lib.rs
index 1111111..2222222 100644
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,3 +1,4 @@ fn main
 a
-b
+B
+c
@@ -10,2 +11,2 @@
 x
-y
+z
diff --git a/new file.txt b/new file.txt
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new file.txt\t
@@ -0,0 +1 @@
+hello
\\ No newline at end of file
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/old.md b/new.md
similarity index 100%
rename from old.md
rename to new.md
diff --git a/logo.png b/logo.png
Binary files a/logo.png and b/logo.png differ
";

    #[test]
    fn files_hunks_and_counts_are_read_from_a_diff() {
        let files = parse(DIFF);
        let summary: Vec<_> = files
            .iter()
            .map(|f| (f.path.as_str(), f.status, f.added, f.removed, f.hunks.len(), f.binary))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("src/lib.rs", "modified", 3, 2, 2, false),
                ("new file.txt", "added", 1, 0, 1, false),
                ("gone.txt", "deleted", 0, 1, 1, false),
                ("new.md", "renamed", 0, 0, 0, false),
                ("logo.png", "modified", 0, 0, 0, true),
            ]
        );
        assert_eq!(files[0].hunks[0].header, "@@ -1,3 +1,4 @@ fn main");
        assert_eq!(files[0].hunks[0].lines, vec![" a", "-b", "+B", "+c"]);
        assert_eq!(files[1].hunks[0].lines.last().unwrap(), "\\ No newline at end of file");
    }

    #[test]
    fn a_cut_diff_reads_up_to_its_cut() {
        let cut = &DIFF[..DIFF.find("+c").unwrap()];
        let files = parse(cut);
        assert_eq!(files.len(), 1);
        assert_eq!((files[0].added, files[0].removed), (1, 1));
        assert!(parse("not a diff\n").is_empty());
    }
}
