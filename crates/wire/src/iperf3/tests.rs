use super::*;

/// What Debian's iperf3 3.12 sent for `-u -b 10M -P 2 -t 1` (from `-d`).
const PARAMS_312: &str = r#"{"udp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":2,"len":32768,"bandwidth":10000000,"pacing_timer":1000,"client_version":"3.12"}"#;
/// Its server's results for that test (-1 written as 2^64 − 1).
const RESULTS_312: &str = r#"{"cpu_util_total":0.13016277344679422,"cpu_util_user":0.13016277344679422,"cpu_util_system":0,"sender_has_retransmits":1.8446744073709552e+19,"streams":[{"id":1,"bytes":1277952,"retransmits":1.8446744073709552e+19,"jitter":4.1186820536738241e-06,"errors":0,"packets":39,"start_time":0,"end_time":1.00028},{"id":3,"bytes":1277952,"retransmits":18446744073709551615,"jitter":3.2e-06,"errors":0,"packets":39,"start_time":0,"end_time":1.0003}]}"#;

#[test]
fn states_round_trip_and_unknown_bytes_are_named() {
    for (s, b) in State::ALL {
        assert_eq!(s.byte(), b as u8);
        assert_eq!(State::from_byte(b as u8), Ok(s));
    }
    assert_eq!(State::from_byte(0xff), Ok(State::AccessDenied));
    assert_eq!(State::ParamExchange.byte(), 9);
    let e = State::from_byte(3).unwrap_err();
    assert_eq!(e, Iperf3Error::UnknownState(3));
    assert!(e.to_string().contains("state byte 3"));
}

#[test]
fn cookies_are_36_characters_and_a_nul() {
    let c = Cookie::from_random(&[255; 36]);
    assert_eq!(c.0[36], 0);
    assert!(c.as_str().bytes().all(|b| COOKIE_CHARS.contains(&b)));
    assert_eq!(Cookie::parse(&c.0), Ok(c));
    assert!(Cookie::parse(&c.0[..36]).is_err());
    let mut bad = c.0;
    bad[36] = b'a';
    assert_eq!(
        Cookie::parse(&bad),
        Err(Iperf3Error::BadCookie("its 37th byte is not NUL"))
    );
    bad = c.0;
    bad[3] = 0x01;
    assert!(Cookie::parse(&bad).is_err());
}

#[test]
fn json_lengths_are_bounded() {
    assert_eq!(json_len(10u32.to_be_bytes()), Ok(10));
    assert_eq!(json_len([0; 4]), Err(Iperf3Error::JsonEmpty));
    let e = json_len(u32::MAX.to_be_bytes()).unwrap_err();
    assert!(e.to_string().contains("262144-byte bound"), "{e}");
    let f = frame_json("{}").unwrap();
    assert_eq!(f, [0, 0, 0, 2, b'{', b'}']);
}

#[test]
fn parameters_of_iperf3_3_12_parse_and_round_trip() {
    let p = Params::parse(PARAMS_312.as_bytes()).unwrap();
    assert_eq!(p.protocol, Protocol::Udp);
    assert_eq!(
        (p.time, p.parallel, p.len, p.bandwidth),
        (1, 2, Some(32768), Some(10_000_000))
    );
    assert_eq!(p.client_version.as_deref(), Some("3.12"));
    assert!(!p.reverse && !p.bidirectional);
    assert_eq!(p.senders(), (2, 0));
    assert_eq!(Params::parse(p.to_json().as_bytes()), Ok(p));
    let tcp =
        Params::parse(br#"{"tcp":true,"time":10,"parallel":4,"reverse":true,"window":262144}"#)
            .unwrap();
    assert_eq!(
        (tcp.protocol, tcp.senders(), tcp.window),
        (Protocol::Tcp, (0, 4), Some(262144))
    );
    let bidir = Params {
        bidirectional: true,
        parallel: 3,
        ..Default::default()
    };
    assert_eq!(bidir.senders(), (3, 3));
}

#[test]
fn bad_parameters_name_the_field_and_bound() {
    let e = |s: &str| Params::parse(s.as_bytes()).unwrap_err().to_string();
    assert!(e(r#"{"tcp":true,"parallel":129}"#)
        .contains("`parallel` = 129 is out of range (at most 128)"));
    assert!(e(r#"{"tcp":true,"time":86401}"#).contains("`time`"));
    assert!(e(r#"{"udp":true,"len":65508}"#).contains("at most 65507"));
    assert!(e(r#"{"tcp":true,"len":-5}"#).contains("wrong type"));
    assert!(e(r#"{"tcp":true,"time":"ten"}"#).contains("wrong type"));
    let long = format!(r#"{{"client_version":"{}"}}"#, "9".repeat(300));
    assert!(e(&long).contains("`client_version`"));
    assert!(e("[1,2]").contains("not a JSON object"));
    assert!(e("{\"tcp\":").contains("not valid JSON"));
    let deep = "[".repeat(10_000);
    assert!(
        e(&deep).contains("not valid JSON"),
        "deep nesting is refused, not a stack overflow"
    );
}

#[test]
fn results_of_iperf3_3_12_parse_and_round_trip() {
    let r = Results::parse(RESULTS_312.as_bytes()).unwrap();
    assert_eq!(r.sender_has_retransmits, -1);
    assert_eq!(r.streams.len(), 2);
    assert_eq!((r.streams[0].id, r.streams[1].id), (1, 3));
    assert_eq!(r.streams[1].retransmits, -1);
    assert_eq!(r.bytes(), 2 * 1_277_952);
    assert_eq!(r.streams[0].end_time, Some(1.00028));
    assert_eq!(Results::parse(r.to_json().as_bytes()), Ok(r));
}

#[test]
fn results_without_a_required_field_are_refused() {
    let e = Results::parse(
        br#"{"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":0,"streams":[]}"#,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "iperf3 results message lacks the field `sender_has_retransmits`"
    );
    let s = r#"{"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":0,"sender_has_retransmits":0,"streams":[{"id":1}]}"#;
    assert!(Results::parse(s.as_bytes())
        .unwrap_err()
        .to_string()
        .contains("`bytes`"));
    let many = format!(
        r#"{{"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":0,"sender_has_retransmits":0,"streams":[{}]}}"#,
        vec!["1"; 257].join(",")
    );
    assert!(Results::parse(many.as_bytes())
        .unwrap_err()
        .to_string()
        .contains("at most 256"));
}

#[test]
fn udp_headers_and_the_connect_handshake() {
    let h = UdpHeader {
        sec: 1_700_000_000,
        usec: 999_999,
        seq: 7,
    };
    let mut b = [0u8; 16];
    h.emit(&mut b, false).unwrap();
    assert_eq!(&b[8..12], &[0, 0, 0, 7]);
    assert_eq!(UdpHeader::parse(&b, false), Ok(h));
    h.emit(&mut b, true).unwrap();
    assert_eq!(UdpHeader::parse(&b, true), Ok(h));
    assert_eq!(
        UdpHeader::parse(&b[..11], false),
        Err(Iperf3Error::Truncated { need: 12, have: 11 })
    );
    // iperf3 3.12 on x86 sends 0x36373839 little-endian: "9876".
    assert_eq!(CONNECT_MSG, 0x3637_3839u32.to_le_bytes());
    assert_eq!(CONNECT_REPLY, 0x3938_3736u32.to_le_bytes());
    assert!(is_connect_msg(b"9876") && is_connect_msg(b"6789"));
    assert!(is_connect_reply(b"6789") && is_connect_reply(&LEGACY_CONNECT_REPLY));
    assert!(!is_connect_reply(b"abcd"));
}
