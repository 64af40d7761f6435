//! Task graphs (paper §4): a DAG with a single root whose nodes hold arbitrary code.
//! A node may spawn new graphs, or re-issue itself ([`Step::Reissue`]). A panic in
//! any node is caught, the graph's remaining nodes are skipped, and the panic is
//! returned by [`GraphHandle::wait`].

use std::any::Any;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::context::{ContextGuard, TaskContext};
use crate::latch::CoreLatch;

/// What a node asks for when it returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The node is finished; its successors may become ready.
    Done,
    /// Run this node again later (it goes back to a task pool at the same depth).
    Reissue,
}

/// A node of a [`TaskGraph`] under construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeId(pub(crate) u32);

type NodeFn = Box<dyn FnMut() -> Step + Send + 'static>;

/// A graph being built. Submit it with [`crate::Scheduler::submit`].
pub struct TaskGraph {
    nodes: Vec<(NodeFn, String)>,
    edges: Vec<(u32, u32)>,
    priority: usize,
    label: String,
}

impl Default for TaskGraph {
    fn default() -> Self {
        Self::new()
    }
}

impl TaskGraph {
    pub fn new() -> Self {
        TaskGraph {
            nodes: Vec::new(),
            edges: Vec::new(),
            priority: 1,
            label: "graph".into(),
        }
    }

    /// Priority of the whole graph; higher runs first. Clamped to the scheduler's
    /// `priority_levels - 1`. Default 1.
    pub fn with_priority(mut self, priority: usize) -> Self {
        self.priority = priority;
        self
    }

    /// A label reported with panics.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Adds a node that runs once.
    pub fn add(&mut self, f: impl FnOnce() + Send + 'static) -> NodeId {
        let mut f = Some(f);
        self.add_reissuing(move || {
            (f.take().expect("one-shot node ran twice"))();
            Step::Done
        })
    }

    /// Adds a node that may re-issue itself by returning [`Step::Reissue`].
    pub fn add_reissuing(&mut self, f: impl FnMut() -> Step + Send + 'static) -> NodeId {
        let id = NodeId(u32::try_from(self.nodes.len()).expect("more than 2^32 nodes"));
        self.nodes.push((Box::new(f), format!("node {}", id.0)));
        id
    }

    /// Names a node (reported with its panic).
    pub fn name(&mut self, node: NodeId, name: impl Into<String>) {
        if let Some(n) = self.nodes.get_mut(node.0 as usize) {
            n.1 = name.into();
        }
    }

    /// `before` must finish before `after` starts.
    pub fn edge(&mut self, before: NodeId, after: NodeId) {
        self.edges.push((before.0, after.0));
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Checks the shape (one root, acyclic, edges in range) and freezes the graph.
    pub(crate) fn build(self, context: Option<TaskContext>) -> Result<Arc<GraphInner>, GraphError> {
        let n = self.nodes.len();
        if n == 0 {
            return Err(GraphError::Empty);
        }
        let mut succ: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut preds = vec![0u32; n];
        for &(a, b) in &self.edges {
            if a as usize >= n || b as usize >= n {
                return Err(GraphError::UnknownNode(a.max(b) as usize));
            }
            if a == b {
                return Err(GraphError::Cycle);
            }
            succ[a as usize].push(b);
            preds[b as usize] += 1;
        }
        let roots: Vec<usize> = (0..n).filter(|&i| preds[i] == 0).collect();
        if roots.len() != 1 {
            return Err(if roots.is_empty() {
                GraphError::Cycle
            } else {
                GraphError::MultipleRoots(roots)
            });
        }
        // Kahn's algorithm: detects cycles and computes each node's depth, the longest
        // path from the root (the pools run deeper nodes first).
        let mut depth = vec![0u32; n];
        let mut left = preds.clone();
        let mut stack = vec![roots[0]];
        let mut seen = 0;
        while let Some(i) = stack.pop() {
            seen += 1;
            for &s in &succ[i] {
                let s = s as usize;
                depth[s] = depth[s].max(depth[i] + 1);
                left[s] -= 1;
                if left[s] == 0 {
                    stack.push(s);
                }
            }
        }
        if seen != n {
            return Err(GraphError::Cycle);
        }
        let nodes: Box<[NodeSlot]> = self
            .nodes
            .into_iter()
            .zip(succ)
            .enumerate()
            .map(|(i, ((f, name), s))| NodeSlot {
                func: Mutex::new(Some(f)),
                pending: AtomicU32::new(preds[i]),
                successors: s.into_boxed_slice(),
                depth: depth[i],
                name,
            })
            .collect();
        Ok(Arc::new(GraphInner {
            nodes,
            root: roots[0] as u32,
            remaining: AtomicUsize::new(n),
            failed: AtomicBool::new(false),
            panic: Mutex::new(None),
            done: CoreLatch::new(),
            context,
            class: crate::class::current_class(),
            priority: self.priority,
            label: self.label,
        }))
    }
}

/// Why a graph was refused at submit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GraphError {
    /// The graph has no nodes.
    Empty,
    /// More than one node has no predecessor (their indices).
    MultipleRoots(Vec<usize>),
    /// The edges contain a cycle.
    Cycle,
    /// An edge names a node that does not exist.
    UnknownNode(usize),
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::Empty => write!(f, "task graph has no nodes"),
            GraphError::MultipleRoots(r) => {
                write!(
                    f,
                    "task graph must have one root, found {} ({r:?})",
                    r.len()
                )
            }
            GraphError::Cycle => write!(f, "task graph has a cycle"),
            GraphError::UnknownNode(i) => write!(f, "edge names unknown node {i}"),
        }
    }
}

