#!/usr/bin/env python3
"""The agent's archive at scale (issue 14), on this host's loopback, with a
ClickHouse 18.16 and a VictoriaMetrics the script starts on scratch
directories and ports of its own:

1. archive rate: a backlog of real results (one `misura rtt` result, copied
   under new run ids into a store's outbox) delivered to ClickHouse, per-run
   rows only and with per-probe rows; results/s and rows/s;
2. agent footprint with 100 rtt targets: RSS and open file descriptors;
3. catch-up: ClickHouse stopped for --outage seconds (default 60) while 20
   targets measure, then started; seconds until nothing waits;
4. fleet load: --agents agents (own names and stores) of 25 targets each,
   archiving to ClickHouse and VictoriaMetrics for --window seconds; rows,
   requests and CPU seconds each sink took per second.

Every figure is measured here and printed with what it came from; nothing
is asserted. As root (ClickHouse refuses nothing, but the ports and
processes are this script's own).
"""
import argparse, json, os, shutil, signal, sqlite3, subprocess, sys, tempfile, time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MISURA = os.path.join(ROOT, "target/release/misura")
CH_PORT, VM_PORT, REFL_PORT = 28123, 28428, 28620


def http(url, body=None, timeout=10):
    req = urllib.request.Request(url, data=body.encode() if isinstance(body, str) else body)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read().decode()


def ch(q):
    return http(f"http://127.0.0.1:{CH_PORT}/", q).strip()


