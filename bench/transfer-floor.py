#!/usr/bin/env python3
"""
`python3 bench/transfer-floor.py [--json] [--runs N] [--mib N] [--dir DIR] [--cases A,B]`: the fastest this machine
moves a file over loopback HTTP with the processes our transfers have, against `cp` on the same disk.

It answers "how far below `cp` must any upload or download through a function and a Job Pod be
here?" by taking Node, HTTP parsing, signing and hashing out of the path: the servers and relays are
minimal and copy nothing in user space (`sendfile` to send a file, `splice` to move bytes from one
socket to another or from a socket into a file). The client is curl, as in the upload and download
benches. Python, not Node, because Node exposes neither `splice` nor `sendfile`.

Cases, each timed end to end and interleaved with the others, medians of N runs:
- download_direct: curl <- a sendfile server (one hop, no function);
- download_relayed: curl <- a splice relay <- a sendfile server (our shape: client, function, Pod);
- upload_direct: curl -> a splice-to-file receiver that fdatasyncs (no function, no hashing);
- upload_relayed: curl -> a splice relay -> that receiver;
- upload_relayed_hashed: the same, the receiver hashing every byte twice with SHA-256 (a part's
  digest and the whole file's, as ours does) and writing from user space;
- cp, and cp followed by an fsync of the copy (the upload bench's baseline).
`--cases` runs only the cases named (bench/transfer-ratio.bench.ts asks for the two floors it
compares ours with, between its own runs).
"""
import hashlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

CHUNK = 1 << 20
F_SETPIPE_SZ = 1031


def listen():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    return s


