#!/usr/bin/env python3
"""A sequential MCP stdio client for measuring a stdio server's CPU per call.

Starts BIN (a verifier binary) on a fresh data folder, initializes a session,
sends verify_schema with testdata/invoice-pass.json 200 times to warm up, then
N times more, one at a time (write a frame, read a line), and prints the wall
time and the server's CPU time (utime + stime from /proc) per call.

usage: scripts/stdio-drive.py BIN [N]     (Linux; run from the repository root)
"""
import json
import os
import subprocess
import sys
import tempfile
import time


def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1500
    data = tempfile.mkdtemp()
    p = subprocess.Popen([binary, "--data-dir", data], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(frame):
        p.stdin.write(frame)
        p.stdin.flush()

    send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "stdio-drive", "version": "1"}}}).encode() + b"\n")
    p.stdout.readline()
    send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    with open("testdata/invoice-pass.json") as f:
        args = json.load(f)
    call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "verify_schema", "arguments": args}}).encode() + b"\n"

    def cpu():
        fields = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    for _ in range(200):
        send(call)
        if b'"isError":true' in p.stdout.readline():
            sys.exit("verify_schema answered with an error")
    c0, t0 = cpu(), time.time()
    for _ in range(n):
        send(call)
        p.stdout.readline()
    c1, t1 = cpu(), time.time()
    print(f"wall/call {1e6 * (t1 - t0) / n:.0f} us, server cpu/call {1e6 * (c1 - c0) / n:.0f} us")
    p.kill()


if __name__ == "__main__":
    main()
