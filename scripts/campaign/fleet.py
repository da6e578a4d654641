"""The campaign's attacks on the agent as a fleet member (issue 29): sinks
that redirect, lose an INSERT's reply, stay down or answer slowly; a
template server that stalls or pins a refused version; per-probe logs at
predictable paths; targets and sinks the children would refuse. Mixed into
campaign.Campaign; the agent runs in host 1's namespace (--netns), its
peers there too (http_peer.py, ch_proxy.py, clickhouse-server), the
reflector in host 2's."""

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
H2 = "198.18.0.2"


def target(name, interval="1s", extra=""):
    return (f'[[target]]\nname = "{name}"\nkind = "rtt"\naddress = "{H2}:862"\n'
            f'interval = "{interval}"\ncount = 3\nperiod = "10ms"\ntimeout = "200ms"\n{extra}')


class FleetAttacks:
    # --- plumbing -------------------------------------------------------
    def peer(self, port, mode, arg=""):
        log = os.path.join(self.work, f"peer-{port}.jsonl")
        open(log, "w").close()
        self.spawn(["python3", os.path.join(HERE, "http_peer.py"), str(port), log, mode, arg],
                   ns=self.ns(1))
        time.sleep(0.5)
        return log

    @staticmethod
    def requests(log):
        with open(log) as f:
            return [json.loads(l) for l in f if l.strip()]

    def agent(self, tag, config, extra=()):
        d = os.path.join(self.work, tag)
        os.makedirs(d, exist_ok=True)
        cfg = os.path.join(d, "agent.toml")
        with open(cfg, "w") as f:
            f.write(config)
        store = os.path.join(d, "results.sqlite")
        err = open(os.path.join(d, "agent.log"), "w")
        p = self.spawn([self.misura, "--store", store, "agent", "--config", cfg, "--netns",
                        self.ns(1), "--listen", "127.0.0.1:0"] + list(extra), stderr=err)
        return p, store, os.path.join(d, "agent.log"), cfg

    @staticmethod
    def sink_row(store, name):
        try:
            db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
            r = db.execute("SELECT (SELECT count(*) FROM outbox o WHERE o.id > s.acked), sent, "
                           "dropped, coalesce(last_error, '') FROM sinks s WHERE name = ?",
                           (name,)).fetchone()
            db.close()
            return r or (0, 0, 0, "")
        except sqlite3.Error:
            return (0, 0, 0, "")

    @staticmethod
    def stop(p, limit=60):
        t = time.monotonic()
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            return None
        return time.monotonic() - t

    @staticmethod
    def text(path):
        with open(path, errors="replace") as f:
            return f.read()

    # --- the attacks ------------------------------------------------------
    def fleet_attacks(self):
        refl = self.reflector()
        attacks = [self.sink_redirect, self.outbox_bounds, self.sigterm_batch,
                   self.template_etag, self.frames_symlink, self.fleet_checks]
        # The CI-sized subset leaves out the slow ones (tests/agent_hostile.rs
        # and tests/fleet_exactly_once.rs cover them).
        if not self.a.quick:
            attacks += [self.template_stall, self.ch_lost_reply]
        self.run_attacks(attacks)
        refl.send_signal(signal.SIGINT)

    def sink_redirect(self):
        elsewhere = self.peer(18201, "ok")
        self.peer(18200, "redirect", "http://127.0.0.1:18201/stolen")
        p, store, log, _ = self.agent("redirect", target("r") + (
            '\n[[sink]]\nname = "h"\nkind = "http"\nurl = "http://127.0.0.1:18200/in"\n'
            'batch = 1\nlinger = "10ms"\nheaders = {X-Api-Key = "secret"}\n'))
        time.sleep(8)
        waiting, sent, _, err = self.sink_row(store, "h")
        self.stop(p)
        stolen = self.requests(elsewhere)
        leaked = sum(any(k.lower() == "x-api-key" for k in r["headers"]) for r in stolen)
        self.row("http sink answering 302 to another host", "8 s", True, (None, None),
                 (None, None), f"sent {sent}, waiting {waiting}, {len(stolen)} requests at the "
                 f"redirect's host ({leaked} with the API key); error: {err[:70]!r}",
                 sent == 0 and not stolen and "302" in err,
                 "goal: nothing counted as delivered, nothing sent elsewhere")

    def outbox_bounds(self):
        cfg = "".join(target(f"r{i}") for i in range(4)) + (
            '\n[[sink]]\nname = "ch"\nkind = "clickhouse"\nurl = "http://127.0.0.1:1/"\n'
            'per_probe = true\nmax_waiting = 5\n')
        p, store, log, _ = self.agent("bounds", cfg, ["--no-create"])
        worst, secs = 0, 8 if self.a.quick else 20
        end = time.monotonic() + secs
        while time.monotonic() < end:
            worst = max(worst, self.sink_row(store, "ch")[0])
            time.sleep(0.2)
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        logs = db.execute("SELECT count(*) FROM outbox WHERE probes IS NOT NULL").fetchone()[0]
        db.close()
        waiting, _, dropped, _ = self.sink_row(store, "ch")
        self.stop(p)
        self.row(f"ClickHouse sink down {secs} s, max_waiting = 5", "4 targets/s", True,
                 (None, None), (None, None),
                 f"waiting at most {worst}, dropped {dropped}, per-probe logs kept {logs}",
                 worst <= 5 and logs <= 5, "goal: waiting ≤ 5, dropped results' logs freed")

    def sigterm_batch(self):
        self.peer(18210, "slow", "2.5")
        cfg = '[agent]\nparallel = 6\n' + "".join(target(f"r{i}") for i in range(6)) + (
            '\n[[sink]]\nname = "h"\nkind = "http"\nurl = "http://127.0.0.1:18210/"\n'
            'batch = 20\nlinger = "3s"\ntimeout = "5s"\n')
        p, store, log, _ = self.agent("sigterm", cfg)
        time.sleep(10)
        took = self.stop(p, limit=90)
        waiting = self.sink_row(store, "h")[0]
        self.row("SIGTERM during a 20-result batch, 2.5 s per POST", "-", True, (None, None),
                 (None, None), f"exited {'never' if took is None else f'{took:.1f} s'} after "
                 f"SIGTERM, {waiting} results waiting", took is not None and took < 6 and waiting > 0,
                 "goal: exit within 6 s, the rest kept")

    def runs_of(self, store):
        try:
            db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
            t = [r[0] for r in db.execute("SELECT created_ns FROM outbox ORDER BY id")]
            db.close()
            return t
        except sqlite3.Error:
            return []

    def template_stall(self):
        self.peer(18220, "stall")
        p, store, log, _ = self.agent("stall", '[agent]\nname = "a1"\n' + target("r", "2s"),
                                      ["--config-url", "http://127.0.0.1:18220/fleet.toml",
                                       "--template-interval", "2s"])
        time.sleep(30)
        took = self.stop(p)
        times = self.runs_of(store)
        gap = max((b - a) / 1e9 for a, b in zip(times, times[1:])) if len(times) > 1 else 0
        text = self.text(log)
        self.row("template server that never answers, interval 2 s", "30 s", True, (None, None),
                 (None, None), f"{len(times)} runs (of ~15), largest gap {gap:.1f} s, SIGTERM "
                 f"{'never' if took is None else f'{took:.1f} s'}; "
                 f"{'names its bound' if 'within 10.0 s' in text else 'says ' + repr('timeout: global') if 'timeout: global' in text else 'no error'}",
                 len(times) >= 12 and gap < 4 and took is not None and took < 4
                 and "timeout: global" not in text, "goal: schedule kept, prompt stop")

    def template_etag(self):
        tpl = os.path.join(self.work, "fleet.toml")
        with open(tpl, "w") as f:
            f.write(target("shared"))
        self.peer(18230, "template", tpl)
        p, store, log, cfg = self.agent("etag", '[agent]\nname = "a1"\n' + target("shared"),
                                        ["--config-url", "http://127.0.0.1:18230/fleet.toml"])
        time.sleep(4)
        refused = "fleet template refused" in self.text(log)
        with open(cfg, "w") as f:
            f.write('[agent]\nname = "a1"\n' + target("mine"))
        p.send_signal(signal.SIGHUP)
        time.sleep(4)
        applied = "fleet template applied" in self.text(log)
        self.stop(p)
        self.row("refused template fixed locally, then SIGHUP", "-", True, (None, None),
                 (None, None), f"refused first: {refused}, applied after the fix: {applied}",
                 refused and applied, "goal: the fixed template applies")

    def frames_symlink(self):
        victim = os.path.join(self.work, "victim")
        with open(victim, "w") as f:
            f.write("keep me\n")
        p, store, log, _ = self.agent("frames", target("r0") + (
            '\n[[sink]]\nname = "ch"\nkind = "clickhouse"\nurl = "http://127.0.0.1:1/"\n'
            'per_probe = true\n'), ["--no-create"])
        planted = [f"/tmp/misura-agent-{p.pid}-r0-{n}.csv" for n in range(1, 8)]
        for path in planted:
            try:
                os.symlink(victim, path)
            except OSError:
                pass
        time.sleep(6)
        self.stop(p)
        for path in planted:
            try:
                os.unlink(path)
            except OSError:
                pass
        intact = self.text(victim) == "keep me\n"
        self.row("symlinks at the agent's per-probe log paths", "7 planted", True, (None, None),
                 (None, None), f"victim file {'intact' if intact else 'OVERWRITTEN'}", intact,
                 "goal: never followed")

    def fleet_checks(self):
        cases = {
            "sink timeout 100h": '[[sink]]\nkind = "http"\nurl = "http://127.0.0.1:1/"\ntimeout = "100h"\n'
                                 + target("t"),
            "target timeout 0s": target("t").replace('timeout = "200ms"', 'timeout = "0s"'),
            "target period 1ns": target("t").replace('period = "10ms"', 'period = "1ns"'),
            "1 000 targets for one agent": "".join(target(f"t{i}", "1h") for i in range(1000)),
        }
        refused = []
        for what, text in cases.items():
            path = os.path.join(self.work, "check.toml")
            with open(path, "w") as f:
                f.write(text)
            r = self.run([self.misura, "agent", "--check", "--config", path], timeout=60)
            if r.returncode != 0:
                refused.append(what)
        t = time.monotonic()
        try:
            r = self.run([self.misura, "--no-store", "rtt", f"{H2}:862", "--period", "50ns",
                          "--count", "3", "-q"], ns=self.ns(1), timeout=20)
            rtt = f"exit {r.returncode} in {time.monotonic() - t:.1f} s"
        except subprocess.TimeoutExpired:
            rtt = "still running after 20 s"
        try:
            r = self.run([self.misura, "--no-store", "load", H2, "--period", "1ns", "--up", "1",
                          "--json", "-q"], ns=self.ns(1), timeout=60)
            load = f"exit {r.returncode}"
        except subprocess.TimeoutExpired:
            load = "still running after 60 s"
        self.row("impossible target, sink and period values", "-", True, (None, None),
                 (None, None), f"--check refused {len(refused)}/{len(cases)} ({', '.join(refused)}); "
                 f"rtt --period 50ns: {rtt}; load --period 1ns: {load}",
                 len(refused) == len(cases) and rtt.startswith("exit 5"),
                 "goal: refused when read, naming the bound")

    def ch_lost_reply(self):
        if not os.path.exists("/usr/sbin/clickhouse-server"):
            self.row("ClickHouse INSERT reply lost", "-", True, (None, None), (None, None),
                     "skipped: apt-get install clickhouse-server", True)
            return
        for mode, delay in (("reset", "3"), ("slow", "4")):
            self.ch_timing(mode, delay)

    def ch_timing(self, mode, delay):
        d = os.path.join(self.work, f"ch-{mode}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.xml"), "w") as f:
            f.write(f"""<?xml version="1.0"?><yandex>
<logger><level>warning</level><log>{d}/server.log</log><errorlog>{d}/err.log</errorlog><size>10M</size><count>1</count></logger>
<http_port>18123</http_port><tcp_port>18124</tcp_port><listen_host>127.0.0.1</listen_host>
<path>{d}/data/</path><tmp_path>{d}/tmp/</tmp_path><user_files_path>{d}/uf/</user_files_path>
<format_schema_path>{d}/fs/</format_schema_path><mark_cache_size>67108864</mark_cache_size>
<users><default><password></password><networks><ip>::/0</ip></networks><profile>default</profile><quota>default</quota></default></users>
<profiles><default></default></profiles><quotas><default></default></quotas></yandex>""")
        ch = self.spawn(["/usr/sbin/clickhouse-server", f"--config-file={d}/config.xml"], ns=self.ns(1))

        def q(sql, port=18123):
            r = self.run(["curl", "-s", "-f", "--max-time", "10", "--data-binary", sql,
                          f"http://127.0.0.1:{port}/"], ns=self.ns(1))
            return r.stdout.decode() if r.returncode == 0 else None
        end = time.monotonic() + 30
        while q("SELECT 1") != "1\n" and time.monotonic() < end:
            time.sleep(0.3)
        cols_runs = ("run_id String, agent String, target String, subcommand String, started_ns UInt64, "
                     "stored_ns UInt64, complete UInt8, timestamp_source String, probes_sent UInt64, "
                     "probes_received UInt64, probes_lost UInt64, figure String, median_ns Nullable(Int64), "
                     "p99_ns Nullable(Int64), throughput_bps Nullable(Float64), "
                     "transactions_per_s Nullable(Float64), result String")
        cols_probes = ("run_id String, agent String, target String, seq UInt64, size UInt32, sent_ns UInt64, "
                       "lost UInt8, user_ns Nullable(Int64), kernel_ns Nullable(Int64), network_ns Nullable(Int64), "
                       "forward_ns Nullable(Int64), backward_ns Nullable(Int64)")
        for db, engine in (("plain", "MergeTree()"), ("repl", "ReplacingMergeTree()")):
            q(f"CREATE DATABASE {db}")
            q(f"CREATE TABLE {db}.misura_runs ({cols_runs}) ENGINE = {engine} ORDER BY (agent, target, started_ns, run_id)")
            q(f"CREATE TABLE {db}.misura_probes ({cols_probes}) ENGINE = {engine} ORDER BY (agent, target, run_id, seq)")
        stats = os.path.join(d, "proxy.json")
        proxy = self.spawn(["python3", os.path.join(HERE, "ch_proxy.py"), "18140", "18123", mode,
                            delay, "2", "6", stats], ns=self.ns(1))
        time.sleep(0.5)
        cfg = '[agent]\nname = "c1"\nparallel = 2\n' + target("r0") + target("r1")
        for db in ("plain", "repl"):
            cfg += (f'\n[[sink]]\nname = "{db}"\nkind = "clickhouse"\nurl = "http://127.0.0.1:18140/"\n'
                    f'database = "{db}"\nper_probe = true\nbatch = 2\nlinger = "50ms"\ntimeout = "2s"\n')
        p, store, log, _ = self.agent(f"ch-{mode}", cfg, ["--no-create"])
        end = time.monotonic() + 120
        while time.monotonic() < end:
            try:
                if json.load(open(stats)).get("troubled", 0) >= 6:
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.5)
        end = time.monotonic() + 60
        while time.monotonic() < end and any(self.sink_row(store, s)[0] > 1 for s in ("plain", "repl")):
            time.sleep(0.5)
        self.stop(p)
        db_ = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        kept = db_.execute("SELECT count(*) FROM outbox").fetchone()[0]
        db_.close()
        for db in ("plain", "repl"):
            n = lambda sql: int((q(sql) or "0").strip() or 0)
            rows = n(f"SELECT count() FROM {db}.misura_runs")
            distinct = n(f"SELECT uniqExact(run_id) FROM {db}.misura_runs")
            probes = n(f"SELECT count() FROM {db}.misura_probes")
            self.row(f"ClickHouse INSERT reply lost ({mode}, {delay} s), {db}",
                     "6 of every 2nd insert", True, (None, None), (None, None),
                     f"runs kept {kept}, distinct run ids {distinct}, rows {rows}, "
                     f"probe rows {probes} (of {3 * distinct})",
                     rows == distinct and probes == 3 * distinct and distinct >= kept - 1,
                     "goal: rows = distinct run ids")
        proxy.kill()
        ch.kill()
        ch.wait()
