//! Task-local context inherited by a graph's nodes (paper §4: "the creator's
//! thread-local context, e.g. its transaction snapshot, is inherited by the tasks").
//!
//! A graph captures the submitter's current context at `submit` time; each of its
//! nodes runs with that context installed, and graphs, jobs and joins spawned from a
//! node inherit it in turn.

use std::any::Any;
use std::cell::RefCell;
use std::sync::Arc;

/// An opaque, shareable context value (a transaction handle, a query id…).
#[derive(Clone)]
pub struct TaskContext(Arc<dyn Any + Send + Sync>);

impl TaskContext {
    pub fn new<T: Any + Send + Sync>(value: T) -> Self {
        TaskContext(Arc::new(value))
    }
    /// The value if it has type `T`.
    pub fn downcast<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.0.clone().downcast::<T>().ok()
    }
}

impl std::fmt::Debug for TaskContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TaskContext(..)")
    }
}

thread_local! {
    static CURRENT: RefCell<Option<TaskContext>> = const { RefCell::new(None) };
}

/// The context of the running task (or the one a client thread installed).
pub fn current_context() -> Option<TaskContext> {
    CURRENT.with(|c| c.borrow().clone())
}

/// The current context's value if it has type `T`.
pub fn current<T: Any + Send + Sync>() -> Option<Arc<T>> {
    current_context().and_then(|c| c.downcast::<T>())
}

/// Runs `f` with `ctx` as the current context, restoring the previous one after
/// (also when `f` panics).
pub fn with_context<R>(ctx: Option<TaskContext>, f: impl FnOnce() -> R) -> R {
    let _restore = ContextGuard::install(ctx);
    f()
}

/// Restores the previous context on drop.
pub(crate) struct ContextGuard {
    previous: Option<TaskContext>,
}

impl ContextGuard {
    pub(crate) fn install(ctx: Option<TaskContext>) -> Self {
        let previous = CURRENT.with(|c| c.replace(ctx));
        ContextGuard { previous }
    }
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        let prev = self.previous.take();
        CURRENT.with(|c| *c.borrow_mut() = prev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_restores() {
        assert!(current::<u32>().is_none());
        with_context(Some(TaskContext::new(7u32)), || {
            assert_eq!(*current::<u32>().unwrap(), 7);
            assert!(current::<String>().is_none());
            with_context(None, || assert!(current_context().is_none()));
            assert_eq!(*current::<u32>().unwrap(), 7);
        });
        assert!(current_context().is_none());
    }
}
