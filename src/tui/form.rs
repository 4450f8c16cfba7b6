//! The prompt composer and the new-run form.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui_textarea::TextArea;

use crate::api::{RunSpec, StartParams};

pub enum Outcome {
    Keep,
    Close,
    Submit,
}

/// A multi-line prompt for one run. Its id is minted here, once, so a retry
/// after a lost answer never delivers the prompt twice.
pub struct Composer {
    pub run: String,
    pub run_name: String,
    pub prompt_id: String,
    pub text: TextArea<'static>,
    /// Esc was pressed on a draft: the next key says whether to throw it away.
    pub discarding: bool,
    /// A broadcast's runs (id, name), in the order marked; empty when the
    /// prompt is for `run` alone. Each gets an id of its own when sent.
    pub targets: Vec<(String, String)>,
}

impl Composer {
    pub fn new(run: &str, run_name: &str) -> Composer {
        let mut text = TextArea::default();
        text.set_placeholder_text("prompt — Enter sends, Alt-Enter new line, Esc closes");
        Composer {
            run: run.to_string(),
            run_name: run_name.to_string(),
            prompt_id: ulid::Ulid::new().to_string(),
            text,
            discarding: false,
            targets: Vec::new(),
        }
    }

    /// A prompt for each of the marked runs (`broadcast.rs`).
    pub fn to_each(targets: Vec<(String, String)>) -> Composer {
        let mut composer = Composer::new("", &format!("{} runs", targets.len()));
        composer.targets = targets;
        composer
    }

    pub fn text(&self) -> String {
        self.text.lines().join("\n")
    }

    /// Pasted text, its lines kept: terminals end pasted lines with CR.
    pub fn paste(&mut self, s: &str) {
        self.discarding = false;
        self.text.insert_str(s.replace("\r\n", "\n").replace('\r', "\n"));
    }

    pub fn key(&mut self, key: KeyEvent) -> Outcome {
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if std::mem::take(&mut self.discarding) {
            // y or a second Esc throws the draft away; anything else keeps it.
            return match key.code {
                KeyCode::Char('y' | 'Y') | KeyCode::Esc => Outcome::Close,
                _ => Outcome::Keep,
            };
        }
        match key.code {
            KeyCode::Esc if self.text().trim().is_empty() => Outcome::Close,
            KeyCode::Esc => {
                self.discarding = true;
                Outcome::Keep
            }
            KeyCode::Enter if alt || key.modifiers.contains(KeyModifiers::SHIFT) => {
                self.text.insert_newline();
                Outcome::Keep
            }
            KeyCode::Char('j') if ctrl => {
                self.text.insert_newline();
                Outcome::Keep
            }
            KeyCode::Enter => Outcome::Submit,
            _ => {
                self.text.input(key);
                Outcome::Keep
            }
        }
    }
}

/// The new-run form offers the demo agent first (it runs anywhere), then
/// every agent family built in, then `shell` and `cmd`; it starts on the
/// first agent installed.
pub fn harnesses() -> Vec<&'static str> {
    let agents = crate::harness::KNOWN
        .iter()
        .filter(|f| !["demo", "shell", "cmd"].contains(f));
    std::iter::once(&"demo")
        .chain(agents)
        .chain(&["shell", "cmd"])
        .copied()
        .collect()
}

impl super::app::App {
    /// The agents installed here, looked up: an open form not yet changed
    /// by hand moves to the first of them.
    pub(super) fn harnesses_found(&mut self, found: Vec<String>) {
        if let Some(super::app::Overlay::NewRun(form)) = &mut self.overlay.shown {
            form.learn(Some(found.clone()));
        }
        self.installed = Some(found);
    }
}

/// An agent CLI of its own, found on PATH (not the demo, a shell or a
/// command).
fn is_agent(harness: &str) -> bool {
    !matches!(harness, "demo" | "shell" | "cmd") && crate::harness::adapter_for(harness).is_some()
}

