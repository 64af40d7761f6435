//! The wait-for graph: which waiting transaction (attempt) waits for which.
//! A node per request that is queued on some lock, with its out-edges (the
//! conflicting holders and the conflicting requests queued before it, as its
//! entry computed them under the shard latch); targets that are not nodes are
//! running transactions, which wait for nobody. The graph lives behind one
//! mutex of its own (see the lock order in `mod.rs`). It is acyclic between
//! calls: a cycle can only appear when an edge is added, and the request
//! adding it searches for a cycle through itself and breaks every one it
//! finds before the mutex is released.

use std::collections::HashMap;

use super::name::TxnTs;

/// Why a waiting request must give up and roll back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VictimCause {
    /// Its own new edge closed a cycle in which it is the youngest.
    ClosedTheCycle,
    /// Another request's edge closed a cycle in which this one was the
    /// youngest: it was marked while asleep and woken to die.
    Chosen,
}

/// What a waiting request does after its graph step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// It may take the lock (it has left the graph).
    Proceed,
    /// Sleep until its shard changes, then check again.
    Wait,
    /// A deadlock victim (it has left the graph): leave the queue and fail.
    Victim(VictimCause),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeState {
    Waiting,
    /// Chosen as a victim by another request's step; its edges are gone.
    Doomed,
}

#[derive(Debug)]
struct Node {
    /// Sorted, no duplicates.
    edges: Vec<u64>,
    state: NodeState,
    /// The shard it sleeps in (to wake it when it is chosen).
    shard: usize,
}

#[derive(Default, Debug)]
pub(super) struct WaitForGraph {
    nodes: HashMap<u64, Node>,
}

impl WaitForGraph {
    /// One check of a queued request `ts` sleeping in `shard`: `blockers` is
    /// `None` if its entry would grant it now, else whom it waits for
    /// (sorted, no duplicates). A doomed request learns it here first, so a
    /// victim never takes a lock. If the request gained an edge, every cycle
    /// through it is broken by choosing the youngest member: the request
    /// itself (returned), or another, whose shard is pushed on `wake`.
    pub(super) fn step(
        &mut self,
        ts: TxnTs,
        shard: usize,
        blockers: Option<&[u64]>,
        wake: &mut Vec<usize>,
    ) -> Verdict {
        let me = ts.0;
        if self
            .nodes
            .get(&me)
            .is_some_and(|n| n.state == NodeState::Doomed)
        {
            self.nodes.remove(&me);
            return Verdict::Victim(VictimCause::Chosen);
        }
        let Some(blockers) = blockers else {
            self.nodes.remove(&me);
            return Verdict::Proceed;
        };
        debug_assert!(!blockers.is_empty() && blockers.is_sorted());
        let node = self.nodes.entry(me).or_insert_with(|| Node {
            edges: Vec::new(),
            state: NodeState::Waiting,
            shard,
        });
        let added = blockers
            .iter()
            .any(|b| node.edges.binary_search(b).is_err());
        node.edges.clear();
        node.edges.extend_from_slice(blockers);
        if !added {
            return Verdict::Wait;
        }
        while let Some(cycle) = self.cycle_through(me) {
            let victim = *cycle.iter().max().expect("a cycle has members");
            if victim == me {
                self.nodes.remove(&me);
                self.debug_check_acyclic();
                return Verdict::Victim(VictimCause::ClosedTheCycle);
            }
            let v = self
                .nodes
                .get_mut(&victim)
                .expect("cycle members are nodes");
            v.state = NodeState::Doomed;
            v.edges.clear();
            wake.push(v.shard);
        }
        self.debug_check_acyclic();
        Verdict::Wait
    }

    /// A queued request `ts` gives up waiting (cancelled): it leaves the
    /// graph, doomed or not. Edges to it now lead nowhere — it is a running
    /// transaction again (rolling back), which waits for nobody.
    pub(super) fn leave(&mut self, ts: TxnTs) {
        self.nodes.remove(&ts.0);
    }

