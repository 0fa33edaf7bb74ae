#!/usr/bin/env python3
"""Recovery of `mneme serve` from a full disk: how much space must return for the
idle-time full-text indexer to catch its backlog up, with no restart, while appends
keep succeeding (docs/operations.md "Disk full").

Needs root (it mounts a tmpfs). For each text kind and factor F: mounts a tmpfs of
--disk-mb, starts `mneme serve` with its database there, has --clients clients append
--row-kb rows until the disk refuses (500 storage_disk_full), reads the backlog, then
grows the tmpfs by F x the unindexed rows' text (space returns, the daemon is not
restarted) and, while the indexer catches up, appends one row every --probe-every
seconds. Reports per run: the backlog's text, caught up (seconds) or rows left after
--wait seconds, appends after the space returned (ok/refused), and the database's
growth per indexed text byte. Traffic goes to 127.0.0.1 only; every loop is bounded.

  sudo python3 tests/tools/full_disk_recovery.py --mneme build/mneme \
      --text natural,random --factors 1,2,3
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


def corpus_vocabulary():
    """English words and common Han characters of testing/recall_corpus.cpp."""
    src = open(os.path.join(REPO, "testing", "recall_corpus.cpp"), encoding="utf-8").read()
    words_block = src[src.index("english_words[]"):]
    words_block = words_block[:words_block.index("};")]
    words = re.findall(r'"([a-z]+)"', words_block)
    han_block = src[src.index("common_han"):]
    han_block = han_block[:han_block.index(";")]
    han = "".join(re.findall(r'"([^"]+)"', han_block))
    return words, han


class texts:
    def __init__(self, kind, seed):
        self.kind = kind
        self.rng = random.Random(seed)
        self.words, self.han = corpus_vocabulary()
        # Zipf-like weights: natural text repeats its common words.
        self.weights = [1.0 / (i + 1) for i in range(len(self.words))]

    def english_sentence(self):
        n = self.rng.randint(6, 18)
        ws = self.rng.choices(self.words, self.weights, k=n)
        return " ".join(ws).capitalize() + "."

    def chinese_sentence(self):
        n = self.rng.randint(8, 24)
        # Common characters first: the first few hundred carry most of the text.
        idx = [min(int(self.rng.expovariate(1 / 80.0)), len(self.han) - 1) for _ in range(n)]
        return "".join(self.han[i] for i in idx) + "。"

    def random_word(self):
        return "".join(chr(self.rng.randint(97, 122)) for _ in range(self.rng.randint(3, 9)))

    def row(self, size):
        out = []
        total = 0
        while total < size:
            if self.kind == "random":
                s = self.random_word() + " "
            elif self.rng.random() < 0.5:
                s = self.english_sentence() + " "
            else:
                s = self.chinese_sentence()
            out.append(s)
            total += len(s.encode("utf-8"))
        text = "".join(out).encode("utf-8")[:size]
        return text.decode("utf-8", errors="ignore")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, timeout=30):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", errors="replace")
    except (urllib.error.URLError, OSError) as e:
        return 0, str(e)


def metric(base, name):
    status, text = http("GET", base + "/metrics")
    if status != 200:
        return None
    m = re.search(r"^" + re.escape(name) + r" ([0-9.e+-]+)$", text, re.M)
    return float(m.group(1)) if m else None


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    return total


def one_run(args, kind, factor, seed):
    mnt = tempfile.mkdtemp(prefix="mneme-fulldisk-")
    disk_mb = args.disk_mb
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % disk_mb, "tmpfs", mnt], check=True)
    port = free_port()
    base = "http://127.0.0.1:%d" % port
    cfg = os.path.join(mnt, "mneme.yaml")
    with open(cfg, "w") as f:
        f.write("database:\n  path: %s/mneme.db\n  index_free_space_reserve_bytes: %d\n"
                % (mnt, args.reserve_kb * 1024))
    log = open(os.path.join(tempfile.gettempdir(), "mneme-fulldisk-%s-%s.log" % (kind, factor)), "w")
    proc = subprocess.Popen([args.mneme, "serve", "--config", cfg, "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT)
    result = {"text": kind, "factor": factor}
    try:
        deadline = time.time() + 30
        while http("GET", base + "/v1/health", timeout=2)[0] != 200:
            if time.time() > deadline or proc.poll() is not None:
                raise RuntimeError("mneme serve did not start")
            time.sleep(0.2)
        gen = texts(kind, seed)
        size = args.row_kb * 1024
        rows = [gen.row(size) for _ in range(args.pool)]
        row_bytes = sum(len(r.encode()) for r in rows) / len(rows)
        stop = threading.Event()
        counts = {"ok": 0, "refused": 0}
        lock = threading.Lock()

        def client(c):
            i = 0
            deadline = time.time() + args.fill_limit
            while not stop.is_set() and time.time() < deadline:
                status, _ = http("POST", base + "/v1/sessions/fill-%d/messages" % c,
                                 {"role": "user", "content": rows[(c * 7 + i) % len(rows)]})
                i += 1
                with lock:
                    if status == 201:
                        counts["ok"] += 1
                    else:
                        counts["refused"] += 1
                        stop.set()
                        return

        with concurrent.futures.ThreadPoolExecutor(args.clients) as pool:
            list(pool.map(client, range(args.clients)))
        time.sleep(1.5)  # the group commit and the tick in flight settle
        backlog = metric(base, "mneme_index_backlog_rows") or 0
        result["filled_rows"] = counts["ok"]
        result["backlog_rows"] = int(backlog)
        unindexed = backlog * row_bytes
        result["backlog_text_mb"] = round(unindexed / 2**20, 2)
        db_before = dir_bytes(mnt)
        freed = int(factor * unindexed)
        result["freed_mb"] = round(freed / 2**20, 2)
        new_size_kb = disk_mb * 1024 + (freed + 1023) // 1024
        subprocess.run(["mount", "-o", "remount,size=%dk" % new_size_kb, mnt], check=True)
        t0 = time.time()
        probes = {"ok": 0, "refused": 0}
        caught_up = None
        next_probe = t0
        n = 0
        while time.time() - t0 < args.wait:
            now = time.time()
            if now >= next_probe:
                status, _ = http("POST", base + "/v1/sessions/probe/messages",
                                 {"role": "user", "content": rows[n % len(rows)]})
                n += 1
                probes["ok" if status == 201 else "refused"] += 1
                next_probe = now + args.probe_every
            left = metric(base, "mneme_index_backlog_rows")
            if left == 0:
                caught_up = round(time.time() - t0, 1)
                break
            time.sleep(0.25)
        result["caught_up_s"] = caught_up
        result["rows_left"] = int(metric(base, "mneme_index_backlog_rows") or 0)
        result["appends_after"] = "%d ok / %d refused" % (probes["ok"], probes["refused"])
        result["skipped_for_space"] = int(metric(base, "mneme_index_ticks_skipped_for_space_total") or 0)
        db_after = dir_bytes(mnt)
        indexed_text = max(1.0, (backlog - result["rows_left"]) * row_bytes)
        if caught_up is not None:
            result["disk_per_text_byte"] = round((db_after - db_before) / indexed_text, 2)
        return result
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        subprocess.run(["umount", mnt], check=False)
        shutil.rmtree(mnt, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mneme", default=os.path.join(REPO, "build", "mneme"))
    p.add_argument("--text", default="natural,random", help="natural,random")
    p.add_argument("--factors", default="1,2,3")
    p.add_argument("--runs", type=int, default=1, help="runs per text and factor")
    p.add_argument("--disk-mb", type=int, default=48)
    p.add_argument("--reserve-kb", type=int, default=4096,
                   help="database.index_free_space_reserve_bytes / 1024 (a 48 MiB disk)")
    p.add_argument("--row-kb", type=int, default=32)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--pool", type=int, default=64, help="distinct rows generated")
    p.add_argument("--fill-limit", type=float, default=300)
    p.add_argument("--wait", type=float, default=240)
    p.add_argument("--probe-every", type=float, default=2.0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root: it mounts a tmpfs")
    results = []
    for kind in args.text.split(","):
        for factor in [float(x) for x in args.factors.split(",")]:
            for run in range(args.runs):
                r = one_run(args, kind, factor, seed=47 + run)
                results.append(r)
                print(json.dumps(r) if args.json else
                      "text=%(text)s F=%(factor)g backlog=%(backlog_rows)d rows/%(backlog_text_mb)s MiB "
                      "freed=%(freed_mb)s MiB caught_up_s=%(caught_up_s)s rows_left=%(rows_left)d "
                      "appends_after=%(appends_after)s skipped_for_space=%(skipped_for_space)d "
                      "disk_per_text_byte=%(dpt)s" % dict(r, dpt=r.get("disk_per_text_byte")),
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