def read_head(c):
    """Reads an HTTP request head; returns what of the body came with it."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        got = c.recv(65536)
        if not got:
            raise EOFError("the client left before its head")
        buf += got
    return buf[buf.index(b"\r\n\r\n") + 4 :]


def big_pipe():
    r, w = os.pipe()
    try:
        import fcntl

        fcntl.fcntl(w, F_SETPIPE_SZ, CHUNK)
    except OSError:
        pass
    return r, w


def splice_all(src, dst, pipe, limit=None):
    """Moves bytes src -> dst through a pipe, in the kernel, until EOF or `limit` bytes."""
    r, w = pipe
    moved = 0
    while limit is None or moved < limit:
        k = os.splice(src, w, CHUNK if limit is None else min(CHUNK, limit - moved))
        if k == 0:
            break
        left = k
        while left:
            left -= os.splice(r, dst, left)
        moved += k
    return moved


def role_serve(sock, path):
    c, _ = sock.accept()
    read_head(c)
    size = os.path.getsize(path)
    c.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\nconnection: close\r\n\r\n" % size)
    with open(path, "rb") as f:
        c.sendfile(f)
    c.close()


def role_receive(sock, path, size, hashes):
    c, _ = sock.accept()
    first = read_head(c)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, first)
    got = len(first)
    if hashes == 0:
        got += splice_all(c.fileno(), fd, big_pipe(), size - got)
    else:
        digests = [hashlib.sha256(first) for _ in range(hashes)]
        buf = bytearray(CHUNK)
        while got < size:
            k = c.recv_into(buf, min(CHUNK, size - got))
            if k == 0:
                break
            view = memoryview(buf)[:k]
            for d in digests:
                d.update(view)
            os.write(fd, view)
            got += k
    os.fdatasync(fd)
    os.close(fd)
    c.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
    c.close()


def role_relay(sock, upstream_port):
    """Relays one connection both ways with splice, as a function relays the caller to the Pod."""
    import threading

    c, _ = sock.accept()
    u = socket.create_connection(("127.0.0.1", upstream_port))

    def one_way(a, b):
        try:
            splice_all(a.fileno(), b.fileno(), big_pipe())
        except OSError:
            pass
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    t = threading.Thread(target=one_way, args=(u, c))
    t.start()
    one_way(c, u)
    t.join()
    c.close()
    u.close()


def spawn(role, *args):
    """Starts a role in its own process; returns it and the port it listens on."""
    p = subprocess.Popen([sys.executable, __file__, "--role", role, *map(str, args)], stdout=subprocess.PIPE, text=True)
    port = int(p.stdout.readline())
    return p, port


def serve_role(argv):
    role = argv[0]
    sock = listen()
    print(sock.getsockname()[1], flush=True)
    if role == "serve":
        role_serve(sock, argv[1])
    elif role == "receive":
        role_receive(sock, argv[1], int(argv[2]), int(argv[3]))
    elif role == "relay":
        role_relay(sock, int(argv[1]))


def curl(args):
    r = subprocess.run(["curl", "-sS", "--fail", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError("curl: " + r.stderr)


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main(argv):
    as_json = "--json" in argv
    num = lambda name, d: int(argv[argv.index(name) + 1]) if name in argv else d
    runs = num("--runs", 3)
    mib = num("--mib", 1024)
    base = argv[argv.index("--dir") + 1] if "--dir" in argv else None
    work = tempfile.mkdtemp(prefix="felis-floor-", dir=base)
    src = os.path.join(work, "big.bin")
    dst = os.path.join(work, "out.bin")
    with open(src, "wb") as f:
        for _ in range(mib):
            f.write(os.urandom(CHUNK))
    size = mib * CHUNK

    def download(relayed):
        server, port = spawn("serve", src)
        relay = None
        if relayed:
            relay, port = spawn("relay", port)
        t = timed(lambda: curl(["-o", dst, f"http://127.0.0.1:{port}/big.bin"]))
        for p in (server, relay):
            if p:
                p.wait()
        if os.path.getsize(dst) != size:
            raise RuntimeError("download cut off")
        return t

    def upload(relayed, hashes):
        # The receiver's byte count includes curl's head and its 100-continue answer is not asked for.
        receiver, port = spawn("receive", dst, size, hashes)
        relay = None
        if relayed:
            relay, port = spawn("relay", port)
        subprocess.run(["sync"])
        t = timed(lambda: curl(["-H", "expect:", "-T", src, f"http://127.0.0.1:{port}/big.bin"]))
        for p in (receiver, relay):
            if p:
                p.wait()
        return t

    def cp(sync):
        subprocess.run(["sync"])
        return timed(lambda: (subprocess.run(["cp", src, dst], check=True), sync and subprocess.run(["sync", dst], check=True)))

    cases = {
        "download_direct": lambda: download(False),
        "download_relayed": lambda: download(True),
        "upload_direct": lambda: upload(False, 0),
        "upload_relayed": lambda: upload(True, 0),
        "upload_relayed_hashed": lambda: upload(True, 2),
        "cp": lambda: cp(False),
        "cp_fsync": lambda: cp(True),
    }
    if "--cases" in argv:
        wanted = argv[argv.index("--cases") + 1].split(",")
        cases = {k: cases[k] for k in wanted}
    times = {k: [] for k in cases}
    try:
        for _ in range(runs):
            for name, fn in cases.items():
                times[name].append(fn())
                if os.path.exists(dst):
                    os.remove(dst)
    finally:
        for f in (src, dst):
            if os.path.exists(f):
                os.remove(f)
        os.rmdir(work)
    mib_s = {k: round(mib / statistics.median(v), 1) for k, v in times.items()}
    out = {f"{k}_mib_s": v for k, v in mib_s.items()}
    for k in ("download_direct", "download_relayed"):
        if k in mib_s and "cp" in mib_s:
            out[f"{k}_ratio_vs_cp"] = round(mib_s[k] / mib_s["cp"], 2)
    for k in ("upload_direct", "upload_relayed", "upload_relayed_hashed"):
        if k in mib_s and "cp_fsync" in mib_s:
            out[f"{k}_ratio_vs_cp_fsync"] = round(mib_s[k] / mib_s["cp_fsync"], 2)
    if as_json:
        print(json.dumps(out))
    else:
        print(f"loopback transfer floor, {mib} MiB, {runs} runs each, interleaved (medians)")
        for k, v in out.items():
            print(f"  {k:40} {v}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--role":
        serve_role(sys.argv[2:])
    else:
        main(sys.argv[1:])
