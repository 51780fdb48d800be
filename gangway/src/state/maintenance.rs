//! Maintenance windows: named nodes that take no work overlapping `[start_ms, end_ms)`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::ClusterState;
use crate::config::MaintenanceConfig;
use crate::error::{ConfigError, ErrorKind, EventError};
use crate::model::ids::NodeId;

/// One window: its nodes and `[start_ms, end_ms)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Window {
    /// The nodes it covers, in id order.
    pub nodes: Vec<NodeId>,
    /// Start.
    pub start_ms: u64,
    /// End (exclusive).
    pub end_ms: u64,
}

/// The declared maintenance windows by id.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Maintenance {
    windows: BTreeMap<String, Window>,
}

impl Maintenance {
    /// Whether a job on `node` over `[start, end)` would overlap a window. Asked per candidate
    /// node of every placement: inlined where there is no window, it costs a check.
    #[inline]
    pub(crate) fn blocks(&self, node: NodeId, start: u64, end: u64) -> bool {
        self.overlapping(start, end)
            .any(|w| w.nodes.binary_search(&node).is_ok())
    }

    /// The nodes a job over `[start, end)` would overlap a window on (with repeats).
    pub(crate) fn blocked(&self, start: u64, end: u64) -> impl Iterator<Item = NodeId> + '_ {
        self.overlapping(start, end)
            .flat_map(|w| w.nodes.iter().copied())
    }

    /// The windows overlapping `[start, end)`.
    fn overlapping(&self, start: u64, end: u64) -> impl Iterator<Item = &Window> + '_ {
        self.windows
            .values()
            .filter(move |w| start < w.end_ms && w.start_ms < end)
    }

    /// Window ends, earliest first (with repeats).
    pub(crate) fn ends(&self) -> impl Iterator<Item = u64> + '_ {
        let mut ends: Vec<u64> = self.windows.values().map(|w| w.end_ms).collect();
        ends.sort_unstable();
        ends.into_iter()
    }

    /// Adds or replaces the window `id`.
    pub(crate) fn insert(&mut self, id: String, window: Window) {
        self.windows.insert(id, window);
    }

    /// The window `id`.
    pub(crate) fn get(&self, id: &str) -> Option<&Window> {
        self.windows.get(id)
    }

    /// Forgets windows that ended by `now`.
    pub(crate) fn drop_past(&mut self, now: u64) {
        self.windows.retain(|_, w| w.end_ms > now);
    }
}

impl ClusterState {
    /// Builds the configured windows; errors name the field (`maintenance[I].nodes[J]`).
    pub(super) fn build_maintenance(
        &mut self,
        windows: &[MaintenanceConfig],
    ) -> Result<(), ConfigError> {
        for (i, cfg) in windows.iter().enumerate() {
            let id = cfg
                .id
                .clone()
                .unwrap_or_else(|| format!("maintenance[{i}]"));
            if id.is_empty() {
                return Err(ConfigError::new(
                    format!("maintenance[{i}].id"),
                    "must not be empty",
                ));
            }
            if self.maintenance.get(&id).is_some() {
                return Err(ConfigError::new(
                    format!("maintenance[{i}].id"),
                    format!("duplicate id \"{id}\""),
                ));
            }
            let window = self.window(&cfg.nodes, cfg.start_ms, cfg.end_ms).map_err(
                |(_, field, message)| {
                    ConfigError::new(format!("maintenance[{i}].{field}"), message)
                },
            )?;
            self.maintenance.insert(id, window);
        }
        Ok(())
    }

    /// `maintenance_add`: a new window.
    pub(super) fn add_maintenance(
        &mut self,
        id: String,
        nodes: &[String],
        start_ms: u64,
        end_ms: u64,
    ) -> Result<(), EventError> {
        if id.is_empty() {
            return Err(EventError::new(
                ErrorKind::Invalid,
                "maintenance_add: id must not be empty",
            ));
        }
        if self.maintenance.get(&id).is_some() {
            return Err(EventError::new(
                ErrorKind::Invalid,
                format!("maintenance_add {id}: a window with this id exists"),
            ));
        }
        let window = self
            .window(nodes, start_ms, end_ms)
            .map_err(|(kind, field, message)| {
                EventError::new(kind, format!("maintenance_add {id}: {field}: {message}"))
            })?;
        self.maintenance.insert(id, window);
        Ok(())
    }

    /// `maintenance_remove`: forgets a window.
    pub(super) fn remove_maintenance(&mut self, id: &str) -> Result<(), EventError> {
        match self.maintenance.windows.remove(id) {
            Some(_) => Ok(()),
            None => Err(EventError::new(
                ErrorKind::UnknownMaintenance,
                format!("maintenance_remove: no window \"{id}\""),
            )),
        }
    }

    /// A checked window; errors are (kind, field, message).
    fn window(
        &self,
        nodes: &[String],
        start_ms: u64,
        end_ms: u64,
    ) -> Result<Window, (ErrorKind, String, String)> {
        if nodes.is_empty() {
            return Err((
                ErrorKind::Invalid,
                "nodes".into(),
                "must name at least one node".into(),
            ));
        }
        if end_ms <= start_ms {
            return Err((
                ErrorKind::Invalid,
                "end_ms".into(),
                format!("{end_ms} is not after start_ms {start_ms}"),
            ));
        }
        let mut ids = Vec::with_capacity(nodes.len());
        for (j, name) in nodes.iter().enumerate() {
            let id = self.node_names.get(name).ok_or_else(|| {
                (
                    ErrorKind::UnknownNode,
                    format!("nodes[{j}]"),
                    format!("unknown node \"{name}\""),
                )
            })?;
            ids.push(id);
        }
        ids.sort_unstable();
        ids.dedup();
        Ok(Window {
            nodes: ids,
            start_ms,
            end_ms,
        })
    }
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn maintenance() {
        use crate::{ClusterConfig, Scheduler};
        let cluster: ClusterConfig = serde_json::from_str(
            r#"{
            "nodes": [{"name": "n1", "cpus": 1}, {"name": "n2", "cpus": 1}],
            "maintenance": [{"id": "fw", "nodes": ["n1"], "start_ms": 100, "end_ms": 200}]}"#,
        )
        .unwrap();
        let s = Scheduler::new(cluster).unwrap();
        let (m, n1, n2) = (
            s.state().maintenance(),
            s.state().node_by_name("n1").unwrap().id(),
            s.state().node_by_name("n2").unwrap().id(),
        );
        assert!(m.blocks(n1, 50, 150));
        assert!(!m.blocks(n1, 0, 100)); // ends as the window starts
        assert!(!m.blocks(n2, 50, 150));
    }
}
