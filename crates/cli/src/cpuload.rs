//! `--cpu-load N` (rtt, oneway, load): busy threads added for a run. The
//! threads themselves, the bound on N and the host's load are
//! `misura_run::cpuload`'s (`CpuLoad`, made from these flags with `From`).

/// `--cpu-load N`, for the commands that can measure under added load.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CpuLoadArgs {
    /// Run N busy threads during the measurement, pinned round-robin to the
    /// CPUs after --cpu (the measuring CPU gets one last): RTT against CPU
    /// load (seed 003, Fig. 6). The result's host.load records the load.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub cpu_load: u32,
}
