//! The agent's HTTP request parser (misura-agent's own module, included by
//! path): never a panic, a request never uses more bytes than it was given,
//! and the answer to HEAD has no body.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../../crates/agent/src/http/request.rs"]
#[allow(dead_code)]
mod request;

fuzz_target!(|data: &[u8]| {
    if let request::Parse::Request { head, used } = request::parse(data) {
        assert!(used <= data.len());
        let (resp, _keep) = request::respond(&head, &|| b"# EOF\n".to_vec());
        if head.method == "HEAD" {
            assert!(resp.ends_with(b"\r\n\r\n"));
        }
    }
});
