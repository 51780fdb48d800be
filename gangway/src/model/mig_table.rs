//! The per-GPU layouts of NVIDIA mig-parted's default configurations (`config-default.yaml`),
//! for the GPU families with a table: A100-40GB, A100-80GB and H100-80GB, H200-141GB.
//!
//! A node may name one of these configurations (`"mig_config": "all-1g.10gb"`) instead of
//! listing its slices; every GPU of the node then gets the configuration's slices, numbered in
//! the order listed here. The family comes from the GPU model name (`a100-40gb`, `a100-80gb`,
//! `h100`, `h200`, …, any case; a bare `a100` is told apart by `gpus.memory_mib`).

/// Configuration name → (profile, slices per GPU) in slice order.
type Configs = &'static [(&'static str, &'static [(&'static str, u32)])];

/// A GPU family with a MIG table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MigFamily {
    /// A100 40GB.
    A100Gb40,
    /// A100 80GB and H100 80GB (the same profiles).
    Gb80,
    /// H200 141GB.
    H200Gb141,
}

const A100_40GB: Configs = &[
    ("all-disabled", &[]),
    ("all-1g.5gb", &[("1g.5gb", 7)]),
    ("all-1g.5gb.me", &[("1g.5gb+me", 1)]),
    ("all-1g.10gb", &[("1g.10gb", 4)]),
    ("all-2g.10gb", &[("2g.10gb", 3)]),
    ("all-3g.20gb", &[("3g.20gb", 2)]),
    ("all-4g.20gb", &[("4g.20gb", 1)]),
    ("all-7g.40gb", &[("7g.40gb", 1)]),
    (
        "all-balanced",
        &[("1g.5gb", 2), ("2g.10gb", 1), ("3g.20gb", 1)],
    ),
];

const GB80: Configs = &[
    ("all-disabled", &[]),
    ("all-1g.10gb", &[("1g.10gb", 7)]),
    ("all-1g.10gb.me", &[("1g.10gb+me", 1)]),
    ("all-1g.20gb", &[("1g.20gb", 4)]),
    ("all-2g.20gb", &[("2g.20gb", 3)]),
    ("all-3g.40gb", &[("3g.40gb", 2)]),
    ("all-4g.40gb", &[("4g.40gb", 1)]),
    ("all-7g.80gb", &[("7g.80gb", 1)]),
    (
        "all-balanced",
        &[("1g.10gb", 2), ("2g.20gb", 1), ("3g.40gb", 1)],
    ),
];

const H200_141GB: Configs = &[
    ("all-disabled", &[]),
    ("all-1g.18gb", &[("1g.18gb", 7)]),
    ("all-1g.18gb.me", &[("1g.18gb+me", 1)]),
    ("all-1g.35gb", &[("1g.35gb", 4)]),
    ("all-2g.35gb", &[("2g.35gb", 3)]),
    ("all-3g.71gb", &[("3g.71gb", 2)]),
    ("all-4g.71gb", &[("4g.71gb", 1)]),
    ("all-7g.141gb", &[("7g.141gb", 1)]),
    (
        "all-balanced",
        &[("1g.18gb", 2), ("2g.35gb", 1), ("3g.71gb", 1)],
    ),
];

/// A GPU model without a known MIG table, from [`MigFamily::of`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum MigFamilyError {
    /// An A100 whose memory (40 or 80 GB) neither its name nor `memory_mib` gives.
    #[error(
        "GPU model \"{0}\": say 40gb or 80gb in the model name, or give gpus.memory_mib, to pick \
         its MIG table"
    )]
    AmbiguousA100(String),
    /// A model with no MIG table.
    #[error(
        "GPU model \"{0}\" has no MIG table (known: A100-40GB, A100-80GB, H100-80GB, \
         H200-141GB); list its slices in gpus.mig instead"
    )]
    Unknown(String),
}

/// GPUs of more than this much memory (MiB) are the 80GB A100.
const A100_40GB_MAX_MIB: u64 = 48 * 1024;

impl MigFamily {
    /// The family of GPU `model` (any case) with `memory_mib` per device (0: unknown).
    pub(crate) fn of(model: &str, memory_mib: u64) -> Result<Self, MigFamilyError> {
        let name = model.to_ascii_lowercase();
        if name.contains("h200") {
            return Ok(MigFamily::H200Gb141);
        }
        if name.contains("h100") && !name.contains("nvl") && !name.contains("96gb") {
            return Ok(MigFamily::Gb80);
        }
        if name.contains("a100") {
            if name.contains("40gb") {
                return Ok(MigFamily::A100Gb40);
            }
            if name.contains("80gb") {
                return Ok(MigFamily::Gb80);
            }
            return match memory_mib {
                0 => Err(MigFamilyError::AmbiguousA100(model.to_string())),
                m if m <= A100_40GB_MAX_MIB => Ok(MigFamily::A100Gb40),
                _ => Ok(MigFamily::Gb80),
            };
        }
        Err(MigFamilyError::Unknown(model.to_string()))
    }

    fn configs(self) -> Configs {
        match self {
            MigFamily::A100Gb40 => A100_40GB,
            MigFamily::Gb80 => GB80,
            MigFamily::H200Gb141 => H200_141GB,
        }
    }

