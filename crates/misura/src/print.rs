//! `eprintln!`, `eprint!` and `println!` that never panic on a closed
//! stderr/stdout (`misura … | head`), shadowing std's crate-wide (declared
//! first in main.rs with `#[macro_use]`). The binary is the one crate that
//! prints.

/// `eprintln!` that never panics: a closed stderr (`misura … 2>&1 | head`)
/// must not abort a measurement; progress and warnings are then lost, the
/// result and its exports are not. Shadows the standard macro where taken
/// with `#[macro_use]`.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that never panics, as `eprintln!` above.
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` that never panics on a closed stdout (`misura lab status | head`).
macro_rules! println {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}
