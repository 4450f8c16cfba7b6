//! Harness profiles from `config.toml` (docs/design.md §4): `[profiles.NAME]` picks
//! a family, and may pin the binary, an isolated config home, a model, and
//! environment variables to pass by name. `agents run NAME` starts one; a
//! profile named like a family (`[profiles.claude]`) changes what
//! `agents run claude` means.

use std::path::PathBuf;

use serde::Deserialize;

pub use crate::values::is_env_name;

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Profile {
    /// `claude`, `codex`, `gemini`, `aider`, `shell`, `cmd` or `demo`;
    /// defaults to the profile's own name.
    pub family: Option<String>,
    /// The program to run: a path, or a name searched in PATH.
    pub binary: Option<String>,
    /// An isolated config home (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`), so
    /// accounts and versions do not bleed. `~/` is the user's home.
    pub config_home: Option<String>,
    /// Passed as the harness's model option.
    pub model: Option<String>,
    /// Environment variables passed to the harness, by name (values come
    /// from the client's environment and are never stored).
    pub pass_env: Vec<String>,
    /// Profiles of the same family to try, in order, when a run of this
    /// one ends early on an account problem (authentication, quota): each
    /// is a new attempt of the same run.
    pub fallback: Vec<String>,
    /// Its runs boxed (`true`, `"offline"`), as `--sandbox` asks.
    pub sandbox: Option<crate::values::sandbox::Setting>,
}

/// The most fallbacks a profile may name: enough for a few accounts, few
/// enough that a broken setup fails quickly.
pub const MAX_FALLBACKS: usize = 4;

impl Profile {
    /// The family this profile runs when it is called `name`.
    pub fn family_for<'a>(&'a self, name: &'a str) -> &'a str {
        self.family.as_deref().unwrap_or(name)
    }

    /// `config_home` with `~/` expanded against `home`.
    pub fn config_home_in(&self, home: Option<&str>) -> Option<PathBuf> {
        let raw = self.config_home.as_deref()?;
        match (raw.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => Some(PathBuf::from(home).join(rest)),
            _ => Some(PathBuf::from(raw)),
        }
    }
}

/// Checks every profile names a known family and sane values (called when
/// the config is read, so a bad profile is reported, never half-used).
pub fn validate(
    profiles: &std::collections::BTreeMap<String, Profile>,
    families: &super::user::Families,
) -> Result<(), String> {
    for (name, profile) in profiles {
        let family = profile.family_for(name);
        let Some(adapter) = families.adapter(family) else {
            return Err(format!(
                "profiles.{name}: unknown family '{family}' (known: {})",
                families.known().join(", ")
            ));
        };
        if profile.config_home.is_some() && adapter.config_home_var().is_none() {
            return Err(format!(
                "profiles.{name}: the {family} harness has no config home to set"
            ));
        }
        if let Some(bad) = profile.pass_env.iter().find(|n| !is_env_name(n)) {
            return Err(format!("profiles.{name}: '{bad}' is not an environment variable name"));
        }
        if profile.fallback.len() > MAX_FALLBACKS {
            return Err(format!(
                "profiles.{name}: fallback names {} profiles, at most {MAX_FALLBACKS}",
                profile.fallback.len()
            ));
        }
        for (i, other) in profile.fallback.iter().enumerate() {
            let Some(next) = profiles.get(other) else {
                return Err(format!("profiles.{name}: fallback '{other}' is not a profile"));
            };
            if other == name || profile.fallback[..i].contains(other) {
                return Err(format!("profiles.{name}: fallback '{other}' is named twice"));
            }
            let theirs = next.family_for(other);
            if theirs != family {
                return Err(format!(
                    "profiles.{name}: fallback '{other}' is a {theirs} profile; fallbacks stay in the {family} family"
                ));
            }
        }
    }
    Ok(())
}

/// The families whose launch puts `--model M` before the user's arguments
/// (`harness::Adapter::launch` by default, and Claude's own).
pub const MODEL_FAMILIES: [&str; 12] = [
    "claude", "codex", "gemini", "aider", "opencode", "kilo", "qwen", "pi", "copilot", "auggie", "gptme", "grok",
];

/// `--model M` for a harness whose family takes one; refused for one that
/// does not, and for a profile that pins its own (the harness would get two).
pub fn model_args(
    profiles: &std::collections::BTreeMap<String, Profile>,
    harness: &str,
    model: &str,
) -> Result<Vec<String>, crate::api::ApiError> {
    let profile = profiles.get(harness);
    if let Some(pinned) = profile.and_then(|p| p.model.as_deref()) {
        return Err(crate::api::ApiError::bad_request(format!(
            "profile '{harness}' already sets model '{pinned}'; start it without `model`"
        )));
    }
    let family = profile.map_or(harness, |p| p.family_for(harness));
    if MODEL_FAMILIES.contains(&family) {
        Ok(vec!["--model".into(), model.into()])
    } else {
        Err(crate::api::ApiError::bad_request(format!(
            "the {family} harness takes no model (only {})",
            MODEL_FAMILIES.join(", ")
        )))
    }
}

