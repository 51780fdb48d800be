//! Cluster-wide counted licenses (Slurm's `Licenses=`): configured totals, what running jobs
//! hold, and a job's need compiled at submit.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::error::{ErrorKind, EventError};

/// A job's licenses: (license index, count), by index.
pub(crate) type LicenseNeed = Vec<(usize, u32)>;

/// The licenses of a cluster: names and totals as configured, and how many running jobs hold.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Licenses {
    names: Vec<String>,
    total: Vec<u32>,
    used: Vec<u32>,
}

impl Licenses {
    /// The configured licenses, none held.
    pub(crate) fn new(configured: IndexMap<String, u32>) -> Self {
        let (names, total): (Vec<String>, Vec<u32>) = configured.into_iter().unzip();
        let used = vec![0; total.len()];
        Licenses { names, total, used }
    }

    /// Number of license kinds.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether none is configured.
    pub(crate) fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The configured total of license `index`.
    pub(crate) fn total(&self, index: usize) -> u32 {
        self.total.get(index).copied().unwrap_or(0)
    }

    /// How many of license `index` running jobs hold.
    pub(crate) fn used(&self, index: usize) -> u32 {
        self.used.get(index).copied().unwrap_or(0)
    }

    /// How many of license `index` are free now.
    pub(crate) fn free(&self, index: usize) -> u32 {
        self.total(index).saturating_sub(self.used(index))
    }

    /// Whether `need` is free now.
    pub(crate) fn covers(&self, need: &LicenseNeed) -> bool {
        need.iter().all(|(l, n)| self.free(*l) >= *n)
    }

    /// A job's requested licenses by index: `invalid` for an unknown name or a zero count,
    /// `unsatisfiable` for more than the cluster has.
    pub(crate) fn compile(
        &self,
        job: &str,
        requested: &IndexMap<String, u32>,
    ) -> Result<LicenseNeed, EventError> {
        let mut need = Vec::with_capacity(requested.len());
        for (name, count) in requested {
            let Some(index) = self.names.iter().position(|n| n == name) else {
                return Err(EventError::new(
                    ErrorKind::Invalid,
                    format!("submit {job}: licenses: unknown license \"{name}\""),
                ));
            };
            if *count == 0 {
                return Err(EventError::new(
                    ErrorKind::Invalid,
                    format!("submit {job}: licenses.{name} must be at least 1"),
                ));
            }
            if *count > self.total[index] {
                return Err(EventError::new(
                    ErrorKind::Unsatisfiable,
                    format!(
                        "submit {job}: licenses.{name}: {count} asked, the cluster has {}",
                        self.total[index]
                    ),
                ));
            }
            need.push((index, *count));
        }
        need.sort_unstable();
        Ok(need)
    }

    /// A job starts holding `need`.
    pub(crate) fn take(&mut self, need: &LicenseNeed) {
        for (l, n) in need {
            if let Some(used) = self.used.get_mut(*l) {
                *used += n;
            }
        }
    }

    /// A job stops holding `need`.
    pub(crate) fn give_back(&mut self, need: &LicenseNeed) {
        for (l, n) in need {
            if let Some(used) = self.used.get_mut(*l) {
                *used = used.saturating_sub(*n);
            }
        }
    }

    /// The name of license `index`.
    pub(crate) fn name(&self, index: usize) -> &str {
        self.names.get(index).map_or("", String::as_str)
    }
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn licenses() {
        use crate::{ClusterConfig, Event, Scheduler};
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{"nodes": [{"name": "n1", "cpus": 8}], "licenses": {"matlab": 10}}"#,
        )
        .unwrap();
        let mut s = Scheduler::new(cluster).unwrap();
        let job: Event = serde_json::from_str(
            r#"{"type": "submit", "job": {"id": "j1",
            "time_limit_ms": 100, "groups": [{"count": 1}], "licenses": {"matlab": 4}}}"#,
        )
        .unwrap();
        s.tick(0, vec![job]).unwrap();
        let licenses = s.state().licenses();
        assert_eq!(
            (licenses.name(0), licenses.used(0), licenses.free(0)),
            ("matlab", 4, 6)
        );
    }
}
