//! One file's work split over a few threads of our own, results kept in order.

/// Threads for splitting one file's work: the cores, at most four.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

/// `f` of each item, each on a scoped thread of its own, in the items' order. A
/// panic on one goes on up (to become a JS error), never a silently shorter result.
pub fn map_in_order<I: Sync, T: Send>(items: &[I], f: impl Fn(&I) -> T + Sync) -> Vec<T> {
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .iter()
            .map(|item| scope.spawn(move || f(item)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}
