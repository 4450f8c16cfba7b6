//! The routine scheduler (docs/design.md §13): one task that wakes at the
//! next fire of any routine in the config (read again at each wake, so a
//! changed schedule takes effect at its next fire), fires what is due
//! (`routine_fire`), records as `skipped` the fires it missed — the daemon
//! was stopped, or the machine asleep, at their time — and starts the
//! fires queued behind a run once it ends. `routines.*` answer here too.

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::Daemon;
use super::routine_fire::{fire, skip};
use crate::api::{ApiError, ErrorCode, RoutineFired, RoutineRecord};
use crate::clock::Clock;
use crate::config::routines::{CatchUp, LATE_MS, MAX_MISSED, Routine};
use crate::store::routines::RoutineState;

/// The scheduler's state, shared with the methods that answer about it.
pub struct Routines {
    pub clock: Clock,
    /// Each routine's state as last saved (`store::routines`).
    states: Mutex<HashMap<String, RoutineState>>,
    /// Routines whose fire is being started now.
    starting: Mutex<HashSet<String>>,
    /// Held while a fire decides whether its routine is free.
    pub deciding: tokio::sync::Mutex<()>,
    /// Wakes the scheduler: a pause, a resume, a queued fire.
    wake: tokio::sync::Notify,
    /// The scheduler's first look at its clock: fires before it were
    /// missed because no daemon ran.
    started_at: Mutex<Option<i64>>,
    /// When each routine new to the config was first read, by whoever read
    /// it (`routines ls` announcing its next fire, the minute's tick), until
    /// the scheduler takes it as the time its schedule counts from.
    first_read: Mutex<HashMap<String, i64>>,
}

impl Routines {
    pub fn new(clock: Clock) -> Routines {
        Routines {
            clock,
            states: Default::default(),
            starting: Default::default(),
            deciding: Default::default(),
            wake: Default::default(),
            started_at: Default::default(),
            first_read: Default::default(),
        }
    }

    /// The config was read anew: a routine in it never seen before counts
    /// from now — so a fire `routines ls` announced is fired or recorded,
    /// however long the scheduler still sleeps — and the scheduler wakes
    /// to plan for it.
    pub fn config_read(&self, routines: &std::collections::BTreeMap<String, Routine>) {
        let now = self.clock.now_ms();
        if now <= 0 {
            return;
        }
        let states = self.states.lock();
        let mut first_read = self.first_read.lock();
        let mut new = false;
        for name in routines.keys() {
            let seen = states.get(name).is_some_and(|s| s.checked_to.is_some());
            if !seen && !first_read.contains_key(name) {
                first_read.insert(name.clone(), now);
                new = true;
            }
        }
        if new {
            self.wake.notify_one();
        }
    }

    fn state(&self, name: &str) -> RoutineState {
        let states = self.states.lock();
        states.get(name).cloned().unwrap_or_default()
    }

    pub(super) fn starting_now(&self, name: &str, starting: bool) {
        let mut set = self.starting.lock();
        match starting {
            true => set.insert(name.to_string()),
            false => set.remove(name),
        };
    }

    pub(super) fn is_starting(&self, name: &str) -> bool {
        self.starting.lock().contains(name)
    }

    /// Queues a fire behind the routine's run; how many waited before it
    /// (`MAX_QUEUED` or more: not queued).
    pub(super) async fn queue(&self, daemon: &Arc<Daemon>, name: &str, at: i64) -> usize {
        let mut state = self.state(name);
        let before = state.queued.len();
        if before < crate::config::routines::MAX_QUEUED {
            state.queued.push(at);
            save(daemon, name, state).await;
            self.wake.notify_one();
        }
        before
    }
}

/// Stores a routine's state and keeps it as the one in memory.
async fn save(daemon: &Arc<Daemon>, name: &str, state: RoutineState) {
    daemon.routines.states.lock().insert(name.to_string(), state.clone());
    let key = name.to_string();
    if let Err(e) = daemon.engine.store.routines().save(&key, state).await {
        tracing::warn!("cannot store routine {name}'s state: {e}");
    }
}

