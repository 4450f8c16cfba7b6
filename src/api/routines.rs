//! `routines.*`: the routines of the config as `agents routines ls --json`
//! prints them, and what a fire did.

use serde::{Deserialize, Serialize};

use super::RunRecord;

/// One `[routines.NAME]`, with what the daemon knows of it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RoutineRecord {
    pub name: String,
    pub schedule: String,
    /// `local`, or the IANA zone the schedule is read in.
    pub timezone: String,
    /// The harness family or profile its runs start.
    pub harness: String,
    pub host: String,
    /// `skip`, `queue` or `parallel`.
    pub overlap: String,
    /// `none` or `latest`.
    pub catch_up: String,
    /// `enabled = false` in the config.
    pub enabled: bool,
    /// `agents routines pause`.
    pub paused: bool,
    /// When it fires next; none while disabled or paused.
    pub next_fire: Option<String>,
    /// Fires waiting for the previous run to end (`overlap = "queue"`).
    pub queued: usize,
    /// The newest record its fires made (a run, or a `skipped` one).
    pub last: Option<RunRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoutineRef {
    pub name: String,
}

/// What `routines.run` did: `started` (the run, perhaps `blocked`),
/// `queued` behind the previous run, or `skipped` (the record says why).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RoutineFired {
    pub routine: String,
    pub outcome: String,
    pub run: Option<RunRecord>,
}