class Proc:
    def __init__(self, args, log, env=None):
        self.p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(log, "ab"),
                                  env=env, start_new_session=True)

    def stop(self, sig=signal.SIGTERM):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()

    def cpu_s(self):
        f = open(f"/proc/{self.p.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def start_clickhouse(d):
    os.makedirs(d, exist_ok=True)
    cfg = os.path.join(d, "config.xml")
    with open(cfg, "w") as f:
        f.write(f"""<?xml version="1.0"?><yandex>
<logger><level>warning</level><log>{d}/server.log</log><errorlog>{d}/err.log</errorlog><size>10M</size><count>1</count></logger>
<http_port>{CH_PORT}</http_port><tcp_port>{CH_PORT + 1}</tcp_port><listen_host>127.0.0.1</listen_host>
<path>{d}/data/</path><tmp_path>{d}/tmp/</tmp_path><user_files_path>{d}/uf/</user_files_path>
<format_schema_path>{d}/fs/</format_schema_path><mark_cache_size>67108864</mark_cache_size>
<users><default><password></password><networks><ip>::/0</ip></networks><profile>default</profile><quota>default</quota></default></users>
<profiles><default></default></profiles><quotas><default></default></quotas></yandex>""")
    p = Proc(["/usr/sbin/clickhouse-server", f"--config-file={cfg}"], os.path.join(d, "stdout.log"))
    for _ in range(150):
        try:
            if ch("SELECT 1") == "1":
                return p
        except Exception:
            time.sleep(0.2)
    sys.exit("clickhouse-server did not start: see " + d)


def start_vm(d):
    p = Proc(["victoria-metrics", f"-httpListenAddr=127.0.0.1:{VM_PORT}", f"-storageDataPath={d}",
              "-search.latencyOffset=1s"], d + ".log")
    for _ in range(100):
        try:
            http(f"http://127.0.0.1:{VM_PORT}/health")
            return p
        except Exception:
            time.sleep(0.2)
    sys.exit("victoria-metrics did not start")


def env_for(home):
    e = dict(os.environ, HOME=home, XDG_DATA_HOME=os.path.join(home, "data"))
    return e


def target(name, interval="1s", count=5):
    return (f'[[target]]\nname = "{name}"\nkind = "rtt"\naddress = "127.0.0.1:{REFL_PORT}"\n'
            f'interval = "{interval}"\ncount = {count}\nperiod = "10ms"\ntimeout = "200ms"\n\n')


def sinks(per_probe=False, vm=False, batch=500):
    s = (f'[[sink]]\nname = "ch"\nkind = "clickhouse"\nurl = "http://127.0.0.1:{CH_PORT}/"\n'
         f'per_probe = {"true" if per_probe else "false"}\nbatch = {batch}\n\n')
    if vm:
        s += f'[[sink]]\nname = "vm"\nkind = "remote-write"\nurl = "http://127.0.0.1:{VM_PORT}/api/v1/write"\n\n'
    return s


def agent(work, name, body, extra=(), listen=None):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    cfg = os.path.join(d, "agent.toml")
    with open(cfg, "w") as f:
        f.write(f'[agent]\nname = "{name}"\nparallel = 4\n\n' + body)
    store = os.path.join(d, "results.sqlite")
    args = [MISURA, "--store", store, "agent", "--config", cfg,
            "--listen", listen or "127.0.0.1:0", *extra]
    return Proc(args, os.path.join(d, "agent.log"), env_for(d)), store


def status(store, sink="ch"):
    o = subprocess.run([MISURA, "--store", store, "archive", "status", "--json"],
                       capture_output=True, text=True)
    for s in json.loads(o.stdout)["sinks"]:
        if s["name"] == sink:
            return s
    return None


def waiting(store, sink="ch"):
    s = status(store, sink)
    return s and s["waiting"]


def caught_up(store, since_ns):
    """Nothing kept before `since_ns` still waits."""
    s = status(store)
    return s["waiting"] == 0 or s["oldest_waiting_ns"] >= since_ns


def fill_backlog(store, n, result, probes):
    """n copies of one real result in the store's outbox, waiting for sink ch."""
    db = sqlite3.connect(store)
    db.execute("INSERT OR IGNORE INTO sinks (name) VALUES ('ch')")
    now = time.time_ns()
    cur = db.cursor()
    for i in range(n):
        cur.execute("INSERT INTO runs (started_at, subcommand, target, sizes, timestamp_source, host, complete, format, format_version, result) VALUES (?, 'rtt', 'bench', '', '', '', 1, 'misura.rtt', 1, ?)",
                    (json.loads(result)["started_at"], result))
        cur.execute("INSERT INTO outbox (run, run_id, agent, target, kind, created_ns, probes) VALUES (?, ?, 'bench', ?, 'rtt', ?, ?)",
                    (cur.lastrowid, os.urandom(16).hex(), f"t{i % 100}", now, probes))
    db.commit()
    db.close()


def count(table):
    try:
        return int(ch(f"SELECT count() FROM {table}"))
    except Exception:
        return 0  # not created yet


def archive_rate(work, n, per_probe, result, probes, batch):
    name = "rate-probes" if per_probe else "rate-runs"
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    store = os.path.join(d, "results.sqlite")
    # The store (and its sink row) made by misura itself: an empty agent: no targets of its own (a template URL nobody serves).
    p, store = agent(work, name, sinks(per_probe=per_probe, batch=batch),
                     extra=["--config-url", "http://127.0.0.1:9/none.toml", "--template-interval", "1h"])
    time.sleep(1.0)
    p.stop()
    fill_backlog(store, n, result, probes)
    before_runs, before_probes = count("misura_runs"), count("misura_probes")
    t0 = time.monotonic()
    p, _ = agent(work, name, sinks(per_probe=per_probe, batch=batch),
                 extra=["--config-url", "http://127.0.0.1:9/none.toml", "--template-interval", "1h"])
    while waiting(store) != 0:
        time.sleep(0.2)
    dt = time.monotonic() - t0
    p.stop()
    runs = count("misura_runs") - before_runs
    probes_n = count("misura_probes") - before_probes
    print(f"archive rate ({'per-run + per-probe' if per_probe else 'per-run'} rows, batches of {batch}, "
          f"release build, loopback): {runs} results in {dt:.1f} s = {runs / dt:.0f} results/s"
          + (f", {probes_n} probe rows = {probes_n / dt:.0f} probe rows/s" if per_probe else "")
          + " (wall time from agent start to `archive status` waiting = 0, includes start-up)")


def footprint(work, n=100, settle=60):
    body = "".join(target(f"t{i}", interval="10s", count=10) for i in range(n)) + sinks(per_probe=True, vm=True)
    p, store = agent(work, "footprint", body)
    samples = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < settle:
        time.sleep(5)
        st = open(f"/proc/{p.p.pid}/status").read()
        rss = int([l for l in st.splitlines() if l.startswith("VmRSS")][0].split()[1])
        fds = len(os.listdir(f"/proc/{p.p.pid}/fd"))
        thr = int([l for l in st.splitlines() if l.startswith("Threads")][0].split()[1])
        samples.append((rss, fds, thr))
    p.stop()
    n_runs = subprocess.run([MISURA, "--store", store, "history", "--limit", "100000"],
                            capture_output=True, text=True).stdout.count("\n")
    print(f"footprint, {n} rtt targets every 10 s (parallel 4), ClickHouse per-probe + remote-write sinks, "
          f"{settle} s (/proc/PID/status VmRSS, /proc/PID/fd, every 5 s): RSS max {max(s[0] for s in samples) / 1024:.1f} MiB, "
          f"last {samples[-1][0] / 1024:.1f} MiB; fds max {max(s[1] for s in samples)}; threads max {max(s[2] for s in samples)}; "
          f"~{n_runs} runs kept")


def catch_up(work, chp, ch_dir, outage):
    body = "".join(target(f"c{i}") for i in range(20)) + sinks(per_probe=True)
    p, store = agent(work, "catchup", body)
    time.sleep(10)
    chp.stop()
    t_stop = time.monotonic()
    time.sleep(outage)
    w = waiting(store)
    back_ns = time.time_ns()
    chp = start_clickhouse(ch_dir)
    t0 = time.monotonic()
    while not caught_up(store, back_ns):
        time.sleep(0.2)
    dt = time.monotonic() - t0
    p.stop()
    print(f"catch-up: ClickHouse stopped {time.monotonic() - t_stop - dt:.0f} s (incl. its restart) while 20 targets measured "
          f"every 1 s; {w} results waiting when it came back; all of them delivered {dt:.1f} s after it answered again "
          f"(back-off 1 s doubling to 60 s: the next retry decides most of this)")
    return chp


def fleet(work, chp, vmp, n_agents, window):
    def ch_events():
        return {k: int(v) for k, v in (l.split("\t") for l in ch(
            "SELECT event, value FROM system.events WHERE event IN ('InsertQuery','InsertedRows','Query') FORMAT TSV").splitlines())}

    def vm_rows():
        m = http(f"http://127.0.0.1:{VM_PORT}/metrics")
        tot = 0
        for l in m.splitlines():
            if l.startswith("vm_rows_inserted_total") and "promremotewrite" in l:
                tot += float(l.split()[-1])
        return tot

    agents = [agent(work, f"fleet-{i}", "".join(target(f"f{j}") for j in range(25)) + sinks(per_probe=True, vm=True))
              for i in range(n_agents)]
    time.sleep(10)
    e0, v0, c0, m0 = ch_events(), vm_rows(), chp.cpu_s(), vmp.cpu_s()
    time.sleep(window)
    e1, v1, c1, m1 = ch_events(), vm_rows(), chp.cpu_s(), vmp.cpu_s()
    for p, _ in agents:
        p.stop()
    d = lambda k: (e1.get(k, 0) - e0.get(k, 0)) / window
    print(f"fleet of {n_agents} agents x 25 rtt targets every 1 s (per-probe rows, remote-write), over {window} s "
          f"(ClickHouse system.events, VictoriaMetrics vm_rows_inserted_total, /proc CPU time): "
          f"ClickHouse {d('InsertQuery'):.1f} inserts/s, {d('InsertedRows'):.0f} rows/s, {d('Query'):.1f} queries/s, "
          f"{(c1 - c0) / window * 100:.1f} % of a CPU; VictoriaMetrics {(v1 - v0) / window:.0f} samples/s, "
          f"{(m1 - m0) / window * 100:.1f} % of a CPU")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backlog", type=int, default=20000, help="results in the archive-rate backlog")
    ap.add_argument("--batch", type=int, default=2000, help="sink batch for the archive rate")
    ap.add_argument("--outage", type=int, default=60, help="seconds ClickHouse is down")
    ap.add_argument("--agents", type=int, default=4)
    ap.add_argument("--window", type=int, default=30)
    ap.add_argument("--only", default="rate,footprint,catchup,fleet")
    a = ap.parse_args()
    if not os.path.exists(MISURA):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "misura"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="misura-bench-fleet-")
    procs = []
    try:
        refl = Proc([MISURA, "--no-store", "reflect", "--listen", "127.0.0.1", "--port", str(REFL_PORT), "-q"],
                    os.path.join(work, "reflect.log"))
        procs.append(refl)
        chp = start_clickhouse(os.path.join(work, "ch"))
        vmp = start_vm(os.path.join(work, "vm"))
        procs += [vmp]
        # One real result and its per-probe log, for the backlog.
        frames = os.path.join(work, "frames.csv")
        result = subprocess.run([MISURA, "--no-store", "rtt", f"127.0.0.1:{REFL_PORT}", "--count", "100",
                                 "--period", "1ms", "--json", "-q", "--frames", frames],
                                capture_output=True, text=True, check=True).stdout
        probes = open(frames).read()
        only = a.only.split(",")
        if "rate" in only:
            archive_rate(work, a.backlog, False, result, probes, a.batch)
            archive_rate(work, a.backlog // 4, True, result, probes, a.batch)
        if "footprint" in only:
            footprint(work)
        if "catchup" in only:
            chp = catch_up(work, chp, os.path.join(work, "ch"), a.outage)
        if "fleet" in only:
            fleet(work, chp, vmp, a.agents, a.window)
        procs.append(chp)
    finally:
        for p in procs:
            p.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