/// The scheduler, until the daemon stops. (It never waits on
/// `Daemon::shutdown`: that wakes one waiter, which must be the accept
/// loop; this task ends with the runtime.)
pub async fn run(daemon: Arc<Daemon>) {
    match daemon.engine.store.routines().all().await {
        Ok(states) => *daemon.routines.states.lock() = states,
        Err(e) => tracing::warn!("cannot read the routines' states: {e}"),
    }
    let mut changes = daemon.engine.changes.subscribe();
    let mut last_now = 0;
    loop {
        let now = daemon.routines.clock.now_ms().max(last_now);
        last_now = now;
        let mut next = None;
        if now > 0 {
            daemon.routines.started_at.lock().get_or_insert(now);
            for (name, routine) in daemon.engine.config().routines {
                let due = tick(&daemon, &name, &routine, now).await;
                next = next.into_iter().chain(due).min();
            }
        }
        // A minute at most: a suspended machine is seen within it.
        let wake_at = next.unwrap_or(i64::MAX).min(now.saturating_add(LATE_MS));
        tokio::select! {
            _ = sleep_until(&daemon.routines.clock, wake_at) => {}
            _ = daemon.routines.wake.notified() => {}
            // A run that ended may free a routine with fires queued.
            changed = changes.recv(), if has_queue(&daemon) => {
                if let Err(tokio::sync::broadcast::error::RecvError::Closed) = changed {
                    return;
                }
            }
        }
    }
}

/// Until `clock` reads `at_ms`. A file clock is looked at every 20 ms
/// but wakes the scheduler no sooner than the system's would, so a test
/// meets the scheduler asleep between its looks as a user does.
async fn sleep_until(clock: &Clock, at_ms: i64) {
    loop {
        let now = clock.now_ms();
        if now >= at_ms {
            return;
        }
        tokio::time::sleep(clock.nap(at_ms - now)).await;
    }
}

fn has_queue(daemon: &Daemon) -> bool {
    let states = daemon.routines.states.lock();
    states.values().any(|s| !s.queued.is_empty() && !s.paused)
}

/// One routine at one look at the clock: what was due since the last is
/// fired or recorded, then a queued fire started if the routine is free.
/// Its next fire.
async fn tick(daemon: &Arc<Daemon>, name: &str, routine: &Routine, now: i64) -> Option<i64> {
    let Ok(schedule) = routine.schedule() else {
        return None;
    };
    let mut state = daemon.routines.state(name);
    let checked_to = match state.checked_to {
        Some(checked_to) => checked_to,
        None => {
            // First seen: its schedule counts from when the config holding
            // it was first read, or from now.
            let first = daemon.routines.first_read.lock().remove(name);
            let from = first.unwrap_or(now).min(now);
            state.checked_to = Some(from);
            save(daemon, name, state.clone()).await;
            from
        }
    };
    if !routine.enabled || state.paused {
        // Nothing it would have fired meanwhile was missed: it was off.
        // Stored once a minute, so a restart knows it was off until then.
        if now - checked_to >= LATE_MS {
            state.checked_to = Some(now);
            save(daemon, name, state).await;
        }
        return None;
    }
    let (due, more) = schedule.fires_between(checked_to, now, MAX_MISSED);
    if !due.is_empty() {
        state.checked_to = Some(now);
        save(daemon, name, state.clone()).await;
        handle_due(daemon, name, routine, &due, more, now).await;
    }
    if !daemon.routines.state(name).queued.is_empty() {
        start_queued(daemon, name, routine).await;
    }
    schedule.next_after(now)
}

/// Due fires, oldest first: those within `LATE_MS` of now are fired; the
/// older ones were missed and are recorded as `skipped`, but for the
/// newest of them under `catch_up = "latest"` when none is on time.
async fn handle_due(daemon: &Arc<Daemon>, name: &str, routine: &Routine, due: &[i64], more: bool, now: i64) {
    let (missed, on_time): (Vec<i64>, Vec<i64>) = due.iter().partition(|t| **t < now - LATE_MS);
    let caught_up = (routine.catch_up == CatchUp::Latest && on_time.is_empty())
        .then(|| missed.last().copied())
        .flatten();
    if more {
        tracing::warn!(
            "routine {name}: more than {MAX_MISSED} fires were missed; the newest {MAX_MISSED} are recorded"
        );
    }
    let started_at = *daemon.routines.started_at.lock();
    for &at in missed.iter().filter(|t| Some(**t) != caught_up) {
        let when = crate::store::format_ms(at);
        let why = match started_at {
            Some(s) if at < s => format!("missed: the daemon was not running at {when}"),
            _ => format!("missed: the daemon could not fire it at {when} (the machine slept or the daemon stalled)"),
        };
        skip(daemon, name, routine, at, why).await;
    }
    for at in caught_up.into_iter().chain(on_time) {
        let (daemon, name, routine) = (daemon.clone(), name.to_string(), routine.clone());
        // Off the scheduler: a start on a host may take a while.
        tokio::spawn(async move { fire(&daemon, &name, &routine, at).await });
    }
}

