//! The jobs table: job records by slot, shared with the state's copies until one writes them.
//!
//! Each record sits behind its own reference count, so a copy of the state (a
//! [`Scheduler::what_if`](crate::Scheduler::what_if) trial, a test kit's twin) copies one
//! pointer a job instead of the job, its names and its shapes; whichever copy then changes a job
//! copies that one record first ([`Arc::make_mut`]). A state that nothing shares writes in
//! place. The table serializes as the list of its slots, exactly as a plain list of records
//! would.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Job;
use crate::model::ids::JobId;

/// Jobs by slot; `None` for a free slot.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct JobTable {
    slots: Vec<Option<Arc<Job>>>,
}

impl JobTable {
    /// The number of slots, free ones included.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Every slot's id, free ones included, in order: for walks that read a job and then
    /// change it.
    pub(crate) fn ids(&self) -> impl Iterator<Item = JobId> + use<> {
        (0..self.slots.len()).map(|slot| JobId(slot as u32))
    }

    /// The job in slot `id`.
    pub(crate) fn get(&self, id: JobId) -> Option<&Job> {
        self.slots.get(id.index())?.as_deref()
    }

    /// The job in slot `id`, to change: copied first if a copy of the table shares it.
    pub(crate) fn get_mut(&mut self, id: JobId) -> Option<&mut Job> {
        self.slots.get_mut(id.index())?.as_mut().map(Arc::make_mut)
    }

    /// Every job with its slot, in slot order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (JobId, &Job)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(slot, job)| Some((JobId(slot as u32), job.as_deref()?)))
    }

    /// Every job with its slot, to change, in slot order (each copied first where shared).
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (JobId, &mut Job)> {
        self.slots
            .iter_mut()
            .enumerate()
            .filter_map(|(slot, job)| Some((JobId(slot as u32), Arc::make_mut(job.as_mut()?))))
    }

    /// Makes room for `more` new slots.
    pub(crate) fn reserve(&mut self, more: usize) {
        self.slots.reserve(more);
    }

    /// Puts `job` in the free slot `id`.
    pub(crate) fn put(&mut self, id: JobId, job: Job) {
        debug_assert!(self.slots[id.index()].is_none(), "slot {id:?} is taken");
        self.slots[id.index()] = Some(Arc::new(job));
    }

    /// Puts `job` in a new slot at the end, and returns it.
    pub(crate) fn push(&mut self, job: Job) -> JobId {
        self.slots.push(Some(Arc::new(job)));
        JobId(self.slots.len() as u32 - 1)
    }

    /// Empties slot `id`, returning its job (a copy where another table still shares it).
    pub(crate) fn take(&mut self, id: JobId) -> Option<Job> {
        self.slots
            .get_mut(id.index())?
            .take()
            .map(Arc::unwrap_or_clone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ClusterConfig;
    use crate::event::Event;
    use crate::model::job::JobSpec;
    use crate::state::ClusterState;

    /// The jobs table of a one-node state that took a submission of each of `names`.
    fn table_of(names: &[&str]) -> JobTable {
        let config: ClusterConfig =
            serde_json::from_str(r#"{"nodes": [{"name": "n1", "cpus": 1}]}"#).unwrap();
        let mut state = ClusterState::from_config(config).unwrap();
        for name in names {
            let job = JobSpec::new(*name, 1_000, 1);
            state
                .apply_event(Event::Submit { job }, 0, &mut Vec::new())
                .unwrap();
        }
        state.jobs
    }

    #[test]
    fn a_copy_keeps_its_records_when_the_original_changes_one() {
        let mut table = table_of(&["a", "b"]);
        let copy = table.clone();
        table.get_mut(JobId(1)).unwrap().held = true;
        assert!(table.get(JobId(1)).unwrap().held);
        assert!(!copy.get(JobId(1)).unwrap().held);
        // The record nobody changed is still the one both share.
        assert!(std::ptr::eq(
            table.get(JobId(0)).unwrap(),
            copy.get(JobId(0)).unwrap()
        ));
        assert!(!std::ptr::eq(
            table.get(JobId(1)).unwrap(),
            copy.get(JobId(1)).unwrap()
        ));
    }

    #[test]
    fn a_job_taken_from_a_shared_slot_stays_in_the_copy() {
        let mut table = table_of(&["a"]);
        let copy = table.clone();
        assert_eq!(table.take(JobId(0)).unwrap().spec.id, "a");
        assert!(table.get(JobId(0)).is_none());
        assert_eq!(copy.get(JobId(0)).unwrap().spec.id, "a");
        let other = table_of(&["c"]).take(JobId(0)).unwrap();
        table.put(JobId(0), other);
        assert_eq!(
            table
                .iter()
                .map(|(_, j)| j.spec.id.as_str())
                .collect::<Vec<_>>(),
            ["c"]
        );
    }

    #[test]
    fn the_table_serializes_as_the_list_of_its_slots() {
        let mut table = table_of(&["a", "b"]);
        table.take(JobId(0));
        let json = serde_json::to_value(&table).unwrap();
        let plain: Vec<Option<Job>> = vec![None, Some(table.get(JobId(1)).unwrap().clone())];
        assert_eq!(json, serde_json::to_value(&plain).unwrap());
        // (Derived fields, which a snapshot does not keep, aside: restore builds them.)
        let back: JobTable = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), json);
    }

    #[test]
    fn ids_name_every_slot_free_ones_included_and_iter_the_jobs() {
        let mut table = table_of(&["a", "b", "c"]);
        table.take(JobId(1));
        assert_eq!(table.len(), 3);
        assert_eq!(
            table.ids().collect::<Vec<_>>(),
            [JobId(0), JobId(1), JobId(2)]
        );
        let jobs: Vec<(JobId, &str)> = table
            .iter()
            .map(|(id, job)| (id, job.spec.id.as_str()))
            .collect();
        assert_eq!(jobs, [(JobId(0), "a"), (JobId(2), "c")]);
    }

    #[test]
    fn iter_mut_changes_every_job_and_leaves_a_copy_s_records_alone() {
        let mut table = table_of(&["a", "b", "c"]);
        table.take(JobId(1));
        let copy = table.clone();
        let mut changed = Vec::new();
        for (id, job) in table.iter_mut() {
            job.held = true;
            changed.push(id);
        }
        assert_eq!(changed, [JobId(0), JobId(2)]);
        assert!(table.iter().all(|(_, job)| job.held));
        assert!(copy.iter().all(|(_, job)| !job.held));
    }
}
