//! What `runs.show` says about a run's tokens and their estimated cost.
//! Field names are a public contract (`--json` output).

use serde::{Deserialize, Serialize};

use crate::values::transcript::Usage;

/// A run's tokens as its harness's transcripts recorded them: its own
/// conversation and its subagents', with an estimate of what they cost.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunUsage {
    /// All of the run's tokens, subagents included.
    pub tokens: Usage,
    /// Messages indexed from the run's transcripts, subagents included.
    pub messages: i64,
    /// The subagents' part of `tokens` and `messages`.
    pub subagents: UsageShare,
    /// The same tokens by model, the most tokens first.
    pub models: Vec<ModelUsage>,
    /// USD, from list prices (`transcript::price`): an estimate, never a
    /// bill. Absent when some of the tokens are of a model without a price.
    pub estimated_cost_usd: Option<f64>,
}

/// A part of a run's usage.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct UsageShare {
    pub tokens: Usage,
    pub messages: i64,
}

/// The tokens of one model in a run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ModelUsage {
    /// Absent for the tokens of a transcript file whose messages name
    /// several models (or none): the file's totals cannot be split by model.
    pub model: Option<String>,
    pub tokens: Usage,
    /// The price-table prefix the model matched.
    pub price: Option<String>,
    /// USD, estimated; absent when the model has no price.
    pub estimated_cost_usd: Option<f64>,
}

/// A run as `runs.list` (and `agents ls --json`) gives it: its record and
/// its token totals. Clients that know only `RunRecord` read it as one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ListedRun {
    #[serde(flatten)]
    pub run: super::RunRecord,
    /// The totals of `runs.show`'s `usage`; null when no transcript of the
    /// run recorded tokens.
    #[serde(default)]
    pub usage: Option<UsageTotals>,
}

/// The totals of a run's usage, without the breakdown.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UsageTotals {
    pub tokens: Usage,
    /// USD, estimated; null when some of the tokens are of a model without
    /// a price.
    pub estimated_cost_usd: Option<f64>,
}

impl From<&RunUsage> for UsageTotals {
    fn from(u: &RunUsage) -> Self {
        UsageTotals {
            tokens: u.tokens,
            estimated_cost_usd: u.estimated_cost_usd,
        }
    }
}
