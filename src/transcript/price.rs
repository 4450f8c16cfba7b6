//! What tokens cost: USD per million tokens of each kind, by model-name
//! prefix. Only ever an estimate — list prices, base tier, no batch or
//! negotiated discounts — and a model with no price has no cost rather than a
//! guessed one. `config.toml` `[prices."PREFIX"]` adds or replaces entries.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Usage;

/// USD per million tokens of each kind (`Usage`'s kinds: `input` excludes
/// the cached part).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

impl Price {
    const fn new(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Price {
        Price {
            input,
            output,
            cache_read,
            cache_write,
        }
    }

    /// The estimated cost of `tokens` in USD.
    pub fn cost(&self, tokens: &Usage) -> f64 {
        (tokens.input as f64 * self.input
            + tokens.output as f64 * self.output
            + tokens.cache_read as f64 * self.cache_read
            + tokens.cache_write as f64 * self.cache_write)
            / 1_000_000.0
    }

    /// Every figure a finite number of dollars, not negative.
    fn check(&self) -> Result<(), String> {
        for (kind, v) in [
            ("input", self.input),
            ("output", self.output),
            ("cache_read", self.cache_read),
            ("cache_write", self.cache_write),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(format!(
                    "{kind} = {v} is not a price (USD per million tokens, 0 or more)"
                ));
            }
        }
        Ok(())
    }
}

/// Built-in list prices, base tier (prompts up to 200k tokens where a
/// vendor charges more for longer ones; 5-minute cache writes for Claude).
/// As of 2026-11-29: the Anthropic figures match a stored copy of
/// docs.anthropic.com's pricing page; the OpenAI and Google figures come
/// from secondary summaries of their pricing pages (not read directly) and
/// should be checked against openai.com/api/pricing and
/// ai.google.dev/gemini-api/docs/pricing. OpenAI and Google do not charge
/// extra to write their caches, so a cache write costs what input does.
/// Prices change: `[prices."PREFIX"]` in config.toml corrects them without
/// a new build.
const BUILT_IN: &[(&str, Price)] = &[
    // Anthropic (Claude Code).
    ("claude-opus-4", Price::new(15.0, 75.0, 1.5, 18.75)),
    ("claude-opus-4-1", Price::new(15.0, 75.0, 1.5, 18.75)),
    ("claude-opus-4-5", Price::new(5.0, 25.0, 0.5, 6.25)),
    ("claude-opus-4-6", Price::new(5.0, 25.0, 0.5, 6.25)),
    ("claude-sonnet-4", Price::new(3.0, 15.0, 0.3, 3.75)),
    ("claude-3-7-sonnet", Price::new(3.0, 15.0, 0.3, 3.75)),
    ("claude-haiku-4-5", Price::new(1.0, 5.0, 0.1, 1.25)),
    ("claude-3-5-haiku", Price::new(0.8, 4.0, 0.08, 1.0)),
    // OpenAI (Codex, aider).
    ("gpt-5", Price::new(1.25, 10.0, 0.125, 1.25)),
    ("gpt-5-mini", Price::new(0.25, 2.0, 0.025, 0.25)),
    ("gpt-5-nano", Price::new(0.05, 0.4, 0.005, 0.05)),
    ("gpt-5.2", Price::new(1.75, 14.0, 0.175, 1.75)),
    ("gpt-4.1", Price::new(2.0, 8.0, 0.5, 2.0)),
    ("o3", Price::new(2.0, 8.0, 0.5, 2.0)),
    ("o4-mini", Price::new(1.1, 4.4, 0.275, 1.1)),
    // Google (Gemini CLI).
    ("gemini-2.5-pro", Price::new(1.25, 10.0, 0.125, 1.25)),
    ("gemini-2.5-flash", Price::new(0.3, 2.5, 0.03, 0.3)),
    ("gemini-2.5-flash-lite", Price::new(0.1, 0.4, 0.01, 0.1)),
];

/// The prices in force: the built-in table and what config.toml adds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    /// `[prices."PREFIX"]` from config.toml.
    overrides: BTreeMap<String, Price>,
}

impl PriceTable {
    pub fn new(overrides: BTreeMap<String, Price>) -> PriceTable {
        PriceTable { overrides }
    }