/// The agent harnesses of the form whose program is in `path` (as
/// `agents doctor` looks for them): a stat per directory of PATH for each,
/// so it runs off the TUI's loop, once.
pub fn installed_harnesses(path: Option<&str>) -> Vec<String> {
    all_harnesses()
        .into_iter()
        .filter(|h| {
            let program = crate::harness::adapter_for(h)
                .filter(|_| is_agent(h))
                .map(|a| a.program());
            program.is_some_and(|p| crate::harness::find_binary(p, path).is_some())
        })
        .collect()
}

/// The form's harnesses: the built-in ones, then those the config in
/// force declares (`[harnesses.NAME]`).
fn all_harnesses() -> Vec<String> {
    let mut all: Vec<String> = harnesses().iter().map(|h| h.to_string()).collect();
    all.extend(crate::harness::user::installed_names());
    all
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Harness,
    Host,
    Cwd,
    Name,
    Model,
    Args,
    Prompt,
    Worktree,
    Sandbox,
    Timeout,
    Env,
}

impl Field {
    pub const ALL: [Field; 11] = [
        Field::Harness,
        Field::Host,
        Field::Cwd,
        Field::Name,
        Field::Model,
        Field::Args,
        Field::Prompt,
        Field::Worktree,
        Field::Sandbox,
        Field::Timeout,
        Field::Env,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Field::Harness => "harness",
            Field::Host => "host",
            Field::Cwd => "cwd",
            Field::Name => "name",
            Field::Model => "model",
            Field::Args => "args",
            Field::Prompt => "prompt",
            Field::Worktree => "worktree",
            Field::Sandbox => "sandbox",
            Field::Timeout => "timeout",
            Field::Env => "env",
        }
    }

    /// Chosen with ←/→/Space rather than typed.
    pub fn is_choice(self) -> bool {
        matches!(self, Field::Harness | Field::Host | Field::Worktree | Field::Sandbox)
    }
}

/// `agents run` as a form: each of its options a field, a host chosen
/// among the configured ones, and every error shown in the form with what
/// was typed kept.
pub struct NewRunForm {
    pub harness: usize,
    /// `local`, then the configured hosts.
    pub hosts: Vec<String>,
    pub host: usize,
    pub cwd: String,
    pub name: String,
    pub model: String,
    pub args: String,
    pub prompt: String,
    pub worktree: bool,
    /// In a bubblewrap box (`--sandbox`), and how.
    pub sandbox: Option<crate::values::sandbox::Sandbox>,
    /// Seconds, or a duration (`90s`, `10m`, `1h`).
    pub timeout: String,
    /// Names of variables to pass, separated by spaces.
    pub env: String,
    pub field: Field,
    pub error: Option<String>,
    /// The agent harnesses installed here, `None` until looked up.
    pub installed: Option<Vec<String>>,
    /// The harness was chosen by hand: what is found later leaves it.
    pub chosen: bool,
    /// The harnesses `harness` picks among (`all_harnesses`).
    harnesses: Vec<String>,
}

impl Default for NewRunForm {
    fn default() -> Self {
        NewRunForm::new()
    }
}

impl NewRunForm {
    pub fn new() -> NewRunForm {
        NewRunForm::with_hosts(Vec::new())
    }

    /// A form whose host is chosen among `local` and `hosts`.
    pub fn with_hosts(hosts: Vec<String>) -> NewRunForm {
        let mut all = vec!["local".to_string()];
        all.extend(hosts.into_iter().filter(|h| h != "local"));
        NewRunForm {
            harness: 0,
            hosts: all,
            host: 0,
            cwd: here(),
            name: String::new(),
            model: String::new(),
            args: String::new(),
            prompt: String::new(),
            worktree: false,
            sandbox: None,
            timeout: String::new(),
            env: String::new(),
            field: Field::Harness,
            error: None,
            installed: None,
            chosen: false,
            harnesses: all_harnesses(),
        }
    }

    /// The form told which agents are installed here: it starts on the
    /// first of them (the demo where none is), unless one was chosen.
    pub fn knowing(mut self, installed: Option<Vec<String>>) -> NewRunForm {
        self.learn(installed);
        self
    }

