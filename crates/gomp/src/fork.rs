//! Forking and joining a parallel region: how big the team is, one scheduler task
//! per non-master member at the OpenMP priority, and the master's context.

use std::ffi::c_void;
use std::sync::Arc;

use maestro_scheduler::sync::current_worker_state;

use crate::ctx::{self, Ctx, with_current};
use crate::home;
use crate::icv::Icv;
use crate::runtime::{self, MasterPlacement};
use crate::taskred::Registration;
use crate::team::{RegionFn, TeamShared};
use crate::workshare::WorkShare;

/// How many members a region gets (OpenMP §2.6.1 with our hint policy).
fn team_size(parent: &Ctx, requested: usize) -> usize {
    let icv = parent.icv.get();
    if parent.team.active_level >= icv.max_active_levels {
        return 1;
    }
    let mut n = if requested > 0 {
        requested
    } else {
        icv.nthreads
    };
    if requested == 0 && (icv.dynamic || runtime::hint_teams()) {
        n = n.min(runtime::scheduler().concurrency_hint().max(1));
    }
    n.min(icv.thread_limit).max(1)
}

/// The master's context of a forked region, entered on the forking thread. Boxed
/// because the thread-local current-context pointer refers to it: it must not move
/// until [`join`] leaves it.
pub(crate) struct Master(Box<Ctx>);

/// A whole region: forks a team for `body` from the calling thread's context, runs
/// the master's share, joins. Where the master's share runs follows
/// [`runtime::master_placement`]: on the calling thread (as in libgomp), or — for
/// a region entered by a thread outside the scheduler, outside any region — as
/// one more scheduler task at the OpenMP priority while the caller sleeps, so
/// that every cycle the region uses is the scheduler's to give (PROTOCOL.md,
/// "Master placement"). `pre_ws(parent, n)` may give a construct every member
/// starts in (combined `parallel for` / `parallel sections`).
pub(crate) fn run_region(
    body: RegionFn,
    requested: usize,
    pre_ws: impl FnOnce(&Ctx, usize) -> Option<WorkShare>,
) {
    run_region_with(body, requested, pre_ws, |_| None);
}

/// [`run_region`] for the native API: members are always scheduler tasks
/// (the dedicated threads of `crate::home` are for C programs' `threadprivate`).
pub(crate) fn run_region_on_scheduler(body: RegionFn, requested: usize) {
    run_region_in(body, requested, |_, _| None, |_| None, false);
}

/// [`run_region`] whose members see the task reductions `red(n)` gives for a
/// team of `n` (`parallel reduction(task, …)`), made before any member starts.
pub(crate) fn run_region_with(
    body: RegionFn,
    requested: usize,
    pre_ws: impl FnOnce(&Ctx, usize) -> Option<WorkShare>,
    red: impl FnOnce(usize) -> Option<Arc<Registration>>,
) {
    run_region_in(body, requested, pre_ws, red, home::dedicated());
}

/// [`run_region_with`], on dedicated threads or not.
fn run_region_in(
    body: RegionFn,
    requested: usize,
    pre_ws: impl FnOnce(&Ctx, usize) -> Option<WorkShare>,
    red: impl FnOnce(usize) -> Option<Arc<Registration>>,
    dedicated: bool,
) {
    let run = || {
        let offload = offload_master(dedicated);
        let team =
            with_current(|p| fork_team(p, body, requested, |n| pre_ws(p, n), red, dedicated));
        run_forked(team, body, offload);
    };
    // `MAESTRO_OMP_CLASS`: everything the region submits captures the class.
    match runtime::region_class() {
        Some(class)
            if maestro_scheduler::current_class() == maestro_scheduler::ClassId::DEFAULT =>
        {
            maestro_scheduler::with_class(class, run)
        }
        _ => run(),
    }
}

/// Whether the master's share of a region forked now runs as a scheduler task
/// ([`runtime::master_placement`]). Never for a team on dedicated threads:
/// its thread 0 must be the forking thread, whose thread-local storage the
/// master's `threadprivate` copies are.
fn offload_master(dedicated: bool) -> bool {
    !dedicated
        && runtime::master_placement() == MasterPlacement::Scheduler
        && ctx::in_initial_context()
        && current_worker_state().is_none()
}