    /// The names of the family's mig-parted configurations, in table order.
    #[cfg(any(test, feature = "testkit"))]
    pub(crate) fn config_names(self) -> impl Iterator<Item = &'static str> {
        self.configs().iter().map(|(name, _)| *name)
    }

    /// Whether `profile` is one of the family's MIG profiles.
    pub(crate) fn has_profile(self, profile: &str) -> bool {
        self.configs()
            .iter()
            .any(|(_, slices)| slices.iter().any(|(p, _)| *p == profile))
    }
}

/// A mig-parted configuration name the GPU's MIG table does not have, from [`config_slices`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown MIG configuration \"{config}\" for this GPU (known: {})", known.join(", "))]
pub(crate) struct UnknownMigConfig {
    /// The name asked for.
    pub config: String,
    /// The configurations the GPU's family has.
    pub known: Vec<&'static str>,
}

/// The slices one GPU gets under mig-parted configuration `config`, as profile names in slice
/// order (empty for `all-disabled`).
pub(crate) fn config_slices(
    family: MigFamily,
    config: &str,
) -> Result<Vec<&'static str>, UnknownMigConfig> {
    let configs = family.configs();
    let (_, slices) = configs
        .iter()
        .find(|(name, _)| *name == config)
        .ok_or_else(|| UnknownMigConfig {
            config: config.to_string(),
            known: configs.iter().map(|(name, _)| *name).collect(),
        })?;
    Ok(slices
        .iter()
        .flat_map(|(profile, count)| std::iter::repeat_n(*profile, *count as usize))
        .collect())
}

/// Whether `profile` reads as a MIG profile name: `<N>g.<M>gb`, optionally followed by `+…` or
/// `-…` (media extensions).
pub(crate) fn is_profile_name(profile: &str) -> bool {
    let base = profile.split(['+', '-']).next().unwrap_or("");
    let Some((compute, memory)) = base.split_once("g.") else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(compute) && memory.strip_suffix("gb").is_some_and(digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_has_the_seven_slice_config_and_balanced_fills_seven_compute_slices() {
        for family in [MigFamily::A100Gb40, MigFamily::Gb80, MigFamily::H200Gb141] {
            let balanced = config_slices(family, "all-balanced").unwrap();
            let compute: u32 = balanced
                .iter()
                .map(|p| p.split('g').next().unwrap().parse::<u32>().unwrap())
                .sum();
            assert_eq!(compute, 7, "{family:?}");
            for (_, slices) in family.configs() {
                for (profile, _) in *slices {
                    assert!(is_profile_name(profile), "{profile}");
                }
            }
        }
        assert_eq!(
            config_slices(MigFamily::H200Gb141, "all-1g.18gb")
                .unwrap()
                .len(),
            7
        );
        assert_eq!(
            config_slices(MigFamily::A100Gb40, "all-3g.20gb").unwrap(),
            vec!["3g.20gb"; 2]
        );
        assert!(
            config_slices(MigFamily::Gb80, "all-disabled")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn unknown_config_lists_the_known_ones() {
        let err = config_slices(MigFamily::Gb80, "all-9g.90gb").unwrap_err();
        assert_eq!(err.config, "all-9g.90gb");
        assert!(err.known.contains(&"all-balanced"), "{err}");
        let message = err.to_string();
        assert!(
            message.contains("all-9g.90gb") && message.contains("all-balanced"),
            "{message}"
        );
    }
}

/// The examples of this module's documentation from when it was public, as unit tests.
#[cfg(test)]
mod examples {
    #[test]
    fn module_example() {
        use crate::model::mig_table::{MigFamily, config_slices};
        let family = MigFamily::of("a100-80gb", 0).unwrap();
        assert_eq!(
            config_slices(family, "all-1g.10gb").unwrap(),
            vec!["1g.10gb"; 7]
        );
        assert_eq!(
            config_slices(family, "all-balanced").unwrap(),
            vec!["1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"]
        );
        assert!(config_slices(family, "all-1g.5gb").is_err()); // a 40GB configuration
        assert!(MigFamily::of("v100", 0).is_err());
    }

    #[test]
    fn mig_family_error() {
        use crate::model::mig_table::{MigFamily, MigFamilyError};
        assert_eq!(
            MigFamily::of("v100", 0),
            Err(MigFamilyError::Unknown("v100".into()))
        );
    }

    #[test]
    fn of() {
        use crate::model::mig_table::MigFamily;
        assert_eq!(
            MigFamily::of("NVIDIA A100-SXM4-40GB", 0),
            Ok(MigFamily::A100Gb40)
        );
        assert_eq!(MigFamily::of("a100", 81920), Ok(MigFamily::Gb80));
        assert_eq!(MigFamily::of("H100", 0), Ok(MigFamily::Gb80));
        assert!(MigFamily::of("a100", 0).is_err()); // 40 or 80 GB?
    }

    #[test]
    fn config_names() {
        use crate::model::mig_table::MigFamily;
        let names: Vec<&str> = MigFamily::H200Gb141.config_names().collect();
        assert_eq!((names[0], names.len()), ("all-disabled", 9));
        assert!(names.contains(&"all-1g.18gb"));
    }

    #[test]
    fn has_profile() {
        use crate::model::mig_table::MigFamily;
        assert!(MigFamily::H200Gb141.has_profile("3g.71gb"));
        assert!(!MigFamily::H200Gb141.has_profile("3g.40gb"));
    }

    #[test]
    fn is_profile_name() {
        use crate::model::mig_table::is_profile_name;
        assert!(is_profile_name("1g.10gb") && is_profile_name("1g.10gb+me"));
        assert!(!is_profile_name("1g") && !is_profile_name("a100"));
    }
}
