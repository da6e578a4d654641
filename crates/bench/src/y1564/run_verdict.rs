//! The whole run's verdict on the SUT, from each service's configuration
//! test and the performance test: PASS when every test passed, FAIL when a
//! test failed on its own measurement (the SUT's fault), INCONCLUSIVE when
//! no test failed that way but one rests on the tester's limit. An
//! interrupted run is no verdict at all. The command maps these to its
//! exit codes; the rule is here, beside the steps' own.

/// What a run's figures say of the SUT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunVerdict {
    /// Every test ran to its end and passed.
    pub pass: bool,
    /// A test failed on its own measurement.
    pub failed: bool,
    /// No test failed on its own measurement, but one rests on the
    /// tester's limit, so the run says nothing of the SUT.
    pub inconclusive: bool,
}

/// One test's (pass, inconclusive), as each test's rule judged it.
pub type Judged = (bool, bool);

/// The run's verdict from its tests: `configs` one per service,
/// `performance` when that test ran, `interrupted` when the run was
/// stopped before its end.
pub fn run_verdict(
    configs: &[Judged],
    performance: Option<Judged>,
    interrupted: bool,
) -> RunVerdict {
    let all = || configs.iter().copied().chain(performance);
    let pass = !interrupted && all().all(|(pass, _)| pass);
    let failed = all().any(|(pass, inconclusive)| !pass && !inconclusive);
    RunVerdict {
        pass,
        failed,
        inconclusive: !pass && !failed && all().any(|(_, inconclusive)| inconclusive),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASS: Judged = (true, false);
    const FAIL: Judged = (false, false);
    const TESTER: Judged = (false, true);

    fn v(pass: bool, failed: bool, inconclusive: bool) -> RunVerdict {
        RunVerdict {
            pass,
            failed,
            inconclusive,
        }
    }

    #[test]
    fn every_test_passed_is_a_pass() {
        assert_eq!(
            run_verdict(&[PASS, PASS], Some(PASS), false),
            v(true, false, false)
        );
        assert_eq!(run_verdict(&[PASS], None, false), v(true, false, false));
    }

    #[test]
    fn a_failure_of_the_sut_outweighs_the_tester_limit() {
        // One service failed on its own figures, another rests on the
        // tester: the SUT failed, the run is not inconclusive.
        assert_eq!(
            run_verdict(&[FAIL, TESTER], Some(PASS), false),
            v(false, true, false)
        );
        assert_eq!(
            run_verdict(&[PASS], Some(FAIL), false),
            v(false, true, false)
        );
    }

    #[test]
    fn the_tester_limit_alone_is_inconclusive() {
        assert_eq!(
            run_verdict(&[PASS, TESTER], Some(PASS), false),
            v(false, false, true)
        );
        assert_eq!(
            run_verdict(&[PASS], Some(TESTER), false),
            v(false, false, true)
        );
    }

    #[test]
    fn an_interrupted_run_does_not_pass() {
        assert_eq!(run_verdict(&[PASS], None, true), v(false, false, false));
        assert_eq!(run_verdict(&[FAIL], None, true), v(false, true, false));
        assert_eq!(run_verdict(&[TESTER], None, true), v(false, false, true));
    }
}
