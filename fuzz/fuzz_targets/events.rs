//! cargo-fuzz target `events`: see `gangway::testkit::fuzz::events`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(bug) = gangway::testkit::fuzz::events(data) {
        panic!("{bug}");
    }
});
