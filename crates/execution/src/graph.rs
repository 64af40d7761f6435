//! A plan as a task graph (ADMS 2013 §4; HANA's executor): one node per
//! pipeline or operator, edges for the data dependencies, submitted with
//! `Scheduler::submit` so that independent pipelines (e.g. the build sides of
//! two joins) run concurrently and the scheduler's depth-ordered pools finish
//! started queries first. Inside a node, operators partition their work as the
//! granularity policy says (nested tasks of the same scheduler).
//!
//! Nodes are `'static` closures: they capture `Arc`s of the data (the database)
//! and clones of the [`crate::ExecContext`]; a node's result goes to its
//! [`Output`] slot, which successors read.

use std::sync::{Arc, OnceLock};

use maestro_scheduler::{GraphHandle, NodeId, Scheduler, TaskGraph};

use crate::error::ExecError;

/// A plan under construction. It starts with a no-op root node (the graph's
/// single root); nodes without dependencies hang off it.
pub struct PlanGraph {
    graph: TaskGraph,
    root: NodeId,
}

/// The result slot of a node.
pub struct Output<T> {
    id: NodeId,
    slot: Arc<OnceLock<T>>,
}

impl<T> Clone for Output<T> {
    fn clone(&self) -> Self {
        Output {
            id: self.id,
            slot: self.slot.clone(),
        }
    }
}

impl<T> Output<T> {
    /// The node, for declaring dependencies.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The node's result. Panics if the node has not run: a reader must list
    /// the node among its dependencies.
    pub fn get(&self) -> &T {
        self.slot
            .get()
            .expect("plan node read before it ran: add it to the reader's dependencies")
    }

    pub fn try_get(&self) -> Option<&T> {
        self.slot.get()
    }

    /// The result, once no other clone of this output is alive (the graph has
    /// finished and its nodes dropped their captures).
    pub fn into_inner(self) -> Option<T> {
        Arc::try_unwrap(self.slot)
            .ok()
            .and_then(OnceLock::into_inner)
    }
}

impl PlanGraph {
    pub fn new(label: &str) -> PlanGraph {
        let mut graph = TaskGraph::new().with_label(label);
        let root = graph.add(|| {});
        graph.name(root, "start");
        PlanGraph { graph, root }
    }

    /// The graph's priority (higher runs first).
    pub fn with_priority(mut self, priority: usize) -> PlanGraph {
        self.graph = std::mem::take(&mut self.graph).with_priority(priority);
        self
    }

    /// Adds a node that runs `f` after every node in `after` and stores its result.
    pub fn node<T, F>(&mut self, name: &str, after: &[NodeId], f: F) -> Output<T>
    where
        T: Send + Sync + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let slot = Arc::new(OnceLock::new());
        let s = slot.clone();
        let id = self.graph.add(move || {
            // A node runs once, so the slot is empty.
            let _ = s.set(f());
        });
        self.graph.name(id, name);
        if after.is_empty() {
            self.graph.edge(self.root, id);
        }
        for &a in after {
            self.graph.edge(a, id);
        }
        Output { id, slot }
    }

    /// Number of nodes (the root included).
    pub fn len(&self) -> usize {
        self.graph.len()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// Submits the graph without waiting.
    pub fn submit(self, scheduler: &Scheduler) -> Result<GraphHandle, ExecError> {
        Ok(scheduler.submit(self.graph)?)
    }

    /// Submits the graph and waits for every node; a node's panic comes back
    /// as [`ExecError::Task`].
    pub fn run(self, scheduler: &Scheduler) -> Result<(), ExecError> {
        self.submit(scheduler)?.wait()?;
        Ok(())
    }
}