    /// A path `start → … → x` with an edge `x → start`, if any (depth-first;
    /// each node is visited once, so at most nodes + edges steps).
    fn cycle_through(&self, start: u64) -> Option<Vec<u64>> {
        let mut path = vec![start];
        let mut next_edge = vec![0usize];
        let mut seen = vec![start];
        while let Some(&top) = path.last() {
            let edges = &self.nodes[&top].edges;
            let i = next_edge.last_mut().expect("one index per path node");
            let Some(&to) = edges.get(*i) else {
                path.pop();
                next_edge.pop();
                continue;
            };
            *i += 1;
            if to == start {
                return Some(path);
            }
            if seen.contains(&to) {
                continue;
            }
            seen.push(to);
            if self.nodes.get(&to).is_some_and(|n| !n.edges.is_empty()) {
                path.push(to);
                next_edge.push(0);
            }
        }
        None
    }

    /// Whether no cycle exists (checked after every detection in debug
    /// builds: the invariant "acyclic between calls").
    pub(super) fn is_acyclic(&self) -> bool {
        self.nodes.keys().all(|&n| self.cycle_through(n).is_none())
    }

    fn debug_check_acyclic(&self) {
        debug_assert!(self.is_acyclic(), "a cycle survived detection");
    }

    /// Requests in the graph (waiting or doomed and not yet woken).
    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(g: &mut WaitForGraph, ts: u64, blockers: &[u64], wake: &mut Vec<usize>) -> Verdict {
        g.step(TxnTs(ts), ts as usize, Some(blockers), wake)
    }

    #[test]
    fn the_youngest_of_a_cycle_is_chosen() {
        let mut g = WaitForGraph::default();
        let mut wake = Vec::new();
        // 3 → 1, 1 → 2: no cycle yet.
        assert_eq!(step(&mut g, 3, &[1], &mut wake), Verdict::Wait);
        assert_eq!(step(&mut g, 1, &[2], &mut wake), Verdict::Wait);
        // 2 → 3 closes 1 → 2 → 3 → 1; 3, the youngest, is asleep: doomed.
        assert_eq!(step(&mut g, 2, &[3], &mut wake), Verdict::Wait);
        assert_eq!(wake, [3]);
        assert!(g.is_acyclic());
        // 3 wakes (even if its entry would grant it now) and learns it.
        assert_eq!(
            g.step(TxnTs(3), 3, None, &mut wake),
            Verdict::Victim(VictimCause::Chosen)
        );
        // 1 wakes, still waiting for 2, which got its lock: both leave.
        assert_eq!(step(&mut g, 1, &[2], &mut wake), Verdict::Wait);
        assert_eq!(g.step(TxnTs(2), 2, None, &mut wake), Verdict::Proceed);
        assert_eq!(g.step(TxnTs(1), 1, None, &mut wake), Verdict::Proceed);
        assert_eq!(g.len(), 0);
    }

    #[test]
    fn the_requester_dies_when_it_is_the_youngest() {
        let mut g = WaitForGraph::default();
        let mut wake = Vec::new();
        assert_eq!(step(&mut g, 1, &[2], &mut wake), Verdict::Wait);
        assert_eq!(
            step(&mut g, 2, &[1], &mut wake),
            Verdict::Victim(VictimCause::ClosedTheCycle)
        );
        assert!(wake.is_empty() && g.len() == 1 && g.is_acyclic());
    }

    #[test]
    fn edges_to_nodes_off_the_graph_lead_nowhere() {
        let mut g = WaitForGraph::default();
        let mut wake = Vec::new();
        // 2 waits for 5 (running) and 1; 1 for 9 (running).
        assert_eq!(step(&mut g, 1, &[9], &mut wake), Verdict::Wait);
        assert_eq!(step(&mut g, 2, &[1, 5], &mut wake), Verdict::Wait);
        // 4 → 2 → 1 → 9: a chain, not a cycle.
        assert_eq!(step(&mut g, 4, &[2], &mut wake), Verdict::Wait);
        assert!(wake.is_empty() && g.len() == 3);
    }
}