/// The oldest queued fire, once the routine's previous run has ended.
async fn start_queued(daemon: &Arc<Daemon>, name: &str, routine: &Routine) {
    if daemon.routines.is_starting(name) {
        return;
    }
    let key = name.to_string();
    let live = daemon.engine.store.routines().live_run(&key).await;
    if !matches!(live, Ok(None)) {
        return;
    }
    let mut state = daemon.routines.state(name);
    let at = state.queued.remove(0);
    save(daemon, name, state).await;
    fire(daemon, name, routine, at).await;
}

fn configured(daemon: &Daemon, name: &str) -> Result<Routine, ApiError> {
    daemon.engine.config().routines.remove(name).ok_or_else(|| {
        ApiError::new(
            ErrorCode::UnknownRoutine,
            format!("no routine named '{name}' in the config ([routines.NAME])"),
        )
    })
}

/// `routines.list`: every routine of the config, by name.
pub async fn list(daemon: &Arc<Daemon>) -> Result<Vec<RoutineRecord>, ApiError> {
    let now = daemon.routines.clock.now_ms();
    let mut out = Vec::new();
    for (name, routine) in daemon.engine.config().routines {
        let key = name.clone();
        let last = daemon
            .engine
            .store
            .routines()
            .last_fire(&key)
            .await
            .map_err(ApiError::internal)?;
        out.push(record(daemon, &name, &routine, now, last.map(|r| r.to_record())));
    }
    Ok(out)
}

fn record(
    daemon: &Daemon,
    name: &str,
    routine: &Routine,
    now: i64,
    last: Option<crate::api::RunRecord>,
) -> RoutineRecord {
    let state = daemon.routines.state(name);
    let next_fire = (routine.enabled && !state.paused)
        .then(|| routine.schedule().ok()?.next_after(now))
        .flatten()
        .map(crate::store::format_ms);
    RoutineRecord {
        name: name.to_string(),
        schedule: routine.schedule.clone(),
        timezone: routine.timezone.clone().unwrap_or_else(|| "local".into()),
        harness: routine.harness().to_string(),
        host: routine.host.clone().unwrap_or_else(|| "local".into()),
        overlap: routine.overlap.as_str().into(),
        catch_up: routine.catch_up.as_str().into(),
        enabled: routine.enabled,
        paused: state.paused,
        next_fire,
        queued: state.queued.len(),
        last,
    }
}

/// `routines.run`: a fire now, under the routine's overlap rule.
pub async fn run_now(daemon: &Arc<Daemon>, name: &str) -> Result<RoutineFired, ApiError> {
    let routine = configured(daemon, name)?;
    let now = daemon.routines.clock.now_ms();
    Ok(fire(daemon, name, &routine, now).await)
}

/// `routines.pause` / `routines.resume`. A resumed routine fires from now
/// on: what it would have fired while paused is not missed.
pub async fn pause(daemon: &Arc<Daemon>, name: &str, paused: bool) -> Result<RoutineRecord, ApiError> {
    let routine = configured(daemon, name)?;
    let now = daemon.routines.clock.now_ms();
    let mut state = daemon.routines.state(name);
    if state.paused != paused {
        state.paused = paused;
        state.checked_to = Some(now);
        save(daemon, name, state).await;
        daemon.routines.wake.notify_one();
    }
    let key = name.to_string();
    let last = daemon
        .engine
        .store
        .routines()
        .last_fire(&key)
        .await
        .map_err(ApiError::internal)?;
    Ok(record(daemon, name, &routine, now, last.map(|r| r.to_record())))
}
