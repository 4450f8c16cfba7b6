use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn each_family_takes_its_own_variables_and_no_one_elses() {
    let shell = env(&[
        ("ANTHROPIC_API_KEY", "k"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
        ("CLAUDE_CODE_USE_BEDROCK", "1"),
        ("OPENAI_API_KEY", "o"),
        ("GEMINI_API_KEY", "g"),
        ("AIDER_MODEL", "m"),
        ("SECRET_TOKEN", "s"),
        ("ANTHROPIC_MODEL", ""),
    ]);
    assert_eq!(
        CLAUDE.present(&shell),
        ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_USE_BEDROCK"]
    );
    assert_eq!(CODEX.present(&shell), ["OPENAI_API_KEY"]);
    assert_eq!(GEMINI.present(&shell), ["GEMINI_API_KEY"]);
    assert_eq!(
        QWEN.present(&shell),
        [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "GEMINI_API_KEY",
            "OPENAI_API_KEY"
        ]
    );
    assert_eq!(
        AIDER.present(&shell),
        [
            "AIDER_MODEL",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "GEMINI_API_KEY",
            "OPENAI_API_KEY"
        ]
    );
}

/// Every name each family takes, pinned (a probe stands for each
/// prefix): the families share lists of names, and how they share them
/// must change no family's. The shell holds every pinned name and a
/// few that nobody takes.
#[test]
fn each_familys_names_are_exactly_the_pinned_ones() {
    let pinned: [(&str, &HarnessEnv, &str); 9] = [
        (
            "claude",
            &CLAUDE,
            "ANTHROPIC_API_KEY ANTHROPIC_BASE_URL ANTHROPIC_MODEL ANTHROPIC_OAUTH_TOKEN \
            ANTHROPIC_PROBE AWS_ACCESS_KEY_ID AWS_BEARER_TOKEN_BEDROCK AWS_DEFAULT_REGION \
            AWS_PROBE AWS_PROFILE AWS_REGION AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN \
            BASH_DEFAULT_TIMEOUT_MS BASH_MAX_OUTPUT_LENGTH BASH_MAX_TIMEOUT_MS CLAUDE_CODE_PROBE \
            CLOUD_ML_REGION DISABLE_PROBE GOOGLE_APPLICATION_CREDENTIALS MAX_MCP_OUTPUT_TOKENS \
            MAX_THINKING_TOKENS MCP_TIMEOUT MCP_TOOL_TIMEOUT VERTEX_REGION_PROBE",
        ),
        (
            "codex",
            &CODEX,
            "CODEX_API_KEY OPENAI_API_KEY OPENAI_BASE_URL OPENAI_ORGANIZATION OPENAI_PROJECT",
        ),
        (
            "gemini",
            &GEMINI,
            "GEMINI_API_KEY GEMINI_MODEL GEMINI_PROBE GOOGLE_API_KEY \
            GOOGLE_APPLICATION_CREDENTIALS GOOGLE_CLOUD_LOCATION GOOGLE_CLOUD_PROJECT \
            GOOGLE_GEMINI_BASE_URL GOOGLE_GENAI_USE_GCA GOOGLE_GENAI_USE_VERTEXAI",
        ),
        (
            "aider",
            &AIDER,
            "AIDER_PROBE ANTHROPIC_API_KEY ANTHROPIC_BASE_URL ANTHROPIC_MODEL \
            ANTHROPIC_OAUTH_TOKEN ANTHROPIC_PROBE AWS_ACCESS_KEY_ID AWS_BEARER_TOKEN_BEDROCK \
            AWS_DEFAULT_REGION AWS_PROBE AWS_PROFILE AWS_REGION AWS_SECRET_ACCESS_KEY \
            AWS_SESSION_TOKEN AZURE_API_BASE AZURE_API_KEY AZURE_API_VERSION COHERE_API_KEY \
            DEEPSEEK_API_KEY FIREWORKS_API_KEY GEMINI_API_KEY GOOGLE_APPLICATION_CREDENTIALS \
            GROQ_API_KEY LITELLM_PROBE MISTRAL_API_KEY OLLAMA_API_BASE OPENAI_API_KEY \
            OPENAI_BASE_URL OPENAI_MODEL OPENAI_ORGANIZATION OPENAI_PROBE OPENAI_PROJECT \
            OPENROUTER_API_KEY TOGETHERAI_API_KEY VERTEXAI_LOCATION VERTEXAI_PROJECT XAI_API_KEY",
        ),
        (
            "opencode",
            &OPENCODE,
            "ANTHROPIC_API_KEY ANTHROPIC_BASE_URL AWS_BEARER_TOKEN_BEDROCK AWS_PROFILE AWS_REGION \
            AZURE_API_KEY AZURE_RESOURCE_NAME CEREBRAS_API_KEY DEEPSEEK_API_KEY \
            FIREWORKS_API_KEY GEMINI_API_KEY GOOGLE_APPLICATION_CREDENTIALS GOOGLE_CLOUD_PROJECT \
            GOOGLE_GENERATIVE_AI_API_KEY GROQ_API_KEY HF_TOKEN MISTRAL_API_KEY OPENAI_API_KEY \
            OPENAI_BASE_URL OPENCODE_API_KEY OPENCODE_PROBE OPENROUTER_API_KEY \
            TOGETHER_AI_API_KEY VERTEX_LOCATION XAI_API_KEY",
        ),
        (
            "kilo",
            &KILO,
            "ANTHROPIC_API_KEY ANTHROPIC_BASE_URL AWS_BEARER_TOKEN_BEDROCK AWS_PROFILE AWS_REGION \
            AZURE_API_KEY AZURE_RESOURCE_NAME CEREBRAS_API_KEY DEEPSEEK_API_KEY \
            FIREWORKS_API_KEY GEMINI_API_KEY GOOGLE_APPLICATION_CREDENTIALS GOOGLE_CLOUD_PROJECT \
            GOOGLE_GENERATIVE_AI_API_KEY GROQ_API_KEY HF_TOKEN KILOCODE_PROBE KILO_PROBE \
            MISTRAL_API_KEY OPENAI_API_KEY OPENAI_BASE_URL OPENROUTER_API_KEY \
            TOGETHER_AI_API_KEY VERTEX_LOCATION XAI_API_KEY",
        ),
        (
            "crush",
            &CRUSH,
            "ANTHROPIC_API_KEY AWS_BEARER_TOKEN_BEDROCK AWS_DEFAULT_REGION AWS_PROFILE AWS_REGION \
            AZURE_OPENAI_API_ENDPOINT AZURE_OPENAI_API_KEY AZURE_OPENAI_API_VERSION \
            CEREBRAS_API_KEY CRUSH_PROBE GEMINI_API_KEY GOOGLE_CLOUD_LOCATION \
            GOOGLE_CLOUD_PROJECT GROQ_API_KEY HF_TOKEN OPENAI_API_KEY OPENROUTER_API_KEY \
            VERTEXAI_LOCATION VERTEXAI_PROJECT XAI_API_KEY",
        ),
        (
            "qwen",
            &QWEN,
            "ANTHROPIC_API_KEY ANTHROPIC_BASE_URL ANTHROPIC_MODEL DASHSCOPE_API_KEY \
            DEEPSEEK_API_KEY GEMINI_API_KEY GEMINI_MODEL GOOGLE_API_KEY \
            GOOGLE_APPLICATION_CREDENTIALS GOOGLE_CLOUD_LOCATION GOOGLE_CLOUD_PROJECT \
            GOOGLE_GENAI_USE_VERTEXAI MINIMAX_API_KEY MODELSCOPE_API_KEY MOONSHOT_API_KEY \
            OPENAI_API_KEY OPENAI_BASE_URL OPENAI_MODEL QWEN_PROBE ZAI_API_KEY",
        ),
        (
            "pi",
            &PI,
            "AI_GATEWAY_API_KEY ANTHROPIC_API_KEY ANTHROPIC_OAUTH_TOKEN AWS_ACCESS_KEY_ID \
            AWS_BEARER_TOKEN_BEDROCK AWS_PROFILE AWS_REGION AWS_SECRET_ACCESS_KEY \
            AWS_SESSION_TOKEN AZURE_OPENAI_API_ENDPOINT AZURE_OPENAI_API_KEY \
            AZURE_OPENAI_API_VERSION AZURE_OPENAI_PROBE CEREBRAS_API_KEY CLOUDFLARE_ACCOUNT_ID \
            CLOUDFLARE_API_KEY CLOUDFLARE_GATEWAY_ID DEEPSEEK_API_KEY FIREWORKS_API_KEY \
            GEMINI_API_KEY GROQ_API_KEY KIMI_API_KEY MINIMAX_API_KEY MISTRAL_API_KEY \
            MOONSHOT_API_KEY OPENAI_API_KEY OPENCODE_API_KEY OPENROUTER_API_KEY PI_PROBE \
            XAI_API_KEY XIAOMI_PROBE ZAI_API_KEY",
        ),
    ];
    let mut shell = env(&[("HOME", "/home/user"), ("PATH", "/bin"), ("SECRET_TOKEN", "s")]);
    for (_, _, names) in pinned {
        shell.extend(names.split_whitespace().map(|n| (n.to_string(), "x".to_string())));
    }
    for (family, harness, names) in pinned {
        assert_eq!(
            harness.present(&shell),
            names.split_whitespace().collect::<Vec<_>>(),
            "{family}"
        );
    }
}

#[test]
fn copilot_droid_and_auggie_take_their_own_variables_and_their_login_files_are_under_home() {
    let shell = env(&[
        ("COPILOT_PROVIDER_BASE_URL", "http://127.0.0.1:9/v1"),
        ("GH_TOKEN", "t"),
        ("FACTORY_AIRGAP_ENABLED", "true"),
        ("OPENAI_API_KEY", "o"),
    ]);
    assert_eq!(COPILOT.present(&shell), ["COPILOT_PROVIDER_BASE_URL", "GH_TOKEN"]);
    assert_eq!(DROID.present(&shell), ["FACTORY_AIRGAP_ENABLED"]);
    let augment = env(&[
        ("AUGMENT_SESSION_AUTH", "{}"),
        ("GITHUB_API_TOKEN", "t"),
        ("GH_TOKEN", "g"),
    ]);
    assert_eq!(AUGGIE.present(&augment), ["AUGMENT_SESSION_AUTH", "GITHUB_API_TOKEN"]);
    assert!(is_credential("AUGMENT_SESSION_AUTH"));
    assert!(!is_credential("AUGMENT_DISABLE_AUTO_UPDATE"));
    assert_eq!(
        login_file("auggie", None, Some(Path::new("/home/u"))),
        Some(PathBuf::from("/home/u/.augment/session.json"))
    );
    let home = Path::new("/home/u");
    assert_eq!(
        login_file("droid", None, Some(home)),
        Some(PathBuf::from("/home/u/.factory/auth.json"))
    );
    assert_eq!(
        login_file("droid", Some(Path::new("/srv/d")), Some(home)),
        Some(PathBuf::from("/srv/d/.factory/auth.json"))
    );
}

#[test]
fn claude_gets_cloud_credentials_only_with_the_cloud_switched_on() {
    let shell = env(&[
        ("ANTHROPIC_API_KEY", "k"),
        ("AWS_SECRET_ACCESS_KEY", "s"),
        ("GOOGLE_APPLICATION_CREDENTIALS", "/c.json"),
    ]);
    assert_eq!(claude_names(&shell), ["ANTHROPIC_API_KEY"]);
    let mut bedrock = shell.clone();
    bedrock.push(("CLAUDE_CODE_USE_BEDROCK".into(), "1".into()));
    assert_eq!(
        claude_names(&bedrock),
        ["ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "CLAUDE_CODE_USE_BEDROCK"]
    );
    let mut vertex = shell;
    vertex.push(("CLAUDE_CODE_USE_VERTEX".into(), "1".into()));
    assert_eq!(
        claude_names(&vertex),
        [
            "ANTHROPIC_API_KEY",
            "CLAUDE_CODE_USE_VERTEX",
            "GOOGLE_APPLICATION_CREDENTIALS"
        ]
    );
}

#[test]
fn codex_providers_name_the_variables_their_keys_are_read_from() {
    let dir = tempfile::tempdir().unwrap();
    assert!(codex_provider_keys(dir.path()).is_empty());
    std::fs::write(
        dir.path().join("config.toml"),
        "model = \"m\"\n[model_providers.mock]\nbase_url = \"http://x\"\nenv_key = \"MOCK_KEY\"\n\
         [model_providers.azure]\nenv_key = \"AZURE_OPENAI_API_KEY\"\n[model_providers.bad]\nenv_key = \"A=B\"\n\
         [model_providers.proxy.env_http_headers]\nX-Org = \"PROXY_ORG\"\n",
    )
    .unwrap();
    let mut keys = codex_provider_keys(dir.path());
    keys.sort();
    assert_eq!(keys, ["AZURE_OPENAI_API_KEY", "MOCK_KEY", "PROXY_ORG"]);
}

#[test]
fn a_setup_its_runs_would_stop_at_is_told() {
    let home = tempfile::tempdir().unwrap();
    let h = Some(home.path());
    assert_eq!(
        setup_gap("continue", None, h),
        None,
        "no config yet: nothing to tell of it"
    );
    std::fs::create_dir_all(home.path().join(".continue")).unwrap();
    std::fs::write(home.path().join(".continue/config.yaml"), "models: []").unwrap();
    assert!(setup_gap("continue", None, h).unwrap().contains(".onboarding_complete"));
    std::fs::write(home.path().join(".continue/.onboarding_complete"), "").unwrap();
    assert_eq!(setup_gap("continue", None, h), None);

    let settings = home.path().join(".cline/data/settings");
    std::fs::create_dir_all(&settings).unwrap();
    std::fs::write(settings.join("providers.json"), "{}").unwrap();
    assert!(setup_gap("cline", None, h).unwrap().contains("no provider"));
    let one = r#"{"providers": {"openai-compatible": {"settings": {}}}}"#;
    std::fs::write(settings.join("providers.json"), one).unwrap();
    assert_eq!(setup_gap("cline", None, h), None);

    // No config at all is told as a missing login.
    assert_eq!(setup_gap("nanocoder", None, h), None);
    let config = home.path().join(".config/nanocoder");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("agents.config.json"), "{}").unwrap();
    assert!(setup_gap("nanocoder", None, h).unwrap().contains("provider wizard"));
    let one =
        r#"{"nanocoder": {"providers": [{"name": "mock", "baseUrl": "http://127.0.0.1:9/v1", "models": ["m"]}]}}"#;
    std::fs::write(config.join("agents.config.json"), one).unwrap();
    assert_eq!(setup_gap("nanocoder", None, h), None);
    assert_eq!(setup_gap("claude", None, h), None);
}
