//! The words each harness family draws while it waits for a person, as
//! data: one TOML file per family in `src/harness/screens/` (its format is
//! in the README there), built in, plus the user's own files of the same
//! format in `<config>/agents/screens/`. `screen.rs` and `login.rs` read a
//! screen with them; a new CLI version's prompt is a rule and a fixture,
//! not a code change.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use serde::Deserialize;

/// The built-in files, by family (the file's stem).
const BUILT_IN: &[(&str, &str)] = &[
    ("aider", include_str!("screens/aider.toml")),
    ("auggie", include_str!("screens/auggie.toml")),
    ("claude", include_str!("screens/claude.toml")),
    ("cline", include_str!("screens/cline.toml")),
    ("code-puppy", include_str!("screens/code-puppy.toml")),
    ("codex", include_str!("screens/codex.toml")),
    ("continue", include_str!("screens/continue.toml")),
    ("copilot", include_str!("screens/copilot.toml")),
    ("crush", include_str!("screens/crush.toml")),
    ("demo", include_str!("screens/demo.toml")),
    ("droid", include_str!("screens/droid.toml")),
    ("gemini", include_str!("screens/gemini.toml")),
    ("gptme", include_str!("screens/gptme.toml")),
    ("grok", include_str!("screens/grok.toml")),
    ("letta", include_str!("screens/letta.toml")),
    ("mini", include_str!("screens/mini.toml")),
    ("interpreter", include_str!("screens/interpreter.toml")),
    ("hermes", include_str!("screens/hermes.toml")),
    ("nanocoder", include_str!("screens/nanocoder.toml")),
    ("opencode", include_str!("screens/opencode.toml")),
    ("pi", include_str!("screens/pi.toml")),
    ("qwen", include_str!("screens/qwen.toml")),
    ("shell", include_str!("screens/shell.toml")),
];

/// How many non-blank lines at the bottom a login complaint must be among:
/// the agent's last words above its input box (Claude's result, box and
/// hint row are five; Gemini's error, box and footer six). Once a later
/// turn is drawn, the old complaint has moved above them.
const LOGIN_WINDOW: usize = 6;

/// The most lines a window may ask for, and rules a file may hold: a
/// user's file is read by every supervisor.
const MAX_WINDOW: usize = 40;
const MAX_RULES: usize = 256;
/// The longest user file read.
const MAX_FILE_BYTES: u64 = 64 * 1024;

/// One file, as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    /// Words below a question's choices that keep it open (beside a key
    /// hint), lower case.
    #[serde(default)]
    pub open_while: Vec<String>,
    #[serde(default)]
    pub login_window: Option<usize>,
    #[serde(default)]
    pub question: Vec<Question>,
    #[serde(default)]
    pub choice_row: Vec<ChoiceRow>,
    #[serde(default)]
    pub choice_list: Vec<ChoiceList>,
    #[serde(default)]
    pub login: Vec<LoginSign>,
    #[serde(default)]
    pub fixture: Vec<Fixture>,
    /// Where the user types, and what an empty input looks like
    /// (`input_line.rs`).
    #[serde(default)]
    pub input: Option<InputRule>,
    #[serde(default)]
    pub input_fixture: Vec<InputFixture>,
    /// Words the screen shows while a turn goes on (`esc to interrupt`):
    /// a still screen without them, after a hook said working, shows the
    /// turn ended with no hook saying so (an Esc fires no `Stop`).
    #[serde(default)]
    pub busy: Option<BusyRule>,
    /// The family saying its model refused it for a limit (`limits.rs`).
    #[serde(default)]
    pub limit: Vec<LimitSign>,
    #[serde(default)]
    pub limit_fixture: Vec<LimitFixture>,
}

/// A family saying it hit a limit: a line among the last `LIMIT_WINDOW`
/// non-blank ones holding `says` (any case), starting with `starts` if
/// given.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitSign {
    pub kind: crate::protocol::supervisor::LimitKind,
    #[serde(default)]
    pub starts: Option<String>,
    pub says: String,
}

