//! An index of free capacity: per GPU model, nodes bucketed by how many whole GPUs they have
//! free, so a fit check visits only nodes that could hold the task, best fit first.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use serde::{Deserialize, Serialize};

use crate::model::ids::NodeId;
use crate::model::node::Node;
use crate::model::resources::MAX_DEVICES;
use crate::model::shape::{GpuNeed, TaskShape};

/// Nodes that accept work, bucketed by GPU model ("class") and free whole GPUs ("level").
///
/// The class after the last model holds nodes without GPUs. Visiting a shape walks levels from
/// the fewest free GPUs that can hold one task upwards (best fit: whole free nodes stay free for
/// big gangs), across the allowed models level by level, nodes in id order within a bucket.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FreeIndex {
    classes: Vec<Vec<BTreeSet<NodeId>>>,
    slots: Vec<Option<(usize, usize)>>,
}

impl FreeIndex {
    /// Builds the index over `nodes` with `model_count` GPU models.
    pub fn build(nodes: &[Option<Node>], model_count: usize) -> Self {
        let mut index = FreeIndex {
            classes: vec![vec![BTreeSet::new(); MAX_DEVICES + 1]; model_count + 1],
            slots: Vec::new(),
        };
        for i in 0..nodes.len() {
            index.refresh(nodes, NodeId(i as u32));
        }
        index
    }

    /// Puts node `id` in the bucket matching its current state and free GPUs. The index must have
    /// been built with the node's GPU model known (a new model means a rebuild).
    pub fn refresh(&mut self, nodes: &[Option<Node>], id: NodeId) {
        if self.slots.len() < nodes.len() {
            self.slots.resize(nodes.len(), None);
        }
        if let Some((class, level)) = self.slots[id.index()].take() {
            self.classes[class][level].remove(&id);
        }
        let Some(node) = nodes.get(id.index()).and_then(Option::as_ref) else {
            return;
        };
        if !node.accepts_work() {
            return;
        }
        let class = match node.gpu_model {
            Some(model) if node.gpu_count > 0 => model.index(),
            _ => self.classes.len() - 1,
        };
        let level = node.free_whole_gpus() as usize;
        if let Some(bucket) = self.classes.get_mut(class).and_then(|c| c.get_mut(level)) {
            bucket.insert(id);
            self.slots[id.index()] = Some((class, level));
        }
    }

    /// Visits candidate nodes for one task of `shape`, best fit first, until `f` breaks.
    ///
    /// With `all_levels` every node of an allowed model is visited, busiest first (for planning
    /// at a future time, when GPUs busy now may be free); otherwise only levels with enough free
    /// GPUs now.
    pub fn visit(
        &self,
        shape: &TaskShape,
        all_levels: bool,
        f: &mut dyn FnMut(NodeId) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let gpu_classes = self.classes.len() - 1;
        let (first_level, cpu_only_first) = match shape.gpu {
            GpuNeed::None => (0, true),
            GpuNeed::Whole(k) if !all_levels => (usize::from(k), false),
            GpuNeed::Whole(_) => (0, false),
            GpuNeed::Fraction(_) => (0, false),
        };
        if cpu_only_first {
            for id in &self.classes[gpu_classes][0] {
                f(*id)?;
            }
        }
        for level in first_level..=MAX_DEVICES {
            for class in 0..gpu_classes {
                if shape.gpu != GpuNeed::None && !shape.models.allows(class as u32) {
                    continue;
                }
                for id in &self.classes[class][level] {
                    f(*id)?;
                }
            }
        }
        ControlFlow::Continue(())
    }
}