    /// The price of a model and the prefix it matched: the longest matching
    /// prefix from config.toml, else the longest built-in one. A configured
    /// entry wins over every built-in one, so `[prices.claude]` prices all
    /// Claude models. Matching ignores case; a provider prefix
    /// (`anthropic/claude-…`, as aider names models) is skipped.
    pub fn lookup(&self, model: &str) -> Option<(&str, Price)> {
        let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
        longest(&name, self.overrides.iter().map(|(k, p)| (k.as_str(), *p)))
            .or_else(|| longest(&name, BUILT_IN.iter().map(|(k, p)| (*k, *p))))
    }
}

fn longest<'a>(name: &str, entries: impl Iterator<Item = (&'a str, Price)>) -> Option<(&'a str, Price)> {
    entries
        .filter(|(prefix, _)| name.starts_with(&prefix.to_ascii_lowercase()))
        .max_by_key(|(prefix, _)| prefix.len())
}

/// Checks `[prices]` from config.toml: named, finite, not negative.
pub fn validate(prices: &BTreeMap<String, Price>) -> Result<(), String> {
    for (prefix, price) in prices {
        if prefix.trim().is_empty() {
            return Err("prices: a model prefix may not be empty".into());
        }
        price.check().map_err(|e| format!("prices.\"{prefix}\": {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_built_in_prefix_prices_a_model() {
        let table = PriceTable::default();
        let (prefix, opus) = table.lookup("claude-opus-4-5-20251101").unwrap();
        assert_eq!(prefix, "claude-opus-4-5");
        assert_eq!(opus.input, 5.0);
        assert_eq!(table.lookup("claude-opus-4-20250514").unwrap().0, "claude-opus-4");
        assert_eq!(
            table.lookup("gemini-2.5-flash-lite").unwrap().0,
            "gemini-2.5-flash-lite"
        );
        assert_eq!(table.lookup("gemini-2.5-flash").unwrap().0, "gemini-2.5-flash");
        assert_eq!(table.lookup("gpt-5-codex").unwrap().0, "gpt-5");
        assert_eq!(
            table.lookup("anthropic/Claude-Sonnet-4-5").unwrap().0,
            "claude-sonnet-4"
        );
    }

    #[test]
    fn a_model_without_a_price_has_none() {
        let table = PriceTable::default();
        assert_eq!(table.lookup("mock-model"), None);
        assert_eq!(table.lookup("claude"), None);
        assert_eq!(table.lookup(""), None);
    }

    #[test]
    fn a_configured_prefix_wins_over_longer_built_in_ones() {
        let mut prices = BTreeMap::new();
        prices.insert("claude".to_string(), Price::new(1.0, 2.0, 0.0, 0.0));
        prices.insert("mock".to_string(), Price::new(0.5, 0.5, 0.5, 0.5));
        let table = PriceTable::new(prices);
        assert_eq!(table.lookup("claude-opus-4-5").unwrap().0, "claude");
        assert_eq!(table.lookup("mock-model").unwrap().1.input, 0.5);
        assert_eq!(table.lookup("gpt-5").unwrap().0, "gpt-5");
    }

    #[test]
    fn cost_is_tokens_times_price_per_million() {
        let price = Price::new(3.0, 15.0, 0.3, 3.75);
        let tokens = Usage {
            input: 2_000_000,
            output: 100_000,
            cache_read: 10_000_000,
            cache_write: 400_000,
        };
        let expected = 2.0 * 3.0 + 0.1 * 15.0 + 10.0 * 0.3 + 0.4 * 3.75;
        assert!((price.cost(&tokens) - expected).abs() < 1e-9);
    }

    #[test]
    fn negative_or_infinite_prices_are_refused_with_the_prefix_named() {
        let mut prices = BTreeMap::new();
        prices.insert("gpt-5".to_string(), Price::new(-1.0, 10.0, 0.1, 1.0));
        let err = validate(&prices).unwrap_err();
        assert!(err.contains("prices.\"gpt-5\"") && err.contains("input = -1"), "{err}");
        prices.insert("gpt-5".to_string(), Price::new(1.0, f64::INFINITY, 0.1, 1.0));
        assert!(validate(&prices).unwrap_err().contains("output"));
        let mut empty = BTreeMap::new();
        empty.insert(" ".to_string(), Price::new(1.0, 1.0, 1.0, 1.0));
        assert!(validate(&empty).is_err());
        for (prefix, price) in BUILT_IN {
            assert!(price.check().is_ok(), "{prefix}");
        }
    }
}
