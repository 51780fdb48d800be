//! Job names to ids: a hash index over the jobs table that keeps no copy of the names.
//!
//! Each entry is a job id, hashed by its job's name; a lookup compares the name it is given
//! with the names in the table. Nothing iterates the index, so its order (which the hasher's
//! random keys decide) is never observable: decisions stay deterministic. It is derived data:
//! a snapshot does not carry it, and restore builds it from the jobs table
//! ([`JobNames::of`]), as the debug builds' consistency check does to compare.
//!
//! A B-tree of the names (the index before it) held a second copy of every name and compared
//! strings at each of its levels: 79 bytes a pending job more at a million pending (1,018
//! against 939, `memory_per_job`), and some 3,000 instructions a submission in a burst.

use std::hash::{BuildHasher, RandomState};

use hashbrown::HashTable;

use super::job_table::JobTable;
use crate::model::ids::JobId;

/// Job names to ids, for the jobs of a jobs table (pending, running and remembered ended).
#[derive(Clone, Debug, Default)]
pub(crate) struct JobNames {
    ids: HashTable<JobId>,
    hasher: RandomState,
}

/// The name of job `id` in `jobs`, if the slot holds a job.
fn name_of(jobs: &JobTable, id: JobId) -> Option<&str> {
    jobs.get(id).map(|job| job.spec.id.as_str())
}

impl JobNames {
    /// The index of every job in `jobs`; or the name two of them share.
    pub(crate) fn of(jobs: &JobTable) -> Result<Self, String> {
        let mut names = JobNames::default();
        for (id, job) in jobs.iter() {
            if names.get(&job.spec.id, jobs).is_some() {
                return Err(format!("job {}: two jobs have this name", job.spec.id));
            }
            names.insert(id, jobs);
        }
        Ok(names)
    }

    /// The id of the job named `name`.
    pub(crate) fn get(&self, name: &str, jobs: &JobTable) -> Option<JobId> {
        let hash = self.hasher.hash_one(name);
        self.ids
            .find(hash, |&id| name_of(jobs, id) == Some(name))
            .copied()
    }

    /// Indexes job `id`, which `jobs` holds and whose name no other indexed job has.
    pub(crate) fn insert(&mut self, id: JobId, jobs: &JobTable) {
        let Some(name) = name_of(jobs, id) else {
            debug_assert!(false, "job {id:?} indexed by name without a job");
            return;
        };
        debug_assert!(self.get(name, jobs).is_none(), "job {name} indexed twice");
        let hasher = &self.hasher;
        let rehash = |&other: &JobId| hasher.hash_one(name_of(jobs, other).unwrap_or_default());
        self.ids.insert_unique(hasher.hash_one(name), id, rehash);
    }

    /// Makes room for `more` jobs, so that a burst of submissions rehashes the index (reading
    /// every indexed job's name) at most once.
    pub(crate) fn reserve(&mut self, more: usize, jobs: &JobTable) {
        let hasher = &self.hasher;
        self.ids.reserve(more, |&id| {
            hasher.hash_one(name_of(jobs, id).unwrap_or_default())
        });
    }

    /// Forgets job `id`, named `name` (its slot may be emptied already).
    pub(crate) fn remove(&mut self, id: JobId, name: &str) {
        let hash = self.hasher.hash_one(name);
        if let Ok(entry) = self.ids.find_entry(hash, |&other| other == id) {
            entry.remove();
        }
    }

    /// Whether this index names exactly the jobs of `jobs`, each by its own name.
    pub(crate) fn indexes(&self, jobs: &JobTable) -> bool {
        jobs.iter().count() == self.ids.len()
            && jobs
                .iter()
                .all(|(id, job)| self.get(&job.spec.id, jobs) == Some(id))
    }
}

#[cfg(test)]
mod tests {
    use crate::{ClusterConfig, Event, JobSpec, Scheduler};

    #[test]
    fn an_index_names_exactly_the_jobs_of_its_table_each_by_its_own_slot() {
        let cluster: ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let submit = |name: &str| Event::Submit {
            job: JobSpec::new(name, 60_000, 1),
        };
        let eight = ["a", "b", "c", "d", "e", "f", "g", "h"];
        s.tick(0, eight.iter().map(|name| submit(name)).collect())
            .unwrap();
        let state = s.state();
        let (names, jobs) = (&state.job_names, &state.jobs);
        assert!(names.indexes(jobs));
        // A table that lost a job the index still holds: every job left is found, but the
        // index holds one more.
        let (a, b) = (state.job_id("a").unwrap(), state.job_id("b").unwrap());
        let mut fewer = jobs.clone();
        fewer.take(b);
        assert!(!names.indexes(&fewer));
        // A table whose jobs swapped slots in pairs: as many jobs, each found at another's
        // slot. One pair alone would pass unseen where the two names' hashes share their
        // control byte (1 in 128 of the random hasher's keys: a lookup by name then meets the
        // other entry first); four pairs all do so once in 268 million.
        let mut swapped = jobs.clone();
        for pair in [["a", "b"], ["c", "d"], ["e", "f"], ["g", "h"]] {
            let [x, y] = pair.map(|name| state.job_id(name).unwrap());
            let (job_x, job_y) = (swapped.take(x).unwrap(), swapped.take(y).unwrap());
            swapped.put(x, job_y);
            swapped.put(y, job_x);
        }
        assert!(!names.indexes(&swapped));
        // A table with a job the index does not hold.
        let mut more = jobs.clone();
        let mut job = jobs.get(a).unwrap().clone();
        job.spec.id = "c".into();
        more.push(job);
        assert!(!names.indexes(&more));
    }
}