/// A start's `model`, made the harness's own option: `--model M` before
/// the run's arguments, as its family takes it (the record keeps the
/// arguments, so a rerun asks for the same model).
pub fn apply_model(
    spec: &mut crate::api::RunSpec,
    profiles: &std::collections::BTreeMap<String, Profile>,
) -> Result<(), crate::api::ApiError> {
    if let Some(model) = spec.model.take() {
        let mut args = model_args(profiles, &spec.harness, &model)?;
        args.append(&mut spec.args);
        spec.args = args;
    }
    Ok(())
}

/// A start's first prompt, for a family that takes one only on its
/// command line (`Description::prompt_at_start`): its words after the
/// run's arguments, rather than typed in once it runs.
pub fn apply_first_prompt(spec: &mut crate::api::RunSpec, profiles: &std::collections::BTreeMap<String, Profile>) {
    let family = profiles
        .get(&spec.harness)
        .map_or(spec.harness.as_str(), |p| p.family_for(&spec.harness));
    let Some(adapter) = super::adapter_for(family).filter(|a| a.description().prompt_at_start) else {
        return;
    };
    let words = spec
        .prompt
        .as_deref()
        .filter(|p| !p.is_empty())
        .and_then(|p| adapter.prompt_args(p));
    if let Some(words) = words {
        spec.args.extend(words);
        spec.prompt = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn parse(text: &str) -> Result<BTreeMap<String, Profile>, String> {
        let profiles: BTreeMap<String, Profile> = toml::from_str(text).map_err(|e| e.to_string())?;
        validate(&profiles, &super::super::user::Families::default())?;
        Ok(profiles)
    }

    #[test]
    fn a_profile_names_its_family_or_is_named_after_one() {
        let p = parse(
            "[work]\nfamily = \"claude\"\nconfig_home = \"~/.claude-work\"\nmodel = \"opus\"\npass_env = [\"ANTHROPIC_API_KEY\"]\n[codex]\nbinary = \"/opt/codex\"\n",
        )
        .unwrap();
        assert_eq!(p["work"].family_for("work"), "claude");
        assert_eq!(p["codex"].family_for("codex"), "codex");
        assert_eq!(
            p["work"].config_home_in(Some("/home/u")),
            Some(PathBuf::from("/home/u/.claude-work"))
        );
    }

    #[test]
    fn bad_profiles_are_refused_with_the_reason() {
        assert!(
            parse("[x]\nfamily = \"vim\"\n")
                .unwrap_err()
                .contains("unknown family 'vim'")
        );
        assert!(parse("[mine]\n").unwrap_err().contains("unknown family 'mine'"));
        assert!(
            parse("[a]\nfamily = \"aider\"\nconfig_home = \"/tmp/a\"\n")
                .unwrap_err()
                .contains("no config home")
        );
        assert!(
            parse("[c]\nfamily = \"claude\"\npass_env = [\"A=B\"]\n")
                .unwrap_err()
                .contains("not an environment variable name")
        );
        assert!(parse("[c]\nfamily = \"claude\"\ncolour = 1\n").is_err());
    }

    #[test]
    fn fallbacks_name_other_profiles_of_the_same_family_a_few_times_at_most() {
        let ok = parse(
            "[a]\nfamily = \"claude\"\nfallback = [\"b\"]\n[b]\nfamily = \"claude\"\nconfig_home = \"~/.claude-b\"\n",
        )
        .unwrap();
        assert_eq!(ok["a"].fallback, ["b"]);
        let err = |text: &str| parse(text).unwrap_err();
        assert!(err("[a]\nfamily = \"claude\"\nfallback = [\"zz\"]\n").contains("fallback 'zz' is not a profile"));
        assert!(
            err("[a]\nfamily = \"claude\"\nfallback = [\"b\"]\n[b]\nfamily = \"codex\"\n")
                .contains("fallback 'b' is a codex profile; fallbacks stay in the claude family")
        );
        assert!(err("[a]\nfamily = \"claude\"\nfallback = [\"a\"]\n").contains("named twice"));
        let many =
            "[a]\nfamily = \"claude\"\nfallback = [\"b\", \"b\", \"b\", \"b\", \"b\"]\n[b]\nfamily = \"claude\"\n";
        assert!(err(many).contains("at most 4"));
    }

    #[test]
    fn a_model_is_the_harness_option_only_for_families_that_take_one() {
        let mut profiles = std::collections::BTreeMap::new();
        assert_eq!(
            model_args(&profiles, "claude", "opus").unwrap(),
            vec!["--model", "opus"]
        );
        assert!(model_args(&profiles, "cmd", "opus").is_err());
        let work = Profile {
            family: Some("codex".into()),
            ..Profile::default()
        };
        profiles.insert("work".to_string(), work.clone());
        assert_eq!(model_args(&profiles, "work", "o3").unwrap(), vec!["--model", "o3"]);
        let pinned = Profile {
            model: Some("gpt-5".into()),
            ..work
        };
        profiles.insert("work".to_string(), pinned);
        let e = model_args(&profiles, "work", "o3").unwrap_err();
        assert!(e.message.contains("gpt-5"), "{}", e.message);
    }
}
