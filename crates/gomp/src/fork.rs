//! Forking and joining a parallel region: how big the team is, one scheduler task
//! per non-master member at the OpenMP priority, and the master's context.

use std::sync::Arc;

use maestro_scheduler::TaskGraph;

use crate::ctx::Ctx;
use crate::runtime;
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
    let team = Arc::new(TeamShared::build(
        n,
        level,
        active_level,
        outer,
        Some(body),
        icv,
        pre_ws.clone(),
    ));
    if let Some(ws) = &pre_ws {
        team.ws.insert_first(ws.clone());
    }
    if n > 1 {
        runtime::warn_if_fixed_pool();
        let sched = runtime::scheduler();
        let priority = runtime::priority();
        for k in 1..n {
            let t = team.clone();
            let mut g = TaskGraph::new()
                .with_priority(priority)
                .with_label("omp-member");
            g.add(move || {
                t.run_member(k);
            });
            if let Err(e) = sched.submit(g) {
                runtime::fatal(&format!("cannot submit a team member: {e}"));
            }
        }
    }
    let master = Box::new(team.member_ctx(0));
    master.enter();
    Master(master)
}

/// Ends the region forked by [`fork`]; `master` must be the calling thread's
/// current context.
pub(crate) fn join(master: Master) {
    let team = master.0.team.clone();
    team.join();
    master.0.leave();
}