impl std::error::Error for GraphError {}

/// A panic raised by a task, carried to whoever waits.
pub struct TaskPanic {
    /// Which graph and node (or job) panicked.
    pub origin: String,
    /// The panic message when it was a string.
    pub message: String,
    payload: Option<Box<dyn Any + Send>>,
}

impl TaskPanic {
    pub(crate) fn new(origin: String, payload: Box<dyn Any + Send>) -> Self {
        let message = panic_message(payload.as_ref());
        TaskPanic {
            origin,
            message,
            payload: Some(payload),
        }
    }
    /// Re-raises the original panic on the current thread.
    pub fn resume(mut self) -> ! {
        match self.payload.take() {
            Some(p) => std::panic::resume_unwind(p),
            None => panic!("{}", self.message),
        }
    }
}

/// A panic payload's message: the string it carries, if it carries one.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

impl fmt::Debug for TaskPanic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TaskPanic({}: {})", self.origin, self.message)
    }
}

impl fmt::Display for TaskPanic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "task panicked in {}: {}", self.origin, self.message)
    }
}

impl std::error::Error for TaskPanic {}

pub(crate) struct NodeSlot {
    func: Mutex<Option<NodeFn>>,
    pending: AtomicU32,
    successors: Box<[u32]>,
    pub(crate) depth: u32,
    name: String,
}

pub(crate) struct GraphInner {
    nodes: Box<[NodeSlot]>,
    pub(crate) root: u32,
    remaining: AtomicUsize,
    failed: AtomicBool,
    panic: Mutex<Option<TaskPanic>>,
    pub(crate) done: CoreLatch,
    pub(crate) context: Option<TaskContext>,
    /// The workload class of the submitter: every node runs under it.
    pub(crate) class: crate::class::ClassId,
    pub(crate) priority: usize,
    label: String,
}

impl GraphInner {
    pub(crate) fn depth(&self, node: u32) -> u32 {
        self.nodes[node as usize].depth
    }

    /// Runs one node with the graph's context installed. A panic is recorded and
    /// turns every later node of this graph into a no-op.
    pub(crate) fn run_node(&self, node: u32) -> Step {
        if self.failed.load(Ordering::Acquire) {
            return Step::Done;
        }
        let slot = &self.nodes[node as usize];
        // The node is ready exactly once (its pending count hit zero once), and a
        // re-issued node is in one queue at a time, so this lock is never contended;
        // it makes the FnMut access safe without unsafe code.
        let mut func = slot.func.lock();
        let f = func.as_mut().expect("node closure missing");
        let _ctx = ContextGuard::install(self.context.clone());
        let _class = crate::class::ClassGuard::enter(self.class);
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(Step::Reissue) => Step::Reissue,
            Ok(Step::Done) => {
                func.take();
                Step::Done
            }
            Err(payload) => {
                func.take();
                let origin = format!("{} / {}", self.label, slot.name);
                let mut p = self.panic.lock();
                if p.is_none() {
                    *p = Some(TaskPanic::new(origin, payload));
                }
                // Release: pairs with the Acquire load above in later nodes.
                self.failed.store(true, Ordering::Release);
                Step::Done
            }
        }
    }

    /// Marks `node` finished and appends the successors that became ready. Returns
    /// true if this was the graph's last node (the done latch is then set).
    pub(crate) fn complete_node(&self, node: u32, ready: &mut Vec<u32>) -> bool {
        for &s in self.nodes[node as usize].successors.iter() {
            // AcqRel: the last predecessor to finish (Acquire) sees every other
            // predecessor's writes (Release) before its successor runs.
            let before = self.nodes[s as usize]
                .pending
                .fetch_sub(1, Ordering::AcqRel);
            assert!(
                before >= 1,
                "node {s} completed more often than it has predecessors"
            );
            if before == 1 {
                ready.push(s);
            }
        }
        // AcqRel: the last node's completion sees all nodes' writes before `done` is set.
        let before = self.remaining.fetch_sub(1, Ordering::AcqRel);
        assert!(before >= 1, "graph completed more nodes than it has");
        if before == 1 {
            self.done.set();
            true
        } else {
            false
        }
    }

    fn take_result(&self) -> Result<(), TaskPanic> {
        match self.panic.lock().take() {
            Some(p) => Err(p),
            None => Ok(()),
        }
    }
}

/// The submitter's handle on a running graph.
pub struct GraphHandle {
    pub(crate) inner: Arc<GraphInner>,
}

impl GraphHandle {
    /// True once every node has finished (or was skipped after a panic).
    pub fn is_finished(&self) -> bool {
        self.inner.done.probe()
    }

    /// Waits for the graph; returns the first panic of any node. On a worker thread
    /// the worker counts as *waiting for a graph* meanwhile, and another worker is
    /// activated at once (paper §5), so graphs that wait on graphs cannot deadlock.
    pub fn wait(self) -> Result<(), TaskPanic> {
        crate::worker::wait_as_inactive(crate::WorkerState::WaitingForGraph, || {
            self.inner.done.wait(None);
        });
        self.inner.take_result()
    }

    /// Like [`wait`](Self::wait) with a time limit; gives the handle back on timeout.
    pub fn wait_timeout(self, timeout: Duration) -> Result<Result<(), TaskPanic>, GraphHandle> {
        let deadline = Instant::now() + timeout;
        let done = crate::worker::wait_as_inactive(crate::WorkerState::WaitingForGraph, || {
            self.inner.done.wait(Some(deadline))
        });
        if done {
            Ok(self.inner.take_result())
        } else {
            Err(self)
        }
    }
}
