//! Interned ids: small `Copy` newtypes used everywhere inside; strings live only at the edges.

use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The id as an index into the table that owns it.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// A job's slot in the scheduler's job table.
    JobId
);
id_type!(
    /// A node's slot in the node table.
    NodeId
);
id_type!(
    /// An interned GPU model name.
    ModelId
);
id_type!(
    /// A partition's index.
    PartitionId
);
id_type!(
    /// A topology domain (one label value at one level of the cluster's topology).
    DomainId
);
id_type!(
    /// An interned MIG profile name (`1g.10gb`, …).
    MigProfileId
);
