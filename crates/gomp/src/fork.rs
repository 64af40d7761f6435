//! Forking and joining a parallel region: how big the team is, one scheduler task
//! per non-master member at the OpenMP priority, and the master's context.

use std::sync::Arc;

use maestro_scheduler::sync::current_worker_state;

use crate::ctx::{self, Ctx, with_current};
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
    n.min(runtime::thread_limit()).max(1)
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

/// [`run_region`] whose members see the task reductions `red(n)` gives for a
/// team of `n` (`parallel reduction(task, …)`), made before any member starts.
pub(crate) fn run_region_with(
    body: RegionFn,
    requested: usize,
    pre_ws: impl FnOnce(&Ctx, usize) -> Option<WorkShare>,
    red: impl FnOnce(usize) -> Option<Arc<Registration>>,
) {
    let offload = runtime::master_placement() == MasterPlacement::Scheduler
        && ctx::in_initial_context()
        && current_worker_state().is_none();
    if offload {
        let team = with_current(|p| fork_team(p, body, requested, |n| pre_ws(p, n), red));
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
    let master = with_current(|p| {
        let team = fork_team(p, body, requested, |n| pre_ws(p, n), red);
        Master::enter(&team)
    });
    // SAFETY: as above, on the calling thread, which owns the argument block.
    unsafe { (body.f)(body.data) };
    join(master);
}

impl Master {
    /// Enters member 0's context of `team` on the calling thread.
    fn enter(team: &Arc<TeamShared>) -> Master {
        let master = Box::new(team.member_ctx(0));
        master.enter();
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
    let team = fork_team(parent, body, requested, pre_ws, |_| None);
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
    let team = Arc::new(team);
    if let Some(ws) = &pre_ws {
        team.ws.insert_first(ws.clone());
    }
    if n > 1 {
        runtime::warn_if_fixed_pool();
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
    team
}

/// Ends the region forked by [`fork`]; `master` must be the calling thread's
/// current context.
pub(crate) fn join(master: Master) {
    let team = master.0.team.clone();
    team.join();
    master.0.leave();
}
