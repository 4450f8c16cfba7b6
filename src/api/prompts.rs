//! A run's waiting prompts: listed, rewritten, dropped, or sent now on
//! purpose (`agents prompts`, the MCP tools `prompts_*`, the TUI).

use serde::{Deserialize, Serialize};

/// `prompts.list` (`prompt` and `text` unused), `prompts.edit` (both),
/// `prompts.drop` and `prompts.send` (`prompt`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PromptParams {
    pub run: String,
    /// The waiting prompt's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Its new text (`prompts.edit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}
