//! A run's token totals and their estimated cost, from the totals the index
//! already keeps per transcript file (`store::usage` reads them): no
//! transcript is read again.
//!
//! Tokens are counted per file, not per message: the readers count each
//! model response once (a Claude response split over several lines repeats
//! its usage; Codex reports usage in events, not on messages), and store the
//! result on the file's row. So a file is the finest unit whose tokens are
//! exact, and a file whose messages name one model is that model's. The
//! tokens of a file naming several models (a `/model` switch mid-session)
//! stay unattributed, and their cost unknown, rather than split by a guess.

use std::collections::BTreeMap;

use super::Usage;
use super::price::PriceTable;
use crate::api::{ModelUsage, RunUsage, UsageShare};
use crate::store::usage::SourceTokens;

impl SourceTokens {
    /// The one model this file's tokens are of, if there is one.
    fn model(&self) -> Option<&str> {
        // Claude writes `<synthetic>` on messages it made up itself (an API
        // error shown as a reply); they carry no tokens.
        let mut named = self.models.iter().filter(|m| m.as_str() != "<synthetic>");
        match (named.next(), named.next()) {
            (Some(one), None) => Some(one),
            (None, _) => self.session_model.as_deref(),
            (Some(_), Some(_)) => None,
        }
    }
}

/// Sums a run's files into its usage, priced by `prices`. `None` when no
/// file recorded any tokens.
pub fn run_usage(sources: &[SourceTokens], prices: &PriceTable) -> Option<RunUsage> {
    let mut tokens = Usage::default();
    let mut messages = 0;
    let mut subagents = UsageShare::default();
    let mut by_model: BTreeMap<Option<&str>, Usage> = BTreeMap::new();
    for s in sources {
        tokens.add(&s.tokens);
        messages += s.messages;
        if s.agent_id.is_some() {
            subagents.tokens.add(&s.tokens);
            subagents.messages += s.messages;
        }
        if !s.tokens.is_zero() {
            by_model.entry(s.model()).or_default().add(&s.tokens);
        }
    }
    if tokens.is_zero() {
        return None;
    }
    let mut models: Vec<ModelUsage> = by_model
        .into_iter()
        .map(|(model, tokens)| {
            let price = model.and_then(|m| prices.lookup(m));
            ModelUsage {
                model: model.map(str::to_string),
                tokens,
                price: price.map(|(prefix, _)| prefix.to_string()),
                estimated_cost_usd: price.map(|(_, p)| p.cost(&tokens)),
            }
        })
        .collect();
    models.sort_by_key(|m| std::cmp::Reverse(total(&m.tokens)));
    let estimated_cost_usd = models.iter().map(|m| m.estimated_cost_usd).sum::<Option<f64>>();
    Some(RunUsage {
        tokens,
        messages,
        subagents,
        models,
        estimated_cost_usd,
    })
}

fn total(u: &Usage) -> i64 {
    u.input + u.output + u.cache_read + u.cache_write
}

/// A token count for people: `950`, `12.3k`, `80k`, `1.2M`.
pub fn count(n: i64) -> String {
    let short = |v: f64, unit: &str| {
        let s = format!("{v:.1}");
        format!("{}{unit}", s.strip_suffix(".0").unwrap_or(&s))
    };
    match n.unsigned_abs() {
        0..1_000 => n.to_string(),
        1_000..999_950 => short(n as f64 / 1e3, "k"),
        _ => short(n as f64 / 1e6, "M"),
    }
}

/// Estimated dollars: to the cent from a cent up, else two significant
/// figures (a short run costs a fraction of a cent, not nothing).
pub fn dollars(usd: f64) -> String {
    if usd >= 0.01 || usd <= 0.0 {
        format!("${usd:.2}")
    } else {
        let digits = (1 - usd.log10().floor() as i32).clamp(2, 8) as usize;
        format!("${usd:.digits$}")
    }
}

/// `12.3k in · 4.1k out · 80k cache read`: the kinds that are not zero
/// (input and output always).
pub fn tokens_line(u: &Usage) -> String {
    let mut parts = vec![format!("{} in", count(u.input)), format!("{} out", count(u.output))];
    if u.cache_read != 0 {
        parts.push(format!("{} cache read", count(u.cache_read)));
    }
    if u.cache_write != 0 {
        parts.push(format!("{} cache write", count(u.cache_write)));
    }
    parts.join(" · ")
}

/// The line `agents show` and the TUI print: tokens, then the estimate
/// (`—` when unknown).
pub fn summary(u: &RunUsage) -> String {
    let cost = u.estimated_cost_usd.map(dollars).unwrap_or_else(|| "—".into());
    format!("{} — est. {cost}", tokens_line(&u.tokens))
}

