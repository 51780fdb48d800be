//! cargo-fuzz target `swf`: see `gangway_sim::fuzz::swf`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(bug) = gangway_sim::fuzz::swf(data) {
        panic!("{bug}");
    }
});