/// A screen a family's limit signs were made from, and the limit it must
/// be read as (none: `kind` left out).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitFixture {
    pub screen: String,
    #[serde(default)]
    pub kind: Option<crate::protocol::supervisor::LimitKind>,
}

/// A turn in progress, as the screen shows it: one of `says` among the
/// last few non-blank rows, or with `last_line`, on the last.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BusyRule {
    pub says: Vec<String>,
    #[serde(default)]
    pub last_line: bool,
}

/// How many non-blank rows at the bottom a `[busy]` sign is looked for
/// in: Claude's hint row is the last, under its input box (whose draft may
/// take a few rows).
const BUSY_ROWS: usize = 12;

impl BusyRule {
    /// Whether `lines` (a screen) show a turn in progress.
    pub fn shown(&self, lines: &[String]) -> bool {
        let rows = if self.last_line { 1 } else { BUSY_ROWS };
        let mut tail = lines.iter().rev().filter(|l| !l.trim().is_empty()).take(rows);
        tail.any(|l| self.says.iter().any(|w| l.contains(w.as_str())))
    }
}

/// The harness's input line: a row starting with `marker` (after a frame)
/// among the last `within` non-blank rows; what follows the marker is the
/// user's text, less a placeholder (drawn dim, or one of `placeholders`).
/// With `box_ends`, the rows below the marker's, up to one starting with
/// it, are the input's further lines.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputRule {
    /// The prompt glyph or text the input line starts with (`❯`, `›`).
    #[serde(default)]
    pub marker: Option<String>,
    /// An input that starts with no glyph: the rows under the last row
    /// holding this, from the first with text in its frame to the next
    /// without (nanocoder's box under "What would you like me to help
    /// with?").
    #[serde(default)]
    pub below: Option<String>,
    /// A shell: the cursor's row is the input, after the first of these
    /// that ends a prompt (`$ `, `# `).
    #[serde(default)]
    pub prompt_ends: Vec<String>,
    #[serde(default = "default_within")]
    pub within: usize,
    /// The input line is the cursor's row (a line-mode program, whose
    /// earlier prompts stay on screen above).
    #[serde(default)]
    pub at_cursor: bool,
    /// Further input rows end at a row starting with this; `""`: at a
    /// blank row.
    #[serde(default)]
    pub box_ends: Option<String>,
    /// Texts an empty input shows that are drawn in a colour, not dim.
    #[serde(default)]
    pub placeholders: Vec<String>,
    /// A prompt waits until the input line reads (empty): the harness
    /// drops keys typed before its prompt is drawn (gptme's `User: `).
    #[serde(default)]
    pub waits: bool,
}

fn default_within() -> usize {
    6
}

/// A screen (as `tmux capture-pane -p -e` printed it: with its styles) and
/// what its input line must be read as: `draft` the user's text, or `""`
/// for an empty input.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputFixture {
    pub screen: String,
    #[serde(default)]
    pub draft: Option<String>,
    #[serde(default)]
    pub unknown: bool,
}

/// A question on a line, numbered choices below it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    pub says: String,
    pub why: String,
    #[serde(skip)]
    pub source: Source,
}

/// The file a rule was read from: its family's, built in or the user's
/// (`<config>/agents/screens/FAMILY.toml`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Source {
    pub family: String,
    pub user: bool,
}

/// A finding's rule in words, naming its file: `[[question]] "Allow?" in
/// /home/u/.config/agents/screens/mycli.toml`, or in the built-in one.
pub fn rule_words(rule: &crate::protocol::supervisor::RuleRef) -> String {
    let file = match (rule.user, crate::paths::Paths::screen_rules_dir()) {
        (true, Some(dir)) => dir.join(format!("{}.toml", rule.family)).display().to_string(),
        (true, None) => format!("your screens/{}.toml", rule.family),
        (false, _) => format!("the built-in screens/{}.toml", rule.family),
    };
    format!(
        "[[{}]] \"{}\" in {file}",
        rule.kind,
        crate::text::bounded(&rule.words, 80)
    )
}

