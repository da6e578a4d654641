//! The routed topology (issue 12): host 1 — router — host 2, so that a
//! bottleneck can sit in the middle of the path. Shaped on a sender's own
//! interface, TCP small queues keep the backlog inside the sender and the
//! queue never builds where latency is measured; on the router's egress it
//! does, as on a real access link.
//!
//! ```text
//!  {prefix}h1            {prefix}r                {prefix}h2
//!  m0 198.18.0.1/24 ─── r1 198.18.0.254/24
//!                        r2 198.18.1.254/24 ─── m0 198.18.1.2/24
//!  2001:2::1/64          2001:2::fe, 2001:2:0:1::fe      2001:2:0:1::2/64
//! ```
//!
//! `--shape RATE[,queue=BYTES][,qdisc=fq_codel]` puts a token bucket on both
//! router ports' egress (r2 towards h2, r1 towards h1): a plain tbf queue
//! (bufferbloat when large), or tbf with fq_codel inside it (a well-managed
//! queue at the same rate).

use super::{
    configure_port, cross_peers, delete_links, ensure_addrs, ensure_sysctl, ensure_up, ip, links,
    Kind, Lab, LabError, Links, Topology, Txn, Undo, HOST_IF,
};

/// Host 2's addresses in the routed topology (its own subnet).
pub const ROUTED_HOST2_V4: &str = "198.18.1.2";
pub const ROUTED_HOST2_V6: &str = "2001:2:0:1::2";
/// The router's ports: towards host 1 and towards host 2.
pub const ROUTER_P1: &str = "r1";
pub const ROUTER_P2: &str = "r2";
const R1_V4: &str = "198.18.0.254";
const R1_V6: &str = "2001:2::fe";
const R2_V4: &str = "198.18.1.254";
const R2_V6: &str = "2001:2:0:1::fe";
const R1_MAC: &str = "02:6d:73:00:03:01";
const R2_MAC: &str = "02:6d:73:00:03:02";

pub(crate) fn is_routed_wired(h1: &Links, r: &Links, h2: &Links) -> bool {
    cross_peers(h1.get(HOST_IF), r.get(ROUTER_P1)) && cross_peers(r.get(ROUTER_P2), h2.get(HOST_IF))
}

impl Lab {
    /// `{prefix}r`.
    pub fn router_ns(&self) -> String {
        format!("{}r", self.prefix())
    }

    pub(crate) fn up_routed(&self, txn: &mut Txn) -> Result<(), LabError> {
        let (h1, r, h2) = (self.host_ns(1), self.router_ns(), self.host_ns(2));
        let states = self.require_not_foreign(&[&h1, &r, &h2])?;
        for n in [&h1, &r, &h2] {
            self.ensure_ns(n, &states[n.as_str()], Topology::Routed, txn)?;
        }
        if !is_routed_wired(&links(&h1)?, &links(&r)?, &links(&h2)?) {
            txn.stop_processes(&[&h1, &r, &h2]);
            delete_links(&h1, &[HOST_IF])?;
            delete_links(&h2, &[HOST_IF])?;
            delete_links(&r, &[ROUTER_P1, ROUTER_P2])?;
            for (host, port) in [(&h1, ROUTER_P1), (&h2, ROUTER_P2)] {
                ip(
                    Kind::Change,
                    &[
                        "-n", host, "link", "add", HOST_IF, "type", "veth", "peer", "name", port,
                        "netns", &r,
                    ],
                )?;
                txn.undo.push(Undo::Link {
                    ns: host.to_string(),
                    ifname: HOST_IF.to_string(),
                });
            }
        }
        let (l1, lr, l2) = (links(&h1)?, links(&r)?, links(&h2)?);
        configure_port(&h1, &l1, HOST_IF, super::mac::H1, false)?;
        configure_port(&h2, &l2, HOST_IF, super::mac::H2, false)?;
        configure_port(&r, &lr, ROUTER_P1, R1_MAC, false)?;
        configure_port(&r, &lr, ROUTER_P2, R2_MAC, false)?;
        ensure_addrs(
            &h1,
            HOST_IF,
            &[(super::HOST1_V4, 24, false), (super::HOST1_V6, 64, true)],
        )?;
        ensure_addrs(
            &h2,
            HOST_IF,
            &[(ROUTED_HOST2_V4, 24, false), (ROUTED_HOST2_V6, 64, true)],
        )?;
        ensure_addrs(&r, ROUTER_P1, &[(R1_V4, 24, false), (R1_V6, 64, true)])?;
        ensure_addrs(&r, ROUTER_P2, &[(R2_V4, 24, false), (R2_V6, 64, true)])?;
        for n in [&h1, &r, &h2] {
            ensure_up(n, &links(n)?, "lo")?;
        }
        ensure_sysctl(&r, "net.ipv4.ip_forward", "1")?;
        ensure_sysctl(&r, "net.ipv6.conf.all.forwarding", "1")?;
        for (ns, net, via) in [
            (&h1, "198.18.1.0/24", R1_V4),
            (&h1, "2001:2:0:1::/64", R1_V6),
            (&h2, "198.18.0.0/24", R2_V4),
            (&h2, "2001:2::/64", R2_V6),
        ] {
            ip(
                Kind::Change,
                &["-n", ns, "route", "replace", net, "via", via],
            )?;
        }
        Ok(())
    }
}
