//! The trace readers: every malformed file is a typed error naming where it went wrong.

use gangway_sim::workload::{alibaba, swf};
use std::io::Cursor;

fn swf_error(text: &str) -> String {
    swf::read(Cursor::new(text.as_bytes()), None)
        .unwrap_err()
        .to_string()
}

const FIELDS: &str = "1 0 -1 60 1 -1 -1 1 120 -1 1 1 1 -1 1 -1 -1 -1";

#[test]
fn swf_malformed_data_line() {
    let text =
        format!("; MaxNodes: 4\n{FIELDS}\n2 0 -1 sixty 1 -1 -1 1 120 -1 1 1 1 -1 1 -1 -1 -1\n");
    let message = swf_error(&text);
    assert!(
        message.starts_with("line 3: field 4 (run time)"),
        "{message}"
    );
    assert!(message.contains("\"sixty\""), "{message}");
}

#[test]
fn swf_bad_header_value() {
    let message = swf_error("; Version: 2.2\n; MaxNodes: lots\n");
    assert!(message.starts_with("line 2: header MaxNodes"), "{message}");
    assert!(message.contains("\"lots\""), "{message}");
}

#[test]
fn swf_wrong_field_count() {
    let text =
        format!("; MaxNodes: 4\n{FIELDS}\n\n2 0 -1 60 1 -1 -1 1 120 -1 1 1 1 -1 1 -1 -1 -1 7\n");
    assert_eq!(swf_error(&text), "line 4: expected 18 fields, found 19");
}

#[test]
fn swf_machine_beyond_the_per_node_maximum() {
    let message = swf_error("; MaxNodes: 3\n; MaxProcs: 366666666666666666\n");
    assert!(
        message.contains("more than the 1048576 supported"),
        "{message}"
    );
}

const NODES: &str = "sn,cpu_milli,memory_mib,gpu,model\nn1,32000,65536,2,T4\n";
const POD_HEADER: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

#[test]
fn alibaba_bad_number_in_the_node_list() {
    let nodes = format!("{NODES}n2,32000,-4,2,T4\n");
    let err = alibaba::read_nodes(Cursor::new(nodes)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "node list line 3: column memory_mib: \"-4\" is not a non-negative integer"
    );
}

#[test]
fn alibaba_bad_number_in_the_pod_list() {
    let pods = format!(
        "{POD_HEADER}p1,4000,8192,1,250,,BE,Running,10,100,12\np2,4000,8192,1,half,,BE,Running,10,100,12\n"
    );
    let err = alibaba::read(Cursor::new(NODES), Cursor::new(pods)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "pod list line 3: column gpu_milli: \"half\" is not a non-negative integer"
    );
}

#[test]
fn alibaba_node_beyond_the_per_node_maximum() {
    let nodes = format!("{NODES}n2,8000,16000,42,a100\n");
    let err = alibaba::read_nodes(Cursor::new(nodes)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "node list line 3: column gpu: 42 is more than the 16 a node may have"
    );
}

#[test]
fn alibaba_node_without_a_name() {
    let nodes = format!("{NODES},8000,16000,4,a100\n");
    let err = alibaba::read_nodes(Cursor::new(nodes)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "node list line 3: column sn: empty node name"
    );
}

#[test]
fn alibaba_missing_column() {
    let err = alibaba::read_nodes(Cursor::new("sn,cpu_milli,gpu,model\nn1,1000,0,\n")).unwrap_err();
    assert_eq!(err.to_string(), "node list: no column \"memory_mib\"");
    let pods = "name,cpu_milli,memory_mib,num_gpu\np1,1000,1024,0\n";
    let err = alibaba::read(Cursor::new(NODES), Cursor::new(pods)).unwrap_err();
    assert_eq!(err.to_string(), "pod list: no column \"gpu_milli\"");
}

#[test]
fn alibaba_row_with_too_few_fields() {
    let nodes = format!("{NODES}n2,32000\n");
    let message = alibaba::read_nodes(Cursor::new(nodes))
        .unwrap_err()
        .to_string();
    assert!(message.starts_with("node list: "), "{message}");
    assert!(message.contains("line: 3"), "{message}");
}
