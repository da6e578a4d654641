//! What one delivery attempt achieved, as every sink's driver reports it
//! to the delivery loop (its own module so the drivers need not import the
//! loop that imports them).

/// What one delivery attempt achieved: the first `done` results of the
/// batch are stored by the sink; `error` says why the rest are not.
#[derive(Debug)]
pub struct Delivery {
    pub done: usize,
    pub error: Option<String>,
}

impl Delivery {
    pub fn all(n: usize) -> Delivery {
        Delivery {
            done: n,
            error: None,
        }
    }
    pub fn failed(done: usize, e: String) -> Delivery {
        Delivery {
            done,
            error: Some(e),
        }
    }
}
