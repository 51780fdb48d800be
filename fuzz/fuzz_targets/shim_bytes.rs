//! cargo-fuzz target `shim_bytes`: see `gangway::testkit::fuzz::shim_bytes`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(bug) = gangway::testkit::fuzz::shim_bytes(data) {
        panic!("{bug}");
    }
});