impl Source {
    /// The rule of `kind` looking for `words`, as a finding names it.
    pub fn rule(&self, kind: &str, words: &str) -> crate::protocol::supervisor::RuleRef {
        crate::protocol::supervisor::RuleRef {
            kind: kind.into(),
            words: words.into(),
            family: self.family.clone(),
            user: self.user,
        }
    }
}

/// A title, then one row holding every choice.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChoiceRow {
    pub title: String,
    pub choices: Vec<String>,
    /// Only when nothing but blank or frame rows follow the choice row.
    #[serde(default)]
    pub at_bottom: bool,
    pub why: String,
    #[serde(skip)]
    pub source: Source,
}

/// Unnumbered choices one a row (the first selected), from `first` to
/// `last` within a few rows, followed by nothing but frame rows and a key
/// hint; the question starts at a `title` line near above, if any.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChoiceList {
    pub first: String,
    pub last: String,
    pub title: String,
    pub why: String,
    #[serde(skip)]
    pub source: Source,
}

/// A family saying it is not logged in.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoginSign {
    /// The line starts with this (after indentation).
    #[serde(default)]
    pub starts: Option<String>,
    /// Only the last non-blank line, the status row.
    #[serde(default)]
    pub last_line: bool,
    /// Words the line holds, in any case.
    pub says: String,
    #[serde(skip)]
    pub source: Source,
}

/// A screen a file's rules were made from, and how it must be read.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    pub screen: String,
    pub expect: Expect,
    #[serde(default)]
    pub says: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    NeedsApproval,
    Login,
    None,
}

/// A family's login rules.
#[derive(Debug, Clone)]
pub struct LoginRules {
    pub window: usize,
    pub signs: Vec<LoginSign>,
}

/// Every rule in force: questions and their open words from every file,
/// login rules by family.
#[derive(Debug, Clone, Default)]
pub struct ScreenRules {
    pub questions: Vec<Question>,
    pub choice_rows: Vec<ChoiceRow>,
    pub choice_lists: Vec<ChoiceList>,
    pub open_while: Vec<String>,
    login: HashMap<String, LoginRules>,
    input: HashMap<String, InputRule>,
    busy: HashMap<String, BusyRule>,
    limits: HashMap<String, Vec<LimitSign>>,
}

static BUILT_IN_RULES: LazyLock<ScreenRules> = LazyLock::new(|| {
    let mut rules = ScreenRules::default();
    for (family, text) in BUILT_IN {
        let file = parse(text).unwrap_or_else(|e| panic!("src/harness/screens/{family}.toml: {e}"));
        rules.add(family, file, false);
    }
    rules
});

/// Reads one file's text, bounded and checked.
pub fn parse(text: &str) -> Result<RuleFile, String> {
    let mut file: RuleFile = toml::from_str(text).map_err(|e| match error_line(text, &e) {
        Some(line) => format!("line {line}: {}", e.message()),
        None => e.message().to_string(),
    })?;
    let count =
        file.question.len() + file.choice_row.len() + file.choice_list.len() + file.login.len() + file.limit.len();
    if count > MAX_RULES {
        return Err(format!("{count} rules; at most {MAX_RULES}"));
    }
    if file.login_window.is_some_and(|w| w == 0 || w > MAX_WINDOW) {
        return Err(format!("login_window must be 1 to {MAX_WINDOW}"));
    }
    if let Some(input) = &file.input {
        if input.within == 0 || input.within > MAX_WINDOW {
            return Err(format!("input.within must be 1 to {MAX_WINDOW}"));
        }
        let unset = |s: Option<&str>| s.is_none_or(|m| m.trim().is_empty());
        let no_marker = unset(input.marker.as_deref()) && unset(input.below.as_deref());
        if no_marker && input.prompt_ends.iter().all(|p| p.trim().is_empty()) {
            return Err("input needs a marker, below or prompt_ends".into());
        }
    }
    let blank = |s: &str| s.trim().is_empty();
    if file.question.iter().any(|q| blank(&q.says))
        || file.login.iter().any(|l| blank(&l.says))
        || file
            .choice_row
            .iter()
            .any(|c| blank(&c.title) || c.choices.is_empty() || c.choices.iter().any(|c| blank(c)))
        || file.choice_list.iter().any(|c| blank(&c.first) || blank(&c.last))
        || file.limit.iter().any(|l| blank(&l.says))
    {
        return Err("a rule with no words to look for".into());
    }
    for sign in &mut file.login {
        sign.says = sign.says.to_lowercase();
    }
    for sign in &mut file.limit {
        sign.says = sign.says.to_lowercase();
    }
    for word in &mut file.open_while {
        *word = word.to_lowercase();
    }
    Ok(file)
}

