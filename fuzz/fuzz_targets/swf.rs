//! cargo-fuzz target `swf`: see `gangway::testkit::fuzz::swf`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(bug) = gangway::testkit::fuzz::swf(data) {
        panic!("{bug}");
    }
});
