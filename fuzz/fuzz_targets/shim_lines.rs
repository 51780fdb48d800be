//! cargo-fuzz target `shim_lines`: see `gangway::testkit::fuzz::shim_lines`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(bug) = gangway::testkit::fuzz::shim_lines(data) {
        panic!("{bug}");
    }
});