/// The line a TOML error is on: where its span starts, or for a key not
/// of the format the line that key is on (the span is its table's).
fn error_line(text: &str, e: &toml::de::Error) -> Option<usize> {
    let start = e.span()?.start.min(text.len());
    let line_of = |at: usize| text[..at].matches('\n').count() + 1;
    let unknown = e
        .message()
        .strip_prefix("unknown field `")
        .and_then(|m| m.split_once('`'));
    let key_at = unknown.and_then(|(key, _)| {
        let mut at = start;
        text[start..].split_inclusive('\n').find_map(|line| {
            let here = at;
            at += line.len();
            let rest = line.trim_start().strip_prefix(key)?;
            rest.trim_start().starts_with('=').then_some(here)
        })
    });
    Some(line_of(key_at.unwrap_or(start)))
}

impl ScreenRules {
    /// The rules that ship with `agents`.
    pub fn built_in() -> &'static ScreenRules {
        &BUILT_IN_RULES
    }

    /// The built-in rules and the user's files (family, text) added to
    /// them; a file that does not read is named in the error.
    pub fn with_files(files: &[(String, String)]) -> Result<ScreenRules, String> {
        let mut rules = ScreenRules::built_in().clone();
        for (family, text) in files {
            let file = parse(text).map_err(|e| format!("screen rules for {family}: {e}"))?;
            rules.add(family, file, true);
        }
        Ok(rules)
    }

    fn add(&mut self, family: &str, mut file: RuleFile, user: bool) {
        let source = Source {
            family: family.to_string(),
            user,
        };
        file.question.iter_mut().for_each(|r| r.source = source.clone());
        file.choice_row.iter_mut().for_each(|r| r.source = source.clone());
        file.choice_list.iter_mut().for_each(|r| r.source = source.clone());
        file.login.iter_mut().for_each(|r| r.source = source.clone());
        self.questions.extend(file.question);
        self.choice_rows.extend(file.choice_row);
        self.choice_lists.extend(file.choice_list);
        self.open_while.extend(file.open_while);
        let login = self.login.entry(family.to_string()).or_insert(LoginRules {
            window: LOGIN_WINDOW,
            signs: Vec::new(),
        });
        if let Some(window) = file.login_window {
            login.window = window;
        }
        login.signs.extend(file.login);
        if let Some(input) = file.input {
            self.input.insert(family.to_string(), input);
        }
        if !file.limit.is_empty() {
            self.limits.entry(family.to_string()).or_default().extend(file.limit);
        }
        if let Some(busy) = file.busy.filter(|b| b.says.iter().any(|w| !w.trim().is_empty())) {
            self.busy.insert(family.to_string(), busy);
        }
    }

    /// The words `family`'s screen shows while a turn goes on, if a rule
    /// says.
    pub fn busy_of(&self, family: &str) -> Option<&BusyRule> {
        self.busy.get(family)
    }

    /// The words `family` says it hit a limit in (none for most).
    pub fn limits_of(&self, family: &str) -> &[LimitSign] {
        self.limits.get(family).map_or(&[], Vec::as_slice)
    }

    /// Where `family`'s input line is, if a rule says.
    pub fn input_of(&self, family: &str) -> Option<&InputRule> {
        self.input.get(family)
    }

    /// The login rules of `family` (none for a family without any).
    pub fn login_of(&self, family: &str) -> Option<&LoginRules> {
        self.login.get(family)
    }
}