/// Runs member 0 of the forked `team` (whose other members are submitted) and
/// joins: on the calling thread, or, if `offload`, as a scheduler task while
/// the calling thread waits.
fn run_forked(team: Arc<TeamShared>, body: RegionFn, offload: bool) {
    if offload {
        runtime::scheduler().install_on_worker(runtime::priority(), move || {
            // The whole `RegionFn` (which is `Send`), not its raw pointer field.
            let body = body;
            let master = Master::enter(&team);
            // SAFETY: GCC's region body (or the native trampoline) with its own
            // argument block, which the calling thread keeps alive: it waits in
            // `install_on_worker` until this job, join included, is done.
            unsafe { (body.f)(body.data) };
            join(master);
        });
        return;
    }
    let master = Master::enter(&team);
    // SAFETY: as above, on the calling thread, which owns the argument block.
    unsafe { (body.f)(body.data) };
    join(master);
}

/// A host `teams` construct as its league's members see it; lives on the
/// encountering thread's stack until the league's join.
struct LeagueBody {
    body: RegionFn,
    num_teams: usize,
    /// The ICVs of every team's initial task.
    icv: Icv,
}

/// The body of league member `k` (the league's member number): makes team
/// `k`, a team of one at level 0 whose initial task runs `body`, and ends it
/// as a region ends (waiting for its explicit tasks).
///
/// # Safety
/// `data` is the [`LeagueBody`] of [`run_league`], alive until the league's
/// join, which waits for this call.
unsafe extern "C" fn league_member(data: *mut c_void) {
    // SAFETY: the caller's contract.
    let league = unsafe { &*data.cast::<LeagueBody>() };
    let k = with_current(|c| c.num);
    let mut team = TeamShared::build(1, 0, 0, Vec::new(), None, league.icv, None);
    team.league = (k, league.num_teams);
    let team = Arc::new(team);
    let master = Master::enter(&team);
    // SAFETY: GCC's outlined `teams` body with the argument block the
    // encountering thread keeps alive until `run_league` returns.
    unsafe { (league.body.f)(league.body.data) };
    join(master);
}

/// A host `teams` construct: a league of `num_teams` teams, each a team of one
/// whose initial task runs `body` with the ICVs `icv` and may fork nested
/// regions. The league is forked and joined like a region whose members are
/// the teams' initial tasks: teams 1.. are scheduler tasks, team 0 runs where
/// a region's master would, and the join runs every team no worker started.
/// League members never wait for each other, so a league needs no free worker
/// to complete (PROTOCOL.md, "Host teams").
pub(crate) fn run_league(body: RegionFn, num_teams: usize, icv: Icv) {
    let dedicated = home::dedicated();
    let offload = offload_master(dedicated);
    let league = LeagueBody {
        body,
        num_teams,
        icv,
    };
    let trampoline = RegionFn {
        f: league_member,
        data: (&raw const league).cast_mut().cast(),
    };
    let mut team = TeamShared::build(num_teams, 0, 0, Vec::new(), Some(trampoline), icv, None);
    team.dedicated = dedicated;
    let team = Arc::new(team);
    spawn_members(&team, false);
    run_forked(team, trampoline, offload);
}

impl Master {
    /// Enters member 0's context of `team` on the calling thread.
    fn enter(team: &Arc<TeamShared>) -> Master {
        let master = Box::new(team.member_ctx(0));
        master.enter();
        if team.level > 0 {
            crate::abi::display::member_started();
        }
        Master(master)
    }
}

/// Forks a team for `body` from the context `parent` (the encountering task):
/// submits members 1..n as scheduler tasks and returns the master's context,
/// already entered. Finish with [`join`]. `pre_ws(n)` may give a construct every
/// member starts in (combined `parallel for` / `parallel sections`).
pub(crate) fn fork(
    parent: &Ctx,
    body: RegionFn,
    requested: usize,
    pre_ws: impl FnOnce(usize) -> Option<WorkShare>,
) -> Master {
    let team = fork_team(parent, body, requested, pre_ws, |_| None, home::dedicated());
    Master::enter(&team)
}

