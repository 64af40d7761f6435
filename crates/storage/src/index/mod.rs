//! B+-tree indexes: optimistic lock coupling and the baselines (see issue 4).
