//! Failing streams as regression tests: [`replay`] reads back the request lines a
//! [`crate::testkit::harness::Failure`] prints (a `configure` line, then `tick` lines) as a
//! cluster and a stream, and [`regression_test`] writes the test to paste.
//!
//! ```
//! use gangway::testkit::replay::replay;
//! let lines = r#"{"op":"configure","cluster":{"nodes":[{"name":"n1","cpus":2}]}}
//! {"op":"tick","at_ms":0,"events":[{"type":"submit","job":{"id":"a","time_limit_ms":1000,"groups":[{"count":1}]}}]}"#;
//! let (cluster, stream) = replay(lines).unwrap();
//! assert_eq!((cluster.nodes.len(), stream.ticks.len(), stream.events()), (1, 1, 1));
//! assert!(replay("{\"op\": \"tick\"}").is_err());
//! ```

use serde_json::Value;

use crate::config::ClusterConfig;
use crate::event::Event;
use crate::testkit::harness::{Stream, StreamEvent, TickStep};

/// Why request lines cannot be replayed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// No line at all.
    #[error("no request lines")]
    Empty,
    /// A line that is not a JSON object.
    #[error("line {line}: not JSON: {message}")]
    NotJson {
        /// The line's number, from 1.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// The first line is not `configure`, or a later one not `tick`.
    #[error("line {line}: expected op {expected:?}")]
    WrongOp {
        /// The line's number, from 1.
        line: usize,
        /// The op it should have.
        expected: &'static str,
    },
    /// A field that is missing or not what the protocol says.
    #[error("line {line}: field {field}: {message}")]
    BadField {
        /// The line's number, from 1.
        line: usize,
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
}

/// The cluster and the stream (of raw events) of request lines; blank lines are skipped.
pub fn replay(lines: &str) -> Result<(ClusterConfig, Stream), ReplayError> {
    let mut lines = lines
        .lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim()))
        .filter(|(_, line)| !line.is_empty());
    let (line, configure) = lines.next().ok_or(ReplayError::Empty)?;
    let configure = request(line, configure, "configure")?;
    let cluster = field(line, &configure, "cluster")?;
    let mut ticks = Vec::new();
    for (line, text) in lines {
        let tick = request(line, text, "tick")?;
        let at_ms = field(line, &tick, "at_ms")?;
        let events: Vec<Event> = field(line, &tick, "events")?;
        let events = events.into_iter().map(StreamEvent::Raw).collect();
        ticks.push(TickStep { at_ms, events });
    }
    Ok((cluster, Stream { ticks }))
}

fn request(line: usize, text: &str, expected: &'static str) -> Result<Value, ReplayError> {
    let value: Value = serde_json::from_str(text).map_err(|e| ReplayError::NotJson {
        line,
        message: e.to_string(),
    })?;
    if value.get("op").and_then(Value::as_str) != Some(expected) {
        return Err(ReplayError::WrongOp { line, expected });
    }
    Ok(value)
}

fn field<T: serde::de::DeserializeOwned>(
    line: usize,
    request: &Value,
    name: &'static str,
) -> Result<T, ReplayError> {
    let value = request.get(name).cloned().ok_or(ReplayError::BadField {
        line,
        field: name,
        message: "missing".to_string(),
    })?;
    serde_json::from_value(value).map_err(|e| ReplayError::BadField {
        line,
        field: name,
        message: e.to_string(),
    })
}

/// A regression test that replays `lines` with every check of `check_stream`, to paste into a
/// test file (its profile `make_profile` is the caller's to write).
///
/// ```
/// use gangway::testkit::replay::regression_test;
/// let test = regression_test(&[r#"{"op":"configure"}"#.to_string()]);
/// assert!(test.contains("replay(r#\"") && test.contains("check_stream("));
/// ```
pub fn regression_test(lines: &[String]) -> String {
    let hashes = "#".repeat(raw_hashes(lines));
    let mut test = String::new();
    test.push_str("#[test]\nfn regression() {\n");
    test.push_str("    use gangway::testkit::harness::{ProfileChecks, check_stream};\n");
    test.push_str(&format!(
        "    let (cluster, stream) = gangway::testkit::replay::replay(r{hashes}\"\n"
    ));
    for line in lines {
        test.push_str(line);
        test.push('\n');
    }
    test.push_str(&format!("\"{hashes}).unwrap();\n"));
    test.push_str("    let checks = ProfileChecks::new(1, stream.ticks.len());\n");
    test.push_str(
        "    check_stream(&cluster, &make_profile, &stream, checks).unwrap_or_else(|f| panic!(\"{f}\"));\n",
    );
    test.push_str("}\n");
    test
}

/// How many `#` a raw string around `lines` needs: one more than the longest run after a `"`.
fn raw_hashes(lines: &[String]) -> usize {
    let longest = lines
        .iter()
        .flat_map(|line| line.split('"').skip(1))
        .map(|after| after.chars().take_while(|&c| c == '#').count())
        .max()
        .unwrap_or(0);
    longest + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIGURE: &str = r#"{"op":"configure","cluster":{"nodes":[{"name":"n1","cpus":2}]}}"#;

    #[test]
    fn bad_lines_are_typed_errors_naming_the_line() {
        assert_eq!(replay(" \n"), Err(ReplayError::Empty));
        assert!(matches!(
            replay("{"),
            Err(ReplayError::NotJson { line: 1, .. })
        ));
        let tick_first = r#"{"op":"tick","at_ms":0,"events":[]}"#;
        assert_eq!(
            replay(tick_first),
            Err(ReplayError::WrongOp {
                line: 1,
                expected: "configure"
            })
        );
        let no_time = format!("{CONFIGURE}\n\n{{\"op\":\"tick\",\"events\":[]}}");
        assert!(matches!(
            replay(&no_time),
            Err(ReplayError::BadField {
                line: 3,
                field: "at_ms",
                ..
            })
        ));
        let bad_event = format!("{CONFIGURE}\n{{\"op\":\"tick\",\"at_ms\":0,\"events\":[1]}}");
        assert!(matches!(
            replay(&bad_event),
            Err(ReplayError::BadField {
                line: 2,
                field: "events",
                ..
            })
        ));
    }

    #[test]
    fn a_regression_test_quotes_lines_that_hold_quotes_and_hashes() {
        let lines = vec![CONFIGURE.to_string(), r##"{"x":"a"#"}"##.to_string()];
        let test = regression_test(&lines);
        assert!(
            test.contains("replay(r##\"\n") && test.contains("\n\"##).unwrap();"),
            "{test}"
        );
    }
}
