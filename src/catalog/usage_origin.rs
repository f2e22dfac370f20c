//! Where a forked conversation's usage counts. A fork (`forkFrom`,
//! `createBranchedSession`) starts with copies of its parent's entries, usage
//! included; a report across sessions counts each copy once, in the file
//! where it was first written.
//!
//! A copy is an entry of a fork whose fingerprint (id, timestamp, model key,
//! amounts: `usage::fingerprint`) its parent also has. Its origin is found by
//! walking up `parentSession` while the parent has it: the last file of that
//! walk. In a cycle of parents that all have it, the file of the cycle with
//! the smallest path is the origin, whichever file the walk started from.
//! A fork whose parent is not known (gone, unreadable, not a session) counts
//! all its entries: they are counted nowhere else.

use foldhash::HashSet;

use crate::catalog::usage::{add_to_buckets, Amounts, Bucket, UsageTally};

/// The sessions of a report and the files their `parentSession`s name.
pub struct Lineage<'a> {
    paths: &'a [&'a str],
    tallies: &'a [&'a UsageTally],
    /// Index of each file's parent, when it is one of `tallies`.
    parents: &'a [Option<usize>],
    /// Fingerprint sets of the files asked about, made once.
    sets: Vec<Option<HashSet<u64>>>,
}

impl<'a> Lineage<'a> {
    pub fn new(
        paths: &'a [&'a str],
        tallies: &'a [&'a UsageTally],
        parents: &'a [Option<usize>],
    ) -> Lineage<'a> {
        Lineage {
            paths,
            tallies,
            parents,
            sets: vec![None; tallies.len()],
        }
    }

    fn has(&mut self, file: usize, fingerprint: u64) -> bool {
        let tally = self.tallies[file];
        self.sets[file]
            .get_or_insert_with(|| tally.fingerprints().collect())
            .contains(&fingerprint)
    }

    /// The file where the entry `fingerprint` of `file` was first written.
    pub fn origin(&mut self, file: usize, fingerprint: u64) -> usize {
        let mut walked = vec![file];
        let mut here = file;
        loop {
            let Some(parent) = self.parents[here] else {
                return here;
            };
            if !self.has(parent, fingerprint) {
                return here;
            }
            if let Some(at) = walked.iter().position(|&f| f == parent) {
                return walked[at..]
                    .iter()
                    .copied()
                    .min_by(|&a, &b| self.paths[a].cmp(self.paths[b]))
                    .unwrap_or(here);
            }
            walked.push(parent);
            here = parent;
        }
    }

    /// The buckets of what `file` itself wrote, when that is not all of its
    /// buckets (`None`: every entry is its own).
    pub fn own_buckets(&mut self, file: usize) -> Option<Vec<Bucket>> {
        self.parents[file]?;
        let tally = self.tallies[file];
        let mut own = Vec::new();
        let mut copies = 0usize;
        for r in &tally.records {
            match r.fingerprint {
                Some(fp) if self.origin(file, fp) != file => copies += 1,
                _ => add_to_buckets(&mut own, r.slot, r.key, &r.amounts),
            }
        }
        (copies > 0).then_some(own)
    }

    /// What `file` holds of copies of its parent's entries, and how many
    /// entries that is (`None` when its parent is not known).
    pub fn inherited(&mut self, file: usize) -> Option<(Amounts, usize)> {
        let parent = self.parents[file]?;
        let mut sum = Amounts::default();
        let mut n = 0;
        for r in &self.tallies[file].records {
            if r.fingerprint.is_some_and(|fp| self.has(parent, fp)) {
                sum.add(&r.amounts);
                n += 1;
            }
        }
        Some((sum, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tally of entries (id, cost); a fork when `parent`.
    fn tally(parent: bool, entries: &[(&str, f64)]) -> UsageTally {
        let mut t = UsageTally::default();
        t.parent = parent.then(|| "p".to_string());
        for (id, cost) in entries {
            let amounts = Amounts {
                cost: *cost,
                ..Amounts::default()
            };
            let fp = crate::catalog::usage::fingerprint(id.as_bytes(), b"t", b"k", &amounts);
            t.add(0, b"k", &amounts, Some(fp));
        }
        t
    }

    fn own_cost(lineage: &mut Lineage, file: usize) -> f64 {
        match lineage.own_buckets(file) {
            Some(b) => b.iter().map(|b| b.amounts.cost).sum(),
            None => lineage.tallies[file]
                .buckets
                .iter()
                .map(|b| b.amounts.cost)
                .sum(),
        }
    }

    #[test]
    fn a_chain_counts_each_entry_where_it_was_first_written() {
        let a = tally(false, &[("1", 1.0), ("2", 2.0)]);
        // b copies a's two and changes nothing; c copies b and has a new one.
        let b = tally(true, &[("1", 1.0), ("2", 2.0), ("3", 4.0)]);
        let c = tally(true, &[("1", 1.0), ("2", 2.0), ("3", 4.0), ("4", 8.0)]);
        let paths = ["/a", "/b", "/c"];
        let tallies = [&a, &b, &c];
        let parents = [None, Some(0), Some(1)];
        let mut lineage = Lineage::new(&paths, &tallies, &parents);
        let costs: Vec<f64> = (0..3).map(|i| own_cost(&mut lineage, i)).collect();
        assert_eq!(costs, [3.0, 4.0, 8.0]);
        assert_eq!(
            lineage.inherited(2).map(|(a, n)| (a.cost, n)),
            Some((7.0, 3))
        );
        assert_eq!(lineage.inherited(0), None);
    }

    #[test]
    fn a_changed_copy_counts_and_a_lost_parent_leaves_the_copies_to_the_fork() {
        let a = tally(false, &[("1", 1.0)]);
        let b = tally(true, &[("1", 1.5), ("2", 2.0)]);
        let paths = ["/a", "/b"];
        let tallies = [&a, &b];
        let mut lineage = Lineage::new(&paths, &tallies, &[None, Some(0)]);
        assert_eq!(own_cost(&mut lineage, 1), 3.5);
        let c = tally(true, &[("1", 1.0), ("2", 2.0)]);
        let tallies = [&a, &c];
        let mut orphan = Lineage::new(&paths, &tallies, &[None, None]);
        assert_eq!(own_cost(&mut orphan, 1), 3.0);
    }

    #[test]
    fn a_cycle_counts_its_shared_entries_once_and_ends() {
        let a = tally(true, &[("1", 1.0), ("2", 2.0)]);
        let b = tally(true, &[("1", 1.0), ("3", 4.0)]);
        let c = tally(true, &[("1", 1.0), ("3", 4.0), ("5", 16.0)]);
        let paths = ["/b", "/a", "/c"];
        let tallies = [&b, &a, &c];
        // b -> a -> c -> b
        let parents = [Some(1), Some(2), Some(0)];
        let mut lineage = Lineage::new(&paths, &tallies, &parents);
        let costs: Vec<f64> = (0..3).map(|i| own_cost(&mut lineage, i)).collect();
        let total: f64 = costs.iter().sum();
        assert_eq!(total, 1.0 + 2.0 + 4.0 + 16.0, "{costs:?}");
        // "1" is in all three: the smallest path of the cycle, /a, has it.
        assert_eq!(costs[1], 3.0);
    }
}
