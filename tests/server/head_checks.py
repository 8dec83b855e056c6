"""head_checks.py - issue 27 defect 9, the requests libmicrohttpd 0.9.75 refused itself with HTML pages (docs/reference/
http.md): the server's front stage (src/server/http_front.c) answers a malformed first request head with a KServe JSON
error, the status libmicrohttpd used (400, 413, 431, 505), Connection: close, and closes the connection; keep-alive,
pipelining, chunked uploads and slow but valid heads still work; 200 slow-loris connections neither stop other clients
nor stay open past --http-timeout; 2,000 connections opened at once each get an answer (200, or a JSON 503 past the
connection limit), none is dropped without one. Called by test_server.py (the server runs with --http-timeout 2)."""
import json
import selectors
import socket
import time

from server_fixture import free_port, parse_raw_response, start_server, stop_server

# (tag, request bytes, status): each one before the front stage was answered by libmicrohttpd with an HTML page (or, for
# a request line without a space, by closing the connection without an answer).
MALFORMED = (
    ("request line without a space", b"GARBAGE\r\n\r\n", 400),
    ("request line without an HTTP version", b"GET /v2\r\nHost: x\r\n\r\n", 400),
    ("HTTP version 1.10", b"GET /v2 HTTP/1.10\r\nHost: x\r\n\r\n", 400),
    ("a header line without ':'", b"GET /v2 HTTP/1.1\r\nHost x\r\n\r\n", 400),
    ("HTTP/2.0", b"GET /v2 HTTP/2.0\r\nHost: x\r\n\r\n", 505),
    ("HTTP/0.9", b"GET /v2 HTTP/0.9\r\nHost: x\r\n\r\n", 505),
    ("Content-Length abc", b"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400),
    ("Content-Length above 64 bits",
     b"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413),
    ("chunk size not hex", b"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                           b"zz\r\nab\r\n0\r\n\r\n", 400),
    ("no CRLF after a chunk", b"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                              b"2\r\nabXY0\r\n\r\n", 400),
    ("chunk size of 17 hex digits", b"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                                    b"\r\n" + b"1" * 17 + b"\r\n", 413),
    ("trailer line without ':'", b"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 b"2\r\n{}\r\n0\r\nbad trailer\r\n\r\n", 400),
    ("300 KB of headers (past the connection memory)", b"GET /v2 HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 300_000
     + b"\r\n\r\n", 431),
    ("300 KB request line", b"GET /v2?q=" + b"a" * 300_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 431),
    # RFC 9112 asks a server to refuse these (another party may frame the request otherwise); 0.9.75 took them
    ("whitespace before ':'", b"POST /v2 HTTP/1.1\r\nHost: x\r\nContent-Length : 5\r\n\r\nhello", 400),
    ("obsolete line folding", b"GET /v2 HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n", 400),
)


def _exchange(port, data, timeout=5.0):
    """Sends data; returns (every byte the server sent, True when it closed the connection)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out, closed = b"", False
    try:
        sock.sendall(data)
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                closed = True
                break
            out += chunk
    except (socket.timeout, ConnectionResetError, BrokenPipeError):
        pass
    finally:
        sock.close()
    return out, closed


def _is_json_error(hdrs, body):
    try:
        return "application/json" in hdrs.get("content-type", "") and isinstance(json.loads(body)["error"], str)
    except (ValueError, KeyError, TypeError):
        return False


def malformed_checks(check, port):
    for tag, data, want in MALFORMED:
        out, closed = _exchange(port, data)
        st, hdrs, body = parse_raw_response(out)
        ok = (st == want and _is_json_error(hdrs, body) and hdrs.get("connection", "").lower() == "close" and closed
              and out.count(b"HTTP/1.1 ") == 1 and b"<html" not in out.lower())
        check(f"malformed head: {tag} -> JSON {want}, connection closed", ok, repr(out[:300]))


def keepalive_checks(check, port):
    """What the front stage lets through still works: two requests pipelined in one write, then a third on the same
    connection; a chunked upload; a head sent in three pieces; empty lines before the request line (tolerated)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        req = b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n"
        sock.sendall(req + b"GET /v2 HTTP/1.1\r\nHost: x\r\n\r\n")
        out = b""
        while out.count(b"HTTP/1.1 200") < 2 or not out.endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            out += chunk
        sock.sendall(req)
        more = sock.recv(65536)
        check("pipelined requests and a third on the same connection are served",
              out.count(b"HTTP/1.1 200") == 2 and b'"live":true' in out and b'"tailcut"' in out
              and more.startswith(b"HTTP/1.1 200"), repr(out[:300] + more[:100]))
    finally:
        sock.close()
    body = b'{"inputs": []}'
    chunked = (b"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
               b"Connection: close\r\n\r\n" + b"%x\r\n" % 5 + body[:5] + b"\r\n" + b"%x;ext=1\r\n" % (len(body) - 5) + body[5:] + b"\r\n0\r\n\r\n")
    st, hdrs, rbody = parse_raw_response(_exchange(port, chunked)[0])
    check("a chunked upload reaches the server (400: no inputs, as JSON)", st == 400 and b"input" in rbody,
          f"{st} {rbody[:200]!r}")
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        for piece in (b"GET /v2/health/li", b"ve HTTP/1.1\r\nHo", b"st: x\r\nConnection: close\r\n\r\n"):
            sock.sendall(piece)
            time.sleep(0.2)
        out = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            out += chunk
    finally:
        sock.close()
    check("a head sent in three pieces is served", out.startswith(b"HTTP/1.1 200") and b'"live":true' in out,
          repr(out[:200]))
    out, _ = _exchange(port, b"\r\n\r\nGET /v2/health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    check("empty lines before the request line are tolerated", out.startswith(b"HTTP/1.1 200"), repr(out[:200]))


def slow_checks(check, port, timeout_s=2):
    """200 connections that send half a head and stop (slow loris): other clients are still served at once, and the
    server closes the slow ones after --http-timeout."""
    slow = []
    try:
        for _ in range(200):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(b"POST /v2/models/rn/infer HTTP/1.1\r\nHost: x\r\n")
            slow.append(s)
        t0 = time.monotonic()
        out, _ = _exchange(port, b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        dt = time.monotonic() - t0
        check("200 slow-loris connections: another client is served at once",
              out.startswith(b"HTTP/1.1 200") and dt < 1.0, f"{dt:.2f}s {out[:100]!r}")
        time.sleep(timeout_s + 1.5)
        closed = 0
        for s in slow:
            s.settimeout(2)
            try:
                closed += s.recv(4096) == b""
            except (ConnectionResetError, socket.timeout):
                closed += 0
        check("200 slow-loris connections: all closed by the server after --http-timeout", closed == 200,
              f"{closed} of 200 closed")
    finally:
        for s in slow:
            s.close()


def many_connections_checks(check, tailcut, repo, n=2000):
    """n connections opened one after the other, each sending one request and staying open: every one is answered,
    200 or (past libmicrohttpd's connection limit, 1020) a JSON 503; none is closed without an answer."""
    port = free_port()
    server, _ = start_server(tailcut, repo, port)  # the default --http-timeout (30 s): however slow the machine
    sel = selectors.DefaultSelector()
    socks = []
    try:
        for _ in range(n):  # each keeps its connection open (keep-alive) until all are answered
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            socks.append(s)
            s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ, [b""])
        answers, deadline = {}, time.monotonic() + 60
        while len(answers) < n and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=1):
                buf = key.data
                try:
                    chunk = key.fileobj.recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except ConnectionResetError:
                    chunk = None
                buf[0] += chunk or b""
                st, hdrs, body = parse_raw_response(buf[0])
                done = st is not None and len(body) >= int(hdrs.get("content-length", "0"))
                if done or not chunk:
                    answers[key.fileobj.fileno()] = ((st, hdrs, body) if done else
                                                     ("reset" if chunk is None else "closed", {}, buf[0]))
                    sel.unregister(key.fileobj)
        ok200 = sum(1 for st, _, _ in answers.values() if st == 200)
        busy = sum(1 for st, h, b in answers.values() if st == 503 and _is_json_error(h, b))
        check(f"{n} connections at once: each answered, 200 or JSON 503", ok200 + busy == n and ok200 >= 1000,
              f"{ok200} x 200, {busy} x 503, {n - len(answers)} unanswered, "
              f"others {[a[:2] for a in answers.values() if a[0] not in (200, 503)][:5]}")
    finally:
        sel.close()
        for s in socks:
            s.close()
        stop_server(server)