/// Where the last valid revision of each of the user's files is kept, and
/// whether this reader keeps them (the daemon) or only reads them.
#[derive(Debug, Clone, Copy)]
pub struct Kept<'a> {
    pub dir: &'a Path,
    pub keeps: bool,
}

/// The user's rule files in `dir` ([`read_user_files`]), each that does
/// not read replaced by its last valid revision in `kept` when there is
/// one (its fault says so); each that reads is kept there when `keeps`.
pub fn read_user_files_kept(dir: &Path, kept: Kept) -> (Vec<(String, String)>, Vec<Fault>) {
    let (mut files, faults) = read_user_files(dir);
    if kept.keeps {
        keep_revisions(kept.dir, &files);
    }
    let faults = faults
        .into_iter()
        .map(|fault| {
            let family = fault.family.as_deref();
            let revision = family.and_then(|f| read_user_file(&kept.dir.join(format!("{f}.toml"))).ok());
            match revision {
                Some(file) if !files.iter().any(|(f, _)| *f == file.0) => {
                    files.push(file);
                    let says = format!("{}; its last valid revision is read meanwhile", fault.says);
                    Fault { says, ..fault }
                }
                _ => fault,
            }
        })
        .collect();
    (files, faults)
}

/// Keeps a copy of each file that read, unless the same is kept already.
fn keep_revisions(dir: &Path, files: &[(String, String)]) {
    if files.is_empty() || std::fs::create_dir_all(dir).is_err() {
        return;
    }
    for (family, text) in files {
        let path = dir.join(format!("{family}.toml"));
        if std::fs::read_to_string(&path).is_ok_and(|kept| kept == *text) {
            continue;
        }
        let tmp = path.with_extension("tmp");
        if std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(&tmp, &path);
        }
    }
}

/// A user file that does not read: the family it is for, if its name
/// says, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub family: Option<String>,
    pub says: String,
}

/// The user's rule files in `dir`: (family, text) of each `*.toml` that
/// reads, by name, and a line for each that does not (too large,
/// unreadable, not the format) — passed over, never a reason for a run not
/// to start. No folder: none.
pub fn read_user_files(dir: &Path) -> (Vec<(String, String)>, Vec<Fault>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Vec::new(), Vec::new()),
        Err(e) => {
            let says = format!("{}: {e}", dir.display());
            return (Vec::new(), vec![Fault { family: None, says }]);
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    let (mut files, mut faults) = (Vec::new(), Vec::new());
    for path in paths.into_iter().take(MAX_RULES) {
        match read_user_file(&path) {
            Ok(file) => files.push(file),
            Err(e) => faults.push(Fault {
                family: path.file_stem().and_then(|s| s.to_str()).map(str::to_string),
                says: format!("{}: {e}", path.display()),
            }),
        }
    }
    (files, faults)
}

