//! MIG at the state's edges: a node entry's slices (listed in `gpus.mig`, or named by a
//! mig-parted configuration in `gpus.mig_config`) checked and interned, and a task group's
//! `mig` profile compiled into a [`GpuNeed`].

use super::ClusterState;
use crate::config::GpuConfig;
use crate::error::{ErrorKind, EventError};
use crate::model::ids::MigProfileId;
use crate::model::mig::{GPU_COMPUTE_SLICES, MAX_MIG_SLICES, MigLayout, MigSlice};
use crate::model::mig_table::{MigFamily, config_slices, is_profile_name};
use crate::model::shape::GpuNeed;

/// A node's slices before interning: (gpu, slice, profile), sorted.
pub(super) type MigPlan = Vec<(u32, u32, String)>;

/// Checks a node's MIG entries and lists its slices sorted by GPU then slice; errors are
/// (field, message) as for the rest of a node entry.
pub(super) fn plan(g: &GpuConfig) -> Result<MigPlan, (String, String)> {
    let family = MigFamily::of(&g.model, g.memory_mib);
    let mut slices: MigPlan = Vec::new();
    if let Some(config) = &g.mig_config {
        let field = || "gpus.mig_config".to_string();
        if !g.mig.is_empty() {
            return Err((
                field(),
                "give either gpus.mig or gpus.mig_config, not both".into(),
            ));
        }
        let per_gpu = config_slices(
            family.clone().map_err(|e| (field(), e.to_string()))?,
            config,
        )
        .map_err(|e| (field(), e.to_string()))?;
        for gpu in 0..g.count {
            for (slice, profile) in per_gpu.iter().enumerate() {
                slices.push((gpu, slice as u32, (*profile).to_string()));
            }
        }
    }
    for (i, m) in g.mig.iter().enumerate() {
        let field = || format!("gpus.mig[{i}]");
        if m.gpu >= g.count {
            return Err((
                field(),
                format!(
                    "gpu {} is out of range: the node has {} GPUs",
                    m.gpu, g.count
                ),
            ));
        }
        let known = match &family {
            Ok(family) => family.has_profile(&m.profile),
            Err(_) => is_profile_name(&m.profile),
        };
        if !known {
            return Err((
                field(),
                format!(
                    "unknown MIG profile \"{}\" for GPU model \"{}\"",
                    m.profile, g.model
                ),
            ));
        }
        slices.push((m.gpu, m.slice, m.profile.clone()));
    }
    slices.sort();
    if slices.len() > MAX_MIG_SLICES {
        return Err((
            "gpus.mig".into(),
            format!(
                "{} MIG slices; at most {MAX_MIG_SLICES} per node",
                slices.len()
            ),
        ));
    }
    for pair in slices.windows(2) {
        if pair[0].0 == pair[1].0 && pair[0].1 == pair[1].1 {
            return Err((
                "gpus.mig".into(),
                format!("gpu {} slice {} is listed twice", pair[0].0, pair[0].1),
            ));
        }
    }
    for gpu in 0..g.count {
        let compute: u32 = slices
            .iter()
            .filter(|s| s.0 == gpu)
            .map(|s| compute_slices(&s.2))
            .sum();
        if compute > GPU_COMPUTE_SLICES {
            return Err((
                "gpus.mig".into(),
                format!(
                    "the slices of gpu {gpu} take {compute} compute slices; a GPU has \
                     {GPU_COMPUTE_SLICES}"
                ),
            ));
        }
    }
    Ok(slices)
}

