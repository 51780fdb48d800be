//! cargo-fuzz target `alibaba_csv`: see `gangway_sim::fuzz::alibaba_csv`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(bug) = gangway_sim::fuzz::alibaba_csv(data) {
        panic!("{bug}");
    }
});