fn read_user_file(path: &Path) -> Result<(String, String), String> {
    let family = path
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .ok_or("not a family's name")?;
    let len = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    if len > MAX_FILE_BYTES {
        return Err(format!("{len} bytes; at most {MAX_FILE_BYTES}"));
    }
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    parse(&text)?;
    Ok((family.to_string(), text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ActivityStatus;

    fn screens() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src/harness/screens")
    }

    /// gptme retrying against a failing API shows its turn going on while
    /// a retry is its last line, and none once its prompt is back.
    #[test]
    fn a_busy_sign_on_the_last_line_only_is_read_there_only() {
        let rules = ScreenRules::built_in();
        let busy = rules.busy_of("gptme").expect("gptme's [busy]");
        let read = |file: &str| {
            let screen = std::fs::read_to_string(screens().join(file)).unwrap();
            busy.shown(&screen.lines().map(str::to_string).collect::<Vec<_>>())
        };
        assert!(read("gptme/retrying.txt"));
        assert!(!read("gptme/idle.txt"));
        let mut given_up: Vec<String> = std::fs::read_to_string(screens().join("gptme/retrying.txt"))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        given_up.extend(["Error: the API did not answer".into(), "User: ".into()]);
        assert!(!busy.shown(&given_up), "the retries above the prompt are over");
    }

    /// Every fixture of every built-in file reads as its file says.
    #[test]
    fn every_family_s_fixture_screens_read_as_their_rules_say() {
        let rules = ScreenRules::built_in();
        let mut checked = 0;
        for (family, text) in BUILT_IN {
            let file = parse(text).unwrap();
            let fixtures = file.fixture.len() + file.input_fixture.len() + file.limit_fixture.len();
            assert!(fixtures > 0, "{family}.toml has no fixture screen");
            for fixture in &file.fixture {
                let path = screens().join(&fixture.screen);
                let screen = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let lines: Vec<String> = screen.lines().map(str::to_string).collect();
                let found = super::super::screen::waiting_on_with(rules, &lines, family);
                let got = match &found {
                    None => Expect::None,
                    Some(f) if f.is_login_problem() => Expect::Login,
                    Some(f) => {
                        assert_eq!(f.status, ActivityStatus::NeedsApproval, "{}", fixture.screen);
                        Expect::NeedsApproval
                    }
                };
                assert_eq!(got, fixture.expect, "{}: {found:?}", fixture.screen);
                if let (Some(says), Some(f)) = (&fixture.says, &found) {
                    let text = format!("{} {}", f.why, f.question.as_deref().unwrap_or(""));
                    assert!(
                        text.contains(says.as_str()),
                        "{}: {text:?} lacks {says:?}",
                        fixture.screen
                    );
                }
                checked += 1;
            }
        }
        assert!(checked >= 20, "only {checked} fixtures");
    }

    /// A fixture's rows: an `.ansi` capture (`tmux capture-pane -p -e`)
    /// through the emulator, with its styles; other files as plain text.
    /// The cursor stands at the end of the last non-blank row.
    fn fixture_rows(path: &Path) -> (Vec<super::super::input_line::ScreenRow>, (u16, u16)) {
        use super::super::input_line::{ScreenRow, rows_of};
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let rows: Vec<ScreenRow> = if path.extension().is_some_and(|x| x == "ansi") {
            let lines = text.lines().count().max(1) as u16;
            let mut term = crate::term::Terminal::new(lines, 200);
            term.feed(text.trim_end_matches('\n').replace('\n', "\r\n").as_bytes());
            rows_of(&term)
        } else {
            text.lines().map(ScreenRow::plain).collect()
        };
        let last = rows.iter().rposition(|r| !r.text.trim().is_empty()).unwrap_or(0);
        let col = rows.get(last).map_or(0, |r| r.text.trim_end().chars().count());
        (rows, (last as u16, col as u16))
    }

    /// Every input fixture of every built-in file reads as its file says.
    #[test]
    fn every_family_s_input_line_fixtures_read_as_their_rules_say() {
        use super::super::input_line::{InputLine, read};
        let rules = ScreenRules::built_in();
        let mut checked = 0;
        for (family, text) in BUILT_IN {
            for fixture in parse(text).unwrap().input_fixture {
                let (rows, cursor) = fixture_rows(&screens().join(&fixture.screen));
                let want = match (&fixture.draft, fixture.unknown) {
                    (_, true) => InputLine::Unknown,
                    (Some(d), false) if d.is_empty() => InputLine::Empty,
                    (Some(d), false) => InputLine::Draft(d.clone()),
                    (None, false) => panic!("{}: say draft or unknown", fixture.screen),
                };
                assert_eq!(read(rules.input_of(family), &rows, cursor), want, "{}", fixture.screen);
                checked += 1;
            }
        }
        assert!(checked >= 10, "only {checked} input fixtures");
    }

    /// Every limit fixture of every built-in file reads as its file says.
    #[test]
    fn every_family_s_limit_fixtures_read_as_their_rules_say() {
        let rules = ScreenRules::built_in();
        let mut checked = 0;
        for (family, text) in BUILT_IN {
            for fixture in parse(text).unwrap().limit_fixture {
                let (rows, _) = fixture_rows(&screens().join(&fixture.screen));
                let lines: Vec<String> = rows.into_iter().map(|r| r.text).collect();
                let found = super::super::stall::limit_on(rules, &lines, family);
                assert_eq!(
                    found.as_ref().map(|l| l.kind),
                    fixture.kind,
                    "{}: {found:?}",
                    fixture.screen
                );
                checked += 1;
            }
        }
        assert!(checked >= 20, "only {checked} limit fixtures");
    }

    #[test]
    fn login_rules_are_each_family_s_own_and_questions_everyone_s() {
        let rules = ScreenRules::built_in();
        assert_eq!(rules.login_of("qwen").unwrap().window, 8);
        assert_eq!(rules.login_of("claude").unwrap().window, LOGIN_WINDOW);
        assert!(rules.login_of("cmd").is_none());
        let refused = ["■ unexpected status 401 Unauthorized: bad key".to_string()];
        let screen = super::super::screen::waiting_on_with;
        assert!(screen(rules, &refused, "codex").is_some());
        assert_eq!(screen(rules, &refused, "cmd"), None, "another program's 401 is output");
        let asked = [" Allow execution of [Shell]?", " ● 1. Allow once", "   2. No"].map(String::from);
        assert!(screen(rules, &asked, "cmd").is_some(), "a question whoever asks");
    }

    #[test]
    fn a_one_line_question_is_a_choice_row_on_its_title_s_row() {
        let file = "[[choice_row]]\ntitle = \"Allow toy to write\"\nchoices = [\"[y/n]\"]\nat_bottom = true\nwhy = \"toy asks\"\n";
        let rules = ScreenRules::with_files(&[("toy".into(), file.into())]).unwrap();
        let screen = super::super::screen::waiting_on_with;
        let asked = ["> fix it", "Allow toy to write notes.txt? [y/n] "].map(String::from);
        let found = screen(&rules, &asked, "toy").unwrap();
        assert_eq!(found.why, "toy asks");
        let rule = found.rule.unwrap();
        assert_eq!(
            (rule.kind.as_str(), rule.family.as_str(), rule.user),
            ("choice_row", "toy", true)
        );
        let answered = ["> fix it", "Allow toy to write notes.txt? [y/n] y", "wrote it"].map(String::from);
        assert_eq!(screen(&rules, &answered, "toy"), None);
    }

    #[test]
    fn a_user_file_adds_a_question_and_a_bad_one_is_named() {
        let asked = [" Shall I go ahead?", " 1. Go", " 2. Stop", " enter to choose"].map(String::from);
        let screen = super::super::screen::waiting_on_with;
        assert_eq!(screen(ScreenRules::built_in(), &asked, "newcli"), None);
        let file = "[[question]]\nsays = \"Shall I go ahead?\"\nwhy = \"screen shows newcli's permission prompt\"\n";
        let rules = ScreenRules::with_files(&[("newcli".into(), file.into())]).unwrap();
        let found = screen(&rules, &asked, "newcli").unwrap();
        assert_eq!(found.why, "screen shows newcli's permission prompt");
        let bad = ScreenRules::with_files(&[("newcli".into(), "[[question]]\nsay = \"x\"\n".into())]).unwrap_err();
        assert!(bad.starts_with("screen rules for newcli: "), "{bad}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("newcli.toml"), file).unwrap();
        std::fs::write(dir.path().join("broken.toml"), "[[question]\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not rules").unwrap();
        let (files, faults) = read_user_files(dir.path());
        assert_eq!(files, vec![("newcli".to_string(), file.to_string())]);
        assert_eq!(faults.len(), 1, "{faults:?}");
        assert!(faults[0].says.contains("broken.toml: line 1: "), "{faults:?}");
        assert_eq!(faults[0].family.as_deref(), Some("broken"));
        assert_eq!(read_user_files(&dir.path().join("none")), (Vec::new(), Vec::new()));
        let unknown =
            parse("[[question]]\nsays = \"x\"\nwhy = \"w\"\n\n[[question]]\nsay = \"y\"\nwhy = \"z\"\n").unwrap_err();
        assert!(unknown.starts_with("line 6: unknown field `say`"), "{unknown}");
        let empty = parse("[[login]]\nsays = \"  \"\n").unwrap_err();
        assert!(empty.contains("no words"), "{empty}");
    }
}
