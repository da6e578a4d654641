//! `report_page`'s tests: the checks of an input and the failures' classes.

use super::*;
use serde_json::json;

fn no_store(id: i64) -> Result<Value, BoxedError> {
    Err(format!("run {id} is not in the store").into())
}

#[test]
fn a_result_is_misuras_and_not_newer() {
    assert!(check_format(&json!({"format": "misura.rtt", "format_version": 1})).is_ok());
    let e = check_format(&json!({"a": 1})).unwrap_err();
    assert!(matches!(e, ReportError::NotMisura));
    assert_eq!(e.class(), Some(Class::Profile));
    let newer = json!({"format": "misura.rtt", "format_version": 99});
    match check_format(&newer).unwrap_err() {
        ReportError::Newer {
            format,
            version: 99,
            reads,
        } => {
            assert_eq!(format, "misura.rtt");
            assert_eq!(reads, misura_report::FORMAT_VERSION);
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn an_input_is_a_file_or_a_run_the_hook_finds() {
    let e = load("/nonexistent/result.json", &no_store).unwrap_err();
    assert!(matches!(e, ReportError::NoSuchInput { .. }));
    assert_eq!(e.class(), Some(Class::Usage));
    let e = load("12", &no_store).unwrap_err();
    // The hook's error whole, carried for its class.
    assert_eq!(e.to_string(), "run 12 is not in the store");
    assert!(e.carried().is_some());
    let found = |id: i64| -> Result<Value, BoxedError> { Ok(json!({ "id": id })) };
    let (v, name) = load("12", &found).unwrap();
    assert_eq!((v["id"].as_i64(), name.as_str()), (Some(12), "run-12"));
}

/// What `make` refuses `inputs` with, nothing in the store.
fn refused(inputs: Vec<String>, vs_load: bool) -> ReportError {
    let r = ReportRequest {
        inputs,
        vs_load,
        ..ReportRequest::default()
    };
    let stop = AtomicUsize::new(0);
    make(&r, &no_store, &mut Vec::new(), &stop, &mut |_| {}).unwrap_err()
}

#[test]
fn several_inputs_only_for_the_load_page() {
    let e = refused(vec!["1".into(), "2".into()], false);
    assert!(matches!(e, ReportError::OneInput { given: 2 }));
    let e = refused(vec!["1".into(); MAX_VS_LOAD_RUNS + 1], true);
    assert!(matches!(
        e,
        ReportError::TooManyRuns {
            given: 1001,
            max: 1000
        }
    ));
    // A run the store hook does not find, its words whole.
    let e = refused(vec!["1".into(), "2".into()], true);
    assert_eq!(e.to_string(), "run 1 is not in the store");
}

#[test]
fn a_png_failure_has_its_causes_class_and_says_what_was_written() {
    let e = ReportError::Png {
        dir: "/p".into(),
        written: vec!["a.html".into()],
        source: Box::new(ReportError::CannotCreate {
            dir: "/p".into(),
            why: io::Error::from(io::ErrorKind::NotFound),
        }),
    };
    assert_eq!(e.class(), Some(Class::Output));
    assert_eq!(
        e.to_string(),
        "writing the PNG plots to /p (already written: a.html)"
    );
}

#[test]
fn the_page_goes_to_the_callers_output_for_a_dash() {
    let dir = std::env::temp_dir().join(format!("misura-report-page-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("r.json");
    std::fs::write(&file, r#"{"format": "misura.demo", "format_version": 1}"#).unwrap();
    let r = ReportRequest {
        inputs: vec![file.display().to_string()],
        html: Some("-".into()),
        ..ReportRequest::default()
    };
    let mut page = Vec::new();
    let mut said = Vec::new();
    make(&r, &no_store, &mut page, &AtomicUsize::new(0), &mut |w| {
        said.push(w)
    })
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(String::from_utf8(page).unwrap().contains("<html"));
    assert_eq!(
        said,
        [Written::NoPlots {
            format: "misura.demo".into()
        }]
    );
}