/// The subagents' part, when they used any: `10 in · 12 out (2 messages)`.
pub fn subagents_line(u: &RunUsage) -> Option<String> {
    let s = &u.subagents;
    (!s.tokens.is_zero()).then(|| format!("{} ({} messages)", tokens_line(&s.tokens), s.messages))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::price::Price;

    fn tokens(input: i64, output: i64, cache_read: i64, cache_write: i64) -> Usage {
        Usage {
            input,
            output,
            cache_read,
            cache_write,
        }
    }

    fn source(agent: Option<&str>, t: Usage, messages: i64, models: &[&str]) -> SourceTokens {
        SourceTokens {
            path: format!("/t/{}.jsonl", agent.unwrap_or("main")),
            agent_id: agent.map(str::to_string),
            tokens: t,
            messages,
            models: models.iter().map(|m| m.to_string()).collect(),
            session_model: None,
        }
    }

    fn priced(prefix: &str, p: Price) -> PriceTable {
        PriceTable::new([(prefix.to_string(), p)].into_iter().collect())
    }

    #[test]
    fn a_runs_totals_add_its_subagents_and_say_their_share() {
        let sources = [
            source(None, tokens(100, 50, 1000, 10), 7, &["claude-opus-4-5"]),
            source(Some("a1"), tokens(20, 5, 300, 0), 3, &["claude-haiku-4-5"]),
            source(Some("a2"), tokens(1, 2, 3, 4), 2, &["claude-haiku-4-5", "<synthetic>"]),
        ];
        let u = run_usage(&sources, &PriceTable::default()).unwrap();
        assert_eq!(u.tokens, tokens(121, 57, 1303, 14));
        assert_eq!(u.messages, 12);
        assert_eq!(u.subagents.tokens, tokens(21, 7, 303, 4));
        assert_eq!(u.subagents.messages, 5);
        let models: Vec<_> = u.models.iter().map(|m| (m.model.as_deref(), m.tokens)).collect();
        assert_eq!(
            models,
            [
                (Some("claude-opus-4-5"), tokens(100, 50, 1000, 10)),
                (Some("claude-haiku-4-5"), tokens(21, 7, 303, 4)),
            ]
        );
        let sum: f64 = u.models.iter().map(|m| m.estimated_cost_usd.unwrap()).sum();
        assert_eq!(u.estimated_cost_usd, Some(sum));
    }

    #[test]
    fn the_cost_is_the_price_table_applied_per_model() {
        let sources = [source(None, tokens(1_000_000, 2_000_000, 0, 0), 2, &["mock-model"])];
        let u = run_usage(
            &sources,
            &priced(
                "mock",
                Price {
                    input: 1.0,
                    output: 2.0,
                    cache_read: 0.0,
                    cache_write: 0.0,
                },
            ),
        )
        .unwrap();
        assert_eq!(u.models[0].price.as_deref(), Some("mock"));
        assert_eq!(u.estimated_cost_usd, Some(5.0));
    }

    #[test]
    fn a_model_without_a_price_makes_the_total_unknown_not_smaller() {
        let sources = [
            source(None, tokens(10, 10, 0, 0), 2, &["claude-sonnet-4-5"]),
            source(Some("a1"), tokens(10, 10, 0, 0), 2, &["mock-model"]),
        ];
        let u = run_usage(&sources, &PriceTable::default()).unwrap();
        assert_eq!(u.estimated_cost_usd, None);
        let mock = u
            .models
            .iter()
            .find(|m| m.model.as_deref() == Some("mock-model"))
            .unwrap();
        assert_eq!((mock.price.as_deref(), mock.estimated_cost_usd), (None, None));
        let sonnet = u
            .models
            .iter()
            .find(|m| m.model.as_deref() == Some("claude-sonnet-4-5"))
            .unwrap();
        assert!(sonnet.estimated_cost_usd.is_some());
    }

    #[test]
    fn a_file_naming_several_models_is_left_unattributed() {
        let mut switched = source(None, tokens(10, 10, 0, 0), 4, &["claude-opus-4-5", "claude-sonnet-4-5"]);
        switched.session_model = Some("claude-sonnet-4-5".into());
        let u = run_usage(&[switched], &PriceTable::default()).unwrap();
        assert_eq!(u.models.len(), 1);
        assert_eq!(u.models[0].model, None);
        assert_eq!(u.estimated_cost_usd, None);
    }

    #[test]
    fn a_file_naming_no_model_takes_its_sessions() {
        let mut aider = source(None, tokens(10, 10, 0, 0), 4, &[]);
        aider.session_model = Some("gpt-5".into());
        let u = run_usage(&[aider], &PriceTable::default()).unwrap();
        assert_eq!(u.models[0].model.as_deref(), Some("gpt-5"));
    }

    #[test]
    fn no_tokens_is_no_usage() {
        let sources = [source(None, Usage::default(), 5, &["claude-opus-4-5"])];
        assert_eq!(run_usage(&sources, &PriceTable::default()), None);
        assert_eq!(run_usage(&[], &PriceTable::default()), None);
    }

    #[test]
    fn counts_and_dollars_read_short() {
        assert_eq!(count(950), "950");
        assert_eq!(count(12_345), "12.3k");
        assert_eq!(count(80_000), "80k");
        assert_eq!(count(999_999), "1M");
        assert_eq!(count(1_234_567), "1.2M");
        assert_eq!(dollars(0.4213), "$0.42");
        assert_eq!(dollars(12.5), "$12.50");
        assert_eq!(dollars(0.00347), "$0.0035");
        assert_eq!(dollars(0.000012), "$0.000012");
        assert_eq!(dollars(0.0), "$0.00");
        let u = RunUsage {
            tokens: tokens(12_300, 4_100, 80_000, 0),
            messages: 3,
            subagents: UsageShare::default(),
            models: Vec::new(),
            estimated_cost_usd: Some(0.42),
        };
        assert_eq!(summary(&u), "12.3k in · 4.1k out · 80k cache read — est. $0.42");
        assert_eq!(subagents_line(&u), None);
        let unknown = RunUsage {
            estimated_cost_usd: None,
            ..u
        };
        assert_eq!(summary(&unknown), "12.3k in · 4.1k out · 80k cache read — est. —");
    }
}
