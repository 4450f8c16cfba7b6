//! The environment each harness documents and reads — its keys, endpoints,
//! model names and switches — so that a run gets what the same command
//! typed in the user's shell would get (issue #9). The allowlist stays an
//! allowlist: these names, and only while the client has them set; values
//! pass through to the harness and are never stored. Also where a harness
//! keeps a login of its own, for `agents doctor`.

use std::path::{Path, PathBuf};

/// Variable names a harness reads: exact names and name prefixes.
pub struct HarnessEnv {
    /// Names shared with other harnesses, kept in one list
    /// ([`PROVIDER_KEYS`]) so they stay in step; or none.
    pub shared: &'static [&'static str],
    pub names: &'static [&'static str],
    pub prefixes: &'static [&'static str],
}

impl HarnessEnv {
    pub const NONE: HarnessEnv = HarnessEnv {
        shared: &[],
        names: &[],
        prefixes: &[],
    };

    pub fn admits(&self, name: &str) -> bool {
        self.shared.contains(&name) || self.names.contains(&name) || self.prefixes.iter().any(|p| name.starts_with(p))
    }

    /// The names of `env` this admits, sorted, each once.
    pub fn present(&self, env: &[(String, String)]) -> Vec<String> {
        let mut names: Vec<String> = env
            .iter()
            .filter(|(k, v)| !v.is_empty() && self.admits(k))
            .map(|(k, _)| k.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

/// The keys of the model providers every harness that takes several
/// providers reads — opencode (and Kilo Code), Crush, Qwen Code and pi —
/// in one list, so that a key added for them reaches all four.
pub const PROVIDER_KEYS: &[&str] = &["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"];

/// Claude Code: its settings reference (API key and token, base URL, model
/// names, `CLAUDE_CODE_*` and `DISABLE_*` switches, limits), Bedrock
/// (`AWS_*`, `CLAUDE_CODE_USE_BEDROCK`) and Vertex (`CLOUD_ML_REGION`,
/// `VERTEX_REGION_*`, `ANTHROPIC_VERTEX_PROJECT_ID`, Google credentials).
pub const CLAUDE: HarnessEnv = HarnessEnv {
    shared: &[],
    names: &[
        "CLOUD_ML_REGION",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "MAX_THINKING_TOKENS",
        "MAX_MCP_OUTPUT_TOKENS",
        "MCP_TIMEOUT",
        "MCP_TOOL_TIMEOUT",
        "BASH_DEFAULT_TIMEOUT_MS",
        "BASH_MAX_TIMEOUT_MS",
        "BASH_MAX_OUTPUT_LENGTH",
    ],
    prefixes: &["ANTHROPIC_", "CLAUDE_CODE_", "DISABLE_", "AWS_", "VERTEX_REGION_"],
};

/// Codex CLI: the OpenAI key and endpoint (plus each `env_key` its
/// `config.toml` names, read at launch: `codex_provider_keys`).
pub const CODEX: HarnessEnv = HarnessEnv {
    shared: &[],
    names: &[
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_ORGANIZATION",
        "OPENAI_PROJECT",
        "CODEX_API_KEY",
    ],
    prefixes: &[],
};

/// Gemini CLI: API keys, Vertex and Cloud project settings, its own
/// `GEMINI_*` switches and `GOOGLE_GEMINI_BASE_URL`.
pub const GEMINI: HarnessEnv = HarnessEnv {
    shared: &[],
    names: &[
        "GOOGLE_API_KEY",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_GCA",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_GEMINI_BASE_URL",
    ],
    prefixes: &["GEMINI_"],
};

/// aider: the provider keys and endpoints litellm reads for the models
/// aider documents, litellm's own `LITELLM_*` switches, and aider's
/// `AIDER_*` options.
pub const AIDER: HarnessEnv = HarnessEnv {
    shared: &[],
    names: &[
        "GEMINI_API_KEY",
        "DEEPSEEK_API_KEY",
        "OPENROUTER_API_KEY",
        "GROQ_API_KEY",
        "MISTRAL_API_KEY",
        "COHERE_API_KEY",
        "XAI_API_KEY",
        "FIREWORKS_API_KEY",
        "TOGETHERAI_API_KEY",
        "OLLAMA_API_BASE",
        "AZURE_API_KEY",
        "AZURE_API_BASE",
        "AZURE_API_VERSION",
        "VERTEXAI_PROJECT",
        "VERTEXAI_LOCATION",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ],
    prefixes: &["OPENAI_", "ANTHROPIC_", "AIDER_", "LITELLM_", "AWS_"],
};

/// opencode: the keys of the providers it knows (models.dev's `env` names,
/// as its 1.18 binary carries them), their endpoints, and its own
/// `OPENCODE_*` switches (plus each `{env:NAME}` its config files name,
/// read at launch: `opencode_config_keys`). Of AWS, only Bedrock's own
/// token, region and profile: the shell's AWS secret keys stay out.
pub const OPENCODE: HarnessEnv = HarnessEnv {
    shared: PROVIDER_KEYS,
    names: &[
        "ANTHROPIC_BASE_URL",
        "OPENAI_BASE_URL",
        "GOOGLE_GENERATIVE_AI_API_KEY",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "VERTEX_LOCATION",
        "OPENROUTER_API_KEY",
        "GROQ_API_KEY",
        "DEEPSEEK_API_KEY",
        "XAI_API_KEY",
        "MISTRAL_API_KEY",
        "TOGETHER_AI_API_KEY",
        "CEREBRAS_API_KEY",
        "FIREWORKS_API_KEY",
        "HF_TOKEN",
        "AZURE_RESOURCE_NAME",
        "AZURE_API_KEY",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_REGION",
        "AWS_PROFILE",
    ],
    prefixes: &["OPENCODE_"],
};

/// Kilo Code, opencode's fork: opencode's provider keys, and its own
/// `KILO_*` (`KILO_API_KEY` its gateway's key) and `KILOCODE_*` switches.
pub const KILO: HarnessEnv = HarnessEnv {
    shared: OPENCODE.shared,
    names: OPENCODE.names,
    prefixes: &["KILO_", "KILOCODE_"],
};

/// Crush: the keys of the providers it knows, their Azure, Bedrock and
/// Vertex settings, and its own `CRUSH_*` (which it also copies over the
/// name without the prefix). Its `crush.json` names others as `$NAME`:
/// pass those with `--env`.
pub const CRUSH: HarnessEnv = HarnessEnv {
    shared: PROVIDER_KEYS,
    names: &[
        "OPENROUTER_API_KEY",
        "GROQ_API_KEY",
        "XAI_API_KEY",
        "CEREBRAS_API_KEY",
        "HF_TOKEN",
        "AZURE_OPENAI_API_ENDPOINT",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_API_VERSION",
        "VERTEXAI_PROJECT",
        "VERTEXAI_LOCATION",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_PROFILE",
        "AWS_BEARER_TOKEN_BEDROCK",
    ],
    prefixes: &["CRUSH_"],
};

/// The variables opencode's config files (`files`, `opencode.json` /
/// `.jsonc` for it, in each folder of `dirs`) substitute with `{env:NAME}`: a provider's key is
/// often given so. Unreadable files name none.
pub fn opencode_config_keys(dirs: &[PathBuf], files: &[&str]) -> Vec<String> {
    let mut keys = Vec::new();
    for dir in dirs {
        for name in files {
            let Ok(text) = std::fs::read_to_string(dir.join(name)) else {
                continue;
            };
            for (at, _) in text.match_indices("{env:") {
                let rest = &text[at + "{env:".len()..];
                let key = rest.split('}').next().unwrap_or_default().trim();
                if rest.contains('}') && super::is_env_name(key) && !keys.iter().any(|k| k == key) {
                    keys.push(key.to_string());
                }
            }
        }
    }
    keys
}

/// Qwen Code: the keys, endpoints and models of the providers it takes
/// (OpenAI-compatible, Anthropic, Gemini and Vertex, and the keys its
/// built-in providers name: DashScope, DeepSeek, ModelScope, Moonshot, Z.ai,
/// MiniMax), and its own `QWEN_*` switches.
pub const QWEN: HarnessEnv = HarnessEnv {
    shared: PROVIDER_KEYS,
    names: &[
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_MODEL",
        "GEMINI_MODEL",
        "GOOGLE_API_KEY",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "DASHSCOPE_API_KEY",
        "DEEPSEEK_API_KEY",
        "MODELSCOPE_API_KEY",
        "MOONSHOT_API_KEY",
        "ZAI_API_KEY",
        "MINIMAX_API_KEY",
    ],
    prefixes: &["QWEN_"],
};

/// pi: the provider keys and settings its `--help` lists (Azure's
/// `AZURE_OPENAI_*`, Cloudflare's, Xiaomi's `XIAOMI_*`, Bedrock's `AWS_*`),
/// and its own `PI_*` switches (plus each variable its `models.json`
/// providers name: `pi_provider_keys`).
pub const PI: HarnessEnv = HarnessEnv {
    shared: PROVIDER_KEYS,
    names: &[
        "ANTHROPIC_OAUTH_TOKEN",
        "DEEPSEEK_API_KEY",
        "GROQ_API_KEY",
        "CEREBRAS_API_KEY",
        "XAI_API_KEY",
        "FIREWORKS_API_KEY",
        "OPENROUTER_API_KEY",
        "AI_GATEWAY_API_KEY",
        "ZAI_API_KEY",
        "MISTRAL_API_KEY",
        "MINIMAX_API_KEY",
        "MOONSHOT_API_KEY",
        "OPENCODE_API_KEY",
        "KIMI_API_KEY",
        "CLOUDFLARE_API_KEY",
        "CLOUDFLARE_ACCOUNT_ID",
        "CLOUDFLARE_GATEWAY_ID",
        "AWS_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_REGION",
    ],
    prefixes: &["AZURE_OPENAI_", "XIAOMI_", "PI_"],
};

/// GitHub Copilot CLI (`copilot help environment`, 1.0.102): the GitHub
/// tokens it logs in with (`COPILOT_GITHUB_TOKEN`, `GH_TOKEN`,
/// `GITHUB_TOKEN`, in that order), the GitHub host, and its own
/// `COPILOT_*` (among them the custom provider of its BYOK mode,
/// `COPILOT_PROVIDER_BASE_URL`, `_API_KEY`, `_BEARER_TOKEN`, …,
/// `COPILOT_MODEL` and `COPILOT_OFFLINE`).
pub const COPILOT: HarnessEnv = HarnessEnv {
    names: &["GH_TOKEN", "GITHUB_TOKEN", "GH_HOST"],
    shared: &[],
    prefixes: &["COPILOT_"],
};

/// Factory Droid: its Factory key (`FACTORY_API_KEY`) and its own
/// `FACTORY_*` switches (`FACTORY_AIRGAP_ENABLED`, `FACTORY_API_BASE_URL`,
/// `FACTORY_HOME_OVERRIDE`, …). The keys of its custom models are written
/// in its `settings.json`.
pub const DROID: HarnessEnv = HarnessEnv {
    names: &[],
    shared: &[],
    prefixes: &["FACTORY_"],
};

/// Auggie: its login given whole (`AUGMENT_SESSION_AUTH`, the JSON of its
/// `session.json`) or as a token and its tenant (`AUGMENT_API_TOKEN`,
/// `AUGMENT_API_URL`), its other `AUGMENT_*` switches, and the GitHub
/// token its GitHub tools use (`GITHUB_API_TOKEN`).
pub const AUGGIE: HarnessEnv = HarnessEnv {
    names: &["GITHUB_API_TOKEN"],
    shared: &[],
    prefixes: &["AUGMENT_"],
};

/// Continue's CLI: no key of its own (each model of its `config.yaml`
/// has one, or names a variable as `${{ secrets.NAME }}`:
/// `continue_secret_names`), its Bedrock switch and AWS profile, the
/// GitHub token of `cn checks`, and its own `CONTINUE_*` switches.
pub const CONTINUE: HarnessEnv = HarnessEnv {
    names: &["GITHUB_TOKEN", "AWS_PROFILE", "AWS_REGION"],
    shared: &[],
    prefixes: &["CONTINUE_"],
};

/// The variables Continue's `config.yaml` (in its folder) takes secrets
/// from, `${{ secrets.NAME }}`: cn reads such a name from its environment
/// first. An unreadable file names none.
pub fn continue_secret_names(dir: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(dir.join("config.yaml")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = text
        .split("${{")
        .skip(1)
        .filter_map(|rest| {
            let inner = rest.split("}}").next()?.trim();
            let name = inner.strip_prefix("secrets.")?.trim();
            super::is_env_name(name).then(|| name.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Letta Code: Letta's service (`LETTA_*`, its local backend's switch and
/// folder too), the local servers its local backend reaches (llama.cpp,
/// Ollama, LM Studio) and the providers' keys and endpoints it reads.
pub const LETTA: HarnessEnv = HarnessEnv {
    shared: PROVIDER_KEYS,
    names: &[
        "LLAMACPP_BASE_URL",
        "OPENROUTER_API_KEY",
        "OPENROUTER_BASE_URL",
        "GOOGLE_GENERATIVE_AI_API_KEY",
        "GOOGLE_GENERATIVE_AI_BASE_URL",
        "GOOGLE_CLOUD_API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "MOONSHOT_API_KEY",
        "MOONSHOT_BASE_URL",
        "KIMI_API_KEY",
        "MINIMAX_API_KEY",
        "MINIMAX_BASE_URL",
        "ZAI_API_KEY",
        "ZAI_BASE_URL",
        "ZAI_CODING_API_KEY",
        "ZAI_CODING_BASE_URL",
        "ZHIPU_API_KEY",
    ],
    prefixes: &["LETTA_", "LLAMA_CPP_", "OLLAMA_", "LMSTUDIO_", "AZURE_OPENAI_", "AWS_"],
};

/// mini-swe-agent: its own settings (`MSWEA_*`, any of which its `.env` may
/// hold too), LiteLLM's, and the keys and endpoints of the providers
/// LiteLLM reaches.
pub const MINI: HarnessEnv = HarnessEnv {
    shared: PROVIDER_KEYS,
    names: &[
        "OPENAI_BASE_URL",
        "OPENAI_API_BASE",
        "OPENAI_LIKE_API_KEY",
        "OPENAI_LIKE_API_BASE",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_API_BASE",
        "GEMINI_API_BASE",
        "AZURE_API_KEY",
        "AZURE_API_BASE",
        "AZURE_API_VERSION",
        "AZURE_OPENAI_API_KEY",
        "OPENROUTER_API_KEY",
        "OPENROUTER_API_BASE",
        "PORTKEY_API_KEY",
        "PORTKEY_VIRTUAL_KEY",
        "REQUESTY_API_KEY",
    ],
    prefixes: &["MSWEA_", "LITELLM_"],
};

/// nanocoder: its providers (and MCP servers) given whole in a variable or
/// a file a variable names. The keys of the providers in its config are
/// the variables that config names (`nanocoder_config_names`).
pub const NANOCODER: HarnessEnv = HarnessEnv {
    names: &[
        "NANOCODER_PROVIDERS",
        "NANOCODER_PROVIDERS_FILE",
        "NANOCODER_MCPSERVERS",
        "NANOCODER_MCPSERVERS_FILE",
    ],
    ..HarnessEnv::NONE
};

/// The variables a nanocoder `agents.config.json` takes values from
/// (`$NAME`, `${NAME}`, `${NAME:-default}` in any string of it): nanocoder
/// reads them from its environment. Code Puppy's `extra_models.json`
/// names its keys' variables the same way (`$NAME`). An unreadable file
/// names none.
pub fn nanocoder_config_names(file: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    let mut names: Vec<String> = text
        .split('$')
        .skip(1)
        .filter_map(|rest| {
            let rest = rest.strip_prefix('{').unwrap_or(rest);
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let name = &rest[..end];
            super::is_env_name(name).then(|| name.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Open Interpreter: LiteLLM's provider keys and endpoints (it passes its
/// model calls to LiteLLM, as aider does) and LiteLLM's own switches, its
/// Ollama host, its telemetry switch and `INTERPRETER_*` (its terminal's
/// settings, and its server's).
pub const INTERPRETER: HarnessEnv = HarnessEnv {
    shared: PROVIDER_KEYS,
    names: &[
        "OLLAMA_HOST",
        "DISABLE_TELEMETRY",
        "DEEPSEEK_API_KEY",
        "OPENROUTER_API_KEY",
        "GROQ_API_KEY",
        "CEREBRAS_API_KEY",
        "MISTRAL_API_KEY",
        "XAI_API_KEY",
        "HUGGINGFACE_API_KEY",
        "PPLX_API_KEY",
        "AZURE_API_KEY",
        "AZURE_API_BASE",
        "AZURE_API_VERSION",
        "VERTEXAI_PROJECT",
        "VERTEXAI_LOCATION",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ],
    prefixes: &["OPENAI_", "ANTHROPIC_", "LITELLM_", "INTERPRETER_", "AWS_"],
};

/// Hermes Agent: the keys and endpoints of the providers it takes (its
/// `custom` provider is `CUSTOM_*` or `OPENAI_BASE_URL`), Nous Portal's
/// endpoints, its tirith scanner's switches (`TIRITH_*`), and every
/// `HERMES_*` (its home, `HERMES_HOME`, among them).
pub const HERMES: HarnessEnv = HarnessEnv {
    shared: PROVIDER_KEYS,
    names: &[
        "ANTHROPIC_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "OPENAI_BASE_URL",
        "OPENROUTER_API_KEY",
        "OPENROUTER_BASE_URL",
        "NOUS_INFERENCE_BASE_URL",
        "NOUS_PORTAL_BASE_URL",
        "XAI_API_KEY",
        "XAI_BASE_URL",
        "OLLAMA_API_KEY",
        "OLLAMA_BASE_URL",
        "LM_API_KEY",
        "LM_BASE_URL",
    ],
    prefixes: &[
        "HERMES_",
        "CUSTOM_",
        "DEEPINFRA_",
        "NOVITA_",
        "AZURE_FOUNDRY_",
        "TIRITH_",
    ],
};

/// Code Puppy: the keys of the providers it knows (its `puppy.cfg` may
/// hold them instead), Azure's endpoint, Ollama's host, its update switch
/// (`NO_VERSION_UPDATE`) and every `CODE_PUPPY_*` (its locale, its
/// classic prompt, its port, Logfire's settings). The variables its
/// `extra_models.json` takes keys from (`$NAME`) are added at launch.
pub const CODE_PUPPY: HarnessEnv = HarnessEnv {
    shared: PROVIDER_KEYS,
    names: &[
        "GOOGLE_API_KEY",
        "GROQ_API_KEY",
        "MISTRAL_API_KEY",
        "COHERE_API_KEY",
        "DEEPSEEK_API_KEY",
        "TOGETHER_API_KEY",
        "FIREWORKS_API_KEY",
        "OPENROUTER_API_KEY",
        "PERPLEXITY_API_KEY",
        "CEREBRAS_API_KEY",
        "HUGGINGFACE_API_KEY",
        "XAI_API_KEY",
        "ZAI_API_KEY",
        "SYN_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "OLLAMA_HOST",
        "NO_VERSION_UPDATE",
    ],
    prefixes: &["CODE_PUPPY_"],
};

/// gptme: the keys and endpoints of the providers it takes (its `local`
/// provider is `OPENAI_BASE_URL` or `OPENAI_API_BASE`), its proxy and
/// hosted service, `MODEL`, and every `GPTME_*` (each of its settings may
/// also be given as `GPTME_<NAME>`).
pub const GPTME: HarnessEnv = HarnessEnv {
    names: &[
        "OPENAI_BASE_URL",
        "OPENAI_API_BASE",
        "OPENROUTER_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "GOOGLE_API_KEY",
        "XAI_API_KEY",
        "GROQ_API_KEY",
        "DEEPSEEK_API_KEY",
        "MOONSHOT_API_KEY",
        "NVIDIA_API_KEY",
        "MINIMAX_API_KEY",
        "PERPLEXITY_API_KEY",
        "REQUESTY_API_KEY",
        "LLM_PROXY_URL",
        "LLM_PROXY_API_KEY",
        "OLLAMA_BASE_URL",
        "MODEL",
    ],
    shared: PROVIDER_KEYS,
    prefixes: &["GPTME_"],
};

/// Cline's CLI: the keys of the providers it takes (each provider's
/// `apiKeyEnv`; an OpenAI-compatible server's key is `OPENAI_API_KEY`, its
/// URL only in `providers.json`), Bedrock's and Vertex's, and its own
/// `CLINE_*` (its account, folders and backend).
pub const CLINE: HarnessEnv = HarnessEnv {
    names: &[
        "OPENROUTER_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENERATIVE_AI_API_KEY",
        "DEEPSEEK_API_KEY",
        "XAI_API_KEY",
        "GROQ_API_KEY",
        "MOONSHOT_API_KEY",
        "TOGETHER_API_KEY",
        "CEREBRAS_API_KEY",
        "OLLAMA_API_KEY",
        "LMSTUDIO_API_KEY",
        "AI_GATEWAY_API_KEY",
        "HF_TOKEN",
        "GITHUB_TOKEN",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_VERTEX_PROJECT",
        "GOOGLE_VERTEX_LOCATION",
        "CLOUDFLARE_ACCOUNT_ID",
        "CLOUDFLARE_API_KEY",
    ],
    shared: PROVIDER_KEYS,
    prefixes: &["CLINE_", "AWS_"],
};

/// Grok CLI: its key, server and model (`GROK_*`) and the key of its
/// optional fast-edit service (`MORPH_API_KEY`).
pub const GROK: HarnessEnv = HarnessEnv {
    names: &["MORPH_API_KEY"],
    shared: &[],
    prefixes: &["GROK_"],
};

/// The variables the providers of pi's `models.json` (in its agent folder)
/// read their `apiKey` and header values from: a value that is a variable's
/// name (pi takes a value starting with `!` as a command, anything else
/// as the literal key). An unreadable file names none.
pub fn pi_provider_keys(agent_dir: &Path) -> Vec<String> {
    let Ok(bytes) = std::fs::read(agent_dir.join("models.json")) else {
        return Vec::new();
    };
    let Ok(models) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Vec::new();
    };
    let Some(providers) = models["providers"].as_object() else {
        return Vec::new();
    };
    providers
        .values()
        .flat_map(|p| {
            let headers = p["headers"].as_object().into_iter().flat_map(|h| h.values());
            std::iter::once(&p["apiKey"]).chain(headers).filter_map(|v| v.as_str())
        })
        .filter(|k| super::is_env_name(k))
        .map(str::to_string)
        .collect()
}

/// Claude Code's variables in `env`: its cloud credentials only when the
/// switch that makes it read them is on (`CLAUDE_CODE_USE_BEDROCK` for
/// `AWS_*`, `CLAUDE_CODE_USE_VERTEX` for Google's), so an AWS secret in
/// the shell does not reach every agent's tools by default.
pub fn claude_names(env: &[(String, String)]) -> Vec<String> {
    let on = |k: &str| env.iter().any(|(n, v)| n == k && !v.is_empty());
    let (bedrock, vertex) = (on("CLAUDE_CODE_USE_BEDROCK"), on("CLAUDE_CODE_USE_VERTEX"));
    CLAUDE
        .present(env)
        .into_iter()
        .filter(|n| match n.as_str() {
            n if n.starts_with("AWS_") => bedrock,
            "GOOGLE_APPLICATION_CREDENTIALS" | "CLOUD_ML_REGION" => vertex,
            n if n.starts_with("VERTEX_REGION_") => vertex,
            _ => true,
        })
        .collect()
}

/// Whether a variable's name says it holds a credential (a key, a token,
/// a credentials file, a whole login such as Auggie's
/// `AUGMENT_SESSION_AUTH`), as `agents doctor` tells them from switches.
pub fn is_credential(name: &str) -> bool {
    ["KEY", "TOKEN", "CREDENTIALS", "SECRET", "_AUTH"]
        .iter()
        .any(|w| name.contains(w))
}

/// The `env_key` of every `[model_providers.NAME]` in Codex's
/// `config.toml` under `codex_home`, and the variables its
/// `env_http_headers` name: a provider's key is read from them. An unreadable file names none (Codex itself
/// reports a broken config).
pub fn codex_provider_keys(codex_home: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(codex_home.join("config.toml")) else {
        return Vec::new();
    };
    let Ok(config) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let Some(providers) = config.get("model_providers").and_then(|p| p.as_table()) else {
        return Vec::new();
    };
    providers
        .values()
        .flat_map(|p| {
            // `env_http_headers` maps a header to the variable it is read from.
            let headers = p.get("env_http_headers").and_then(|h| h.as_table());
            let from_headers = headers.into_iter().flat_map(|h| h.values()).filter_map(|v| v.as_str());
            p.get("env_key")
                .and_then(|k| k.as_str())
                .into_iter()
                .chain(from_headers)
        })
        .filter(|k| super::is_env_name(k))
        .map(str::to_string)
        .collect()
}

/// What a family's own setup lacks that its runs will stop at, when
/// `agents doctor` can tell from its files: Continue's first-start key
/// question, a Cline or nanocoder with no provider to talk to.
pub fn setup_gap(family: &str, config_home: Option<&Path>, home: Option<&Path>) -> Option<String> {
    let folder = |rest: &str| {
        config_home
            .map(Path::to_path_buf)
            .or_else(|| home.map(|h| h.join(rest)))
    };
    let json = |file: &Path| -> Option<serde_json::Value> { serde_json::from_slice(&std::fs::read(file).ok()?).ok() };
    match family {
        "continue" => {
            let dir = folder(".continue")?;
            (dir.join("config.yaml").exists() && !dir.join(".onboarding_complete").exists()).then(|| {
                format!(
                    "cn asks for an Anthropic key at its first start until {} exists",
                    dir.join(".onboarding_complete").display()
                )
            })
        }
        "cline" => {
            let file = folder(".cline")?.join("data/settings/providers.json");
            // A missing file is told as a missing login.
            let providers = json(&file)?["providers"].as_object().map_or(0, |p| p.len());
            (providers == 0).then(|| {
                format!(
                    "no provider in {} (`cline auth` sets one): its runs ask to connect one",
                    file.display()
                )
            })
        }
        "nanocoder" => {
            let file = folder(".config/nanocoder")?.join("agents.config.json");
            let providers = json(&file)?["nanocoder"]["providers"].as_array().map_or(0, Vec::len);
            (providers == 0).then(|| format!("no provider in {}: its runs open its provider wizard", file.display()))
        }
        _ => None,
    }
}

/// The file a harness keeps its own login in, when it has one: what
/// `agents doctor` looks for beside the variables.
pub fn login_file(family: &str, config_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    let under_home = |rest: &str| home.map(|h| h.join(rest));
    match family {
        "claude" => config_home
            .map(|c| c.join(".credentials.json"))
            .or_else(|| under_home(".claude/.credentials.json")),
        "codex" => config_home
            .map(|c| c.join("auth.json"))
            .or_else(|| under_home(".codex/auth.json")),
        "gemini" => under_home(".gemini/oauth_creds.json"),
        "opencode" => under_home(".local/share/opencode/auth.json"),
        "kilo" => under_home(".local/share/kilo/auth.json"),
        // Droid keeps a login in the system keyring or, without one, in
        // `.factory/auth.json` under its home.
        "droid" => config_home
            .map(|c| c.join(".factory/auth.json"))
            .or_else(|| under_home(".factory/auth.json")),
        "auggie" => under_home(".augment/session.json"),
        // Continue logs in nowhere: its models and their keys are its
        // config; without one it waits for ever on "Model: Loading...".
        "continue" => config_home
            .map(|c| c.join("config.yaml"))
            .or_else(|| under_home(".continue/config.yaml")),
        // nanocoder's providers and their keys, in its config.
        "nanocoder" => config_home
            .map(|c| c.join("agents.config.json"))
            .or_else(|| under_home(".config/nanocoder/agents.config.json")),
        // Cline's providers and their keys (`cline auth`).
        "cline" => config_home
            .map(|c| c.join("data/settings/providers.json"))
            .or_else(|| under_home(".cline/data/settings/providers.json")),
        _ => None,
    }
}

#[cfg(test)]
#[path = "credentials_tests.rs"]
mod tests;