/// The compute slices of a well-formed profile name (`3` for `3g.40gb`).
fn compute_slices(profile: &str) -> u32 {
    profile
        .split('g')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

impl ClusterState {
    /// Interns the profiles of a checked plan into the node's layout.
    pub(super) fn intern_mig(&mut self, plan: &MigPlan) -> MigLayout {
        let slices = plan
            .iter()
            .map(|(gpu, slice, profile)| MigSlice {
                gpu: *gpu,
                slice: *slice,
                profile: self.intern_mig_profile(profile),
                compute: compute_slices(profile),
            })
            .collect();
        MigLayout { slices }
    }

    fn intern_mig_profile(&mut self, name: &str) -> MigProfileId {
        if let Some(i) = self.mig_profiles.iter().position(|p| p == name) {
            return MigProfileId(i as u32);
        }
        self.mig_profiles.push(name.to_string());
        MigProfileId(self.mig_profiles.len() as u32 - 1)
    }

    /// The GPU need of a task group asking for a `profile` slice, `gpus` thousandths also asked
    /// (must be 0); `at` names the group in errors.
    pub(super) fn mig_need(
        &self,
        at: super::submit::GroupAt<'_>,
        gpus: u64,
        profile: &str,
    ) -> Result<GpuNeed, EventError> {
        if gpus != 0 {
            return Err(EventError::new(
                ErrorKind::Invalid,
                format!("{at}: gpus and mig are both set; a MIG task holds one slice, no GPU"),
            ));
        }
        if !is_profile_name(profile) {
            return Err(EventError::new(
                ErrorKind::Invalid,
                format!("{at}.mig \"{profile}\" is not a MIG profile name (like 1g.10gb)"),
            ));
        }
        match self.mig_profiles.iter().position(|p| p == profile) {
            Some(i) => Ok(GpuNeed::Mig(MigProfileId(i as u32))),
            None => Err(EventError::new(
                ErrorKind::Unsatisfiable,
                format!("{at}: no node has MIG profile \"{profile}\""),
            )),
        }
    }

    /// The name of an interned MIG profile (empty for an unknown id).
    pub fn mig_profile_name(&self, profile: MigProfileId) -> &str {
        self.mig_profiles
            .get(profile.index())
            .map_or("", String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MigDeviceConfig;

    fn gpus(model: &str, count: u32) -> GpuConfig {
        GpuConfig {
            model: model.into(),
            count,
            ..GpuConfig::default()
        }
    }

    #[test]
    fn shorthand_gives_every_gpu_the_configuration() {
        let mut g = gpus("h100-80gb", 2);
        g.mig_config = Some("all-balanced".into());
        let plan = plan(&g).unwrap();
        assert_eq!(plan.len(), 8);
        assert_eq!(plan[4], (1, 0, "1g.10gb".to_string()));
        assert_eq!(plan[7], (1, 3, "3g.40gb".to_string()));
    }

    #[test]
    fn explicit_slices_are_checked() {
        let slice = |gpu, slice, profile: &str| MigDeviceConfig {
            gpu,
            slice,
            profile: profile.into(),
            ..MigDeviceConfig::default()
        };
        let mut g = gpus("a100-80gb", 1);
        g.mig = vec![slice(0, 0, "3g.40gb"), slice(0, 1, "4g.40gb")];
        assert_eq!(plan(&g).unwrap().len(), 2);
        g.mig.push(slice(0, 2, "1g.10gb"));
        assert!(plan(&g).unwrap_err().1.contains("8 compute slices"));
        g.mig = vec![slice(0, 0, "1g.10gb"), slice(0, 0, "1g.10gb")];
        assert!(plan(&g).unwrap_err().1.contains("listed twice"));
        g.mig = vec![slice(0, 0, "1g.5gb")];
        assert_eq!(plan(&g).unwrap_err().0, "gpus.mig[0]");
        // A model without a table takes any well-formed profile (e.g. an A30's).
        let mut a30 = gpus("a30", 1);
        a30.mig = vec![slice(0, 0, "1g.6gb")];
        assert!(plan(&a30).is_ok());
        a30.mig_config = Some("all-1g.6gb".into());
        a30.mig.clear();
        assert!(plan(&a30).unwrap_err().1.contains("no MIG table"));
    }
}