    pub fn learn(&mut self, installed: Option<Vec<String>>) {
        if !self.chosen
            && let Some(found) = &installed
        {
            self.harness = self.harnesses.iter().position(|h| found.contains(h)).unwrap_or(0);
        }
        self.installed = installed;
    }

    /// Whether the shown harness's program is here: said for an agent on
    /// this machine once looked up, nothing for the rest.
    fn installed_mark(&self) -> &'static str {
        let harness = self.harnesses[self.harness].as_str();
        match &self.installed {
            _ if self.host() != "local" => "",
            _ if !is_agent(harness) => "",
            Some(found) if found.iter().any(|f| f == harness) => "  installed",
            Some(_) => "  not installed (not on PATH)",
            None => "",
        }
    }

    pub fn host(&self) -> &str {
        self.hosts.get(self.host).map_or("local", String::as_str)
    }

    pub fn value(&self, field: Field) -> String {
        match field {
            Field::Harness => format!("◂ {} ▸{}", self.harnesses[self.harness], self.installed_mark()),
            Field::Host if self.hosts.len() == 1 => "local (agents hosts add NAME adds another)".into(),
            Field::Host => format!("◂ {} ▸", self.host()),
            Field::Cwd if self.cwd.is_empty() && self.host() != "local" => "(its home)".into(),
            Field::Worktree => match self.worktree {
                true => "◂ yes: its own branch agents/<name> ▸".into(),
                false => "◂ no ▸".into(),
            },
            Field::Sandbox => match self.sandbox {
                None => "◂ no ▸".into(),
                Some(crate::values::sandbox::Sandbox::On) => "◂ yes: writes only its work tree, network on ▸".into(),
                Some(crate::values::sandbox::Sandbox::Offline) => "◂ offline: and no network ▸".into(),
            },
            _ => self.text(field).cloned().unwrap_or_default(),
        }
    }

    fn text(&self, field: Field) -> Option<&String> {
        match field {
            Field::Cwd => Some(&self.cwd),
            Field::Name => Some(&self.name),
            Field::Model => Some(&self.model),
            Field::Args => Some(&self.args),
            Field::Prompt => Some(&self.prompt),
            Field::Timeout => Some(&self.timeout),
            Field::Env => Some(&self.env),
            Field::Harness | Field::Host | Field::Worktree | Field::Sandbox => None,
        }
    }

    fn text_mut(&mut self) -> Option<&mut String> {
        match self.field {
            Field::Cwd => Some(&mut self.cwd),
            Field::Name => Some(&mut self.name),
            Field::Model => Some(&mut self.model),
            Field::Args => Some(&mut self.args),
            Field::Prompt => Some(&mut self.prompt),
            Field::Timeout => Some(&mut self.timeout),
            Field::Env => Some(&mut self.env),
            Field::Harness | Field::Host | Field::Worktree | Field::Sandbox => None,
        }
    }

    pub fn paste(&mut self, s: &str) {
        if let Some(t) = self.text_mut() {
            t.push_str(&s.replace(['\r', '\n'], " "));
        }
    }

    fn step(&mut self, by: isize) {
        let i = Field::ALL.iter().position(|f| *f == self.field).unwrap_or(0) as isize;
        self.field = Field::ALL[(i + by).rem_euclid(Field::ALL.len() as isize) as usize];
    }

    /// ←/→/Space on a choice.
    fn choose(&mut self, by: isize) {
        let next = |i: usize, n: usize| (i as isize + by).rem_euclid(n as isize) as usize;
        match self.field {
            Field::Harness => {
                self.harness = next(self.harness, self.harnesses.len());
                self.chosen = true;
            }
            Field::Worktree => self.worktree = !self.worktree,
            Field::Sandbox => {
                use crate::values::sandbox::Sandbox;
                let modes = [None, Some(Sandbox::On), Some(Sandbox::Offline)];
                let at = modes.iter().position(|m| *m == self.sandbox).unwrap_or(0);
                self.sandbox = modes[next(at, modes.len())];
            }
            Field::Host => {
                let was_local = self.host() == "local";
                self.host = next(self.host, self.hosts.len());
                // A path here means nothing there: a remote run starts in
                // its home unless a path there is typed.
                match (was_local, self.host() == "local") {
                    (true, false) if self.cwd == here() => self.cwd.clear(),
                    (false, true) if self.cwd.is_empty() => self.cwd = here(),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    pub fn key(&mut self, key: KeyEvent) -> Outcome {
        self.error = None;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return Outcome::Close,
            KeyCode::Enter => return Outcome::Submit,
            KeyCode::Tab | KeyCode::Down => self.step(1),
            KeyCode::BackTab | KeyCode::Up => self.step(-1),
            KeyCode::Left if self.field.is_choice() => self.choose(-1),
            KeyCode::Right | KeyCode::Char(' ') if self.field.is_choice() => self.choose(1),
            KeyCode::Backspace => {
                if let Some(t) = self.text_mut() {
                    t.pop();
                }
            }
            // As a shell's line editor: Ctrl-U clears the field, Ctrl-W the
            // word before the cursor (and the spaces after it).
            KeyCode::Char('u') if ctrl => {
                if let Some(t) = self.text_mut() {
                    t.clear();
                }
            }
            KeyCode::Char('w') if ctrl => {
                if let Some(t) = self.text_mut() {
                    let kept = t.trim_end().trim_end_matches(|c: char| !c.is_whitespace()).len();
                    t.truncate(kept);
                }
            }
            KeyCode::Char(c) if !ctrl => {
                if let Some(t) = self.text_mut() {
                    t.push(c);
                }
            }
            _ => {}
        }
        Outcome::Keep
    }

    pub fn params(&self) -> Result<StartParams, String> {
        let harness = self.harnesses[self.harness].clone();
        let host = self.host();
        let cwd = self.cwd.trim();
        // A remote cwd is a path on that host: the remote engine checks it.
        if host == "local" && (cwd.is_empty() || !std::path::Path::new(cwd).is_dir()) {
            return Err(format!("cwd '{cwd}' is not a directory"));
        }
        let mut args = shell_words::split(&self.args).map_err(|e| format!("args: {e} (quote as in a shell)"))?;
        let model = self.model.trim();
        if !model.is_empty() {
            // Every agent family takes `--model NAME`; a shell or command does not.
            if !crate::harness::MODEL_FAMILIES.contains(&harness.as_str()) {
                return Err(format!("the {harness} harness takes no model"));
            }
            args.extend(["--model".to_string(), model.to_string()]);
        }
        if harness == "cmd" && args.is_empty() {
            return Err("the cmd harness needs a command in args".into());
        }
        Ok(StartParams {
            spec: RunSpec {
                harness,
                args,
                name: Some(self.name.trim().to_string()).filter(|n| !n.is_empty()),
                cwd: cwd.to_string(),
                prompt: Some(self.prompt.clone()).filter(|p| !p.trim().is_empty()),
                pass_env: env_names(&self.env)?,
                timeout_secs: timeout_secs(&self.timeout)?,
                worktree: self.worktree,
                host: (host != "local").then(|| host.to_string()),
                sandbox: self.sandbox,
                ..RunSpec::default()
            },
            env: std::env::vars().collect(),
            ..StartParams::default()
        })
    }
}

/// Where the TUI was started: a local run's default cwd.
fn here() -> String {
    std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `90`, `90s`, `10m`, `1h 30m` → seconds; empty → none.
fn timeout_secs(text: &str) -> Result<Option<u64>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let secs = match text.parse::<u64>() {
        Ok(secs) => secs,
        Err(_) => humantime::parse_duration(text)
            .map_err(|_| format!("timeout: '{text}' is not a duration (90, 90s, 10m, 1h)"))?
            .as_secs(),
    };
    match secs {
        0 => Err("timeout: at least 1 second".into()),
        secs => Ok(Some(secs)),
    }
}

/// The names to pass, each a variable's name (values stay in the
/// environment, never in the form or the store).
fn env_names(text: &str) -> Result<Vec<String>, String> {
    let names: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    match names.iter().find(|n| !crate::harness::is_env_name(n)) {
        Some(bad) => Err(format!("env: '{bad}' is not a variable's name (names only)")),
        None => Ok(names),
    }
}
