//! Work split over a few threads of our own: one file's parts, results kept in
//! order, or many files, each thread taking the next one.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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

/// `work(&mut state, i)` for every `i` in `0..n` on up to `threads` scoped
/// threads, each taking the next index until none is left or `cancel` is set;
/// each thread starts from `init()` and hands its state to `finish` at the end
/// (so that results are gathered once per thread, not under a lock per item).
pub fn for_each_index_with<S>(
    n: usize,
    threads: usize,
    cancel: &AtomicBool,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, usize) + Sync,
    finish: impl Fn(S) + Sync,
) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, n.max(1)) {
            scope.spawn(|| {
                let mut state = init();
                while !cancel.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    work(&mut state, i);
                }
                finish(state);
            });
        }
    });
}

/// `work(i)` for every `i` in `0..n`, as `for_each_index_with` without state.
pub fn for_each_index(n: usize, threads: usize, cancel: &AtomicBool, work: impl Fn(usize) + Sync) {
    for_each_index_with(n, threads, cancel, || (), |(), i| work(i), |()| ());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_once_on_each_thread_count_and_none_after_cancel() {
        for threads in [1, 2, 3, 8] {
            for n in [0, 1, 7, 100] {
                let seen = std::sync::Mutex::new(vec![0u32; n]);
                let states = AtomicUsize::new(0);
                for_each_index_with(
                    n,
                    threads,
                    &AtomicBool::new(false),
                    Vec::new,
                    |mine: &mut Vec<usize>, i| mine.push(i),
                    |mine| {
                        states.fetch_add(1, Ordering::Relaxed);
                        let mut seen = seen.lock().unwrap();
                        for i in mine {
                            seen[i] += 1;
                        }
                    },
                );
                assert!(seen.into_inner().unwrap().iter().all(|&c| c == 1));
                assert_eq!(states.into_inner(), threads.clamp(1, n.max(1)));
            }
        }
        let cancel = AtomicBool::new(false);
        let count = AtomicUsize::new(0);
        for_each_index(1000, 2, &cancel, |_| {
            if count.fetch_add(1, Ordering::Relaxed) == 10 {
                cancel.store(true, Ordering::Relaxed);
            }
        });
        // Each thread stops at its next index once the flag is set.
        assert!(count.into_inner() <= 12);
    }
}