/// Builds the team and submits members 1..n; member 0 (the master) is left to
/// the caller.
fn fork_team(
    parent: &Ctx,
    body: RegionFn,
    requested: usize,
    pre_ws: impl FnOnce(usize) -> Option<WorkShare>,
    red: impl FnOnce(usize) -> Option<Arc<Registration>>,
    dedicated: bool,
) -> Arc<TeamShared> {
    let n = team_size(parent, requested);
    let level = parent.team.level + 1;
    let mut outer = parent.team.outer.clone();
    if parent.team.level > 0 {
        outer.push((parent.num, parent.team.n));
    }
    let mut icv = parent.icv.get();
    if let Some(k) = runtime::env().nthreads_for_level(level) {
        icv.nthreads = k;
    }
    let active_level = parent.team.active_level + usize::from(n > 1);
    let pre_ws = pre_ws(n).map(Arc::new);
    let mut team = TeamShared::build(
        n,
        level,
        active_level,
        outer,
        Some(body),
        icv,
        pre_ws.clone(),
    );
    team.red = red(n);
    team.league = parent.team.league;
    team.dedicated = dedicated;
    let team = Arc::new(team);
    if let Some(ws) = &pre_ws {
        team.ws.insert_first(ws.clone());
    }
    spawn_members(&team, true);
    team
}

/// Submits members 1..n of `team` as scheduler tasks, or hands them to the
/// forking thread's home threads if the team is dedicated; `barriers`:
/// whether they may meet at barriers (then a fixed worker pool may hang
/// scheduler tasks, which [`runtime::warn_if_fixed_pool`] warns about).
fn spawn_members(team: &Arc<TeamShared>, barriers: bool) {
    let n = team.n;
    if n > 1 && team.dedicated {
        *team.homes.lock() = Some(home::start_members(team));
    } else if n > 1 {
        if barriers {
            runtime::warn_if_fixed_pool();
        }
        let sched = runtime::scheduler();
        let priority = runtime::priority();
        for k in 1..n {
            let t = team.clone();
            // A detached root job, not a one-node graph: a region forks every
            // few µs, and a graph costs several allocations that the member's
            // worker frees (cross-thread frees contend on malloc's arena lock:
            // measured with perf, 2026-11-25).
            sched.spawn_detached(priority, move || {
                t.run_member(k);
            });
        }
    }
}

/// Ends the region forked by [`fork`]; `master` must be the calling thread's
/// current context.
pub(crate) fn join(master: Master) {
    let team = master.0.team.clone();
    team.join();
    master.0.leave();
    if let Some(taken) = team.homes.lock().take() {
        home::give_back(taken);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// What each team's initial task and its nested members saw.
    #[derive(Default)]
    struct Seen {
        teams: Mutex<Vec<(usize, usize, usize, usize)>>,
        nested: Mutex<Vec<(usize, usize, usize)>>,
    }

    unsafe extern "C" fn nested_member(data: *mut c_void) {
        // SAFETY: `team_body` passes its `Seen`, alive until the join.
        let seen = unsafe { &*data.cast::<Seen>() };
        with_current(|c| {
            seen.nested
                .lock()
                .unwrap()
                .push((c.team.league.0, c.team.level, c.team.n));
        });
    }

    unsafe extern "C" fn team_body(data: *mut c_void) {
        // SAFETY: the test passes its `Seen`, alive until `run_league` returns.
        let seen = unsafe { &*data.cast::<Seen>() };
        with_current(|c| {
            seen.teams.lock().unwrap().push((
                c.team.league.0,
                c.team.league.1,
                c.team.level,
                c.icv.get().thread_limit,
            ));
        });
        run_region(
            RegionFn {
                f: nested_member,
                data,
            },
            3,
            |_, _| None,
        );
    }

    #[test]
    fn a_league_runs_every_team_once_and_nested_regions_inherit_its_position() {
        let seen = Seen::default();
        let mut icv = runtime::initial_icv();
        icv.thread_limit = 2;
        run_league(
            RegionFn {
                f: team_body,
                data: (&raw const seen).cast_mut().cast(),
            },
            5,
            icv,
        );
        let mut teams = seen.teams.into_inner().unwrap();
        teams.sort();
        assert_eq!(
            teams,
            (0..5).map(|k| (k, 5, 0, 2)).collect::<Vec<_>>(),
            "every team once, at level 0, with the league's thread limit"
        );
        let mut nested = seen.nested.into_inner().unwrap();
        nested.sort();
        let want: Vec<_> = (0..5).flat_map(|k| [(k, 1, 2), (k, 1, 2)]).collect();
        assert_eq!(nested, want, "regions of 3 capped at 2, in their team");
        with_current(|c| assert_eq!(c.team.league, (0, 1), "outside again"));
    }
}
