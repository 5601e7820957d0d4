#!/usr/bin/env python3
"""A stand-in MCP server over streamable HTTP for what the reference servers will not do on
demand: a tool result of FAKE_BYTES bytes, written in pieces (never held whole), with the
id last as the JS SDK writes it. Plain Python, no dependencies.

    fake_http_server.py MODE

MODE is `json` (the reply is one application/json body) or `sse` (one text/event-stream
event); in mode `get` the GET event stream is offered: the first GET sends one notification
(event id `e1`) and closes, a later one sends a notification saying which `Last-Event-ID` it
was given and stays open; in mode `forget` each initialize starts session `s1`, `s2`, … and a
tools/call in session `s1` is answered 404, as by a server that forgot it. Prints the port it listens on (127.0.0.1, chosen by the OS), then serves until
killed. Answers initialize (with an Mcp-Session-Id), tools/list (tool `data`), tools/call
and ping; notifications get 202; GET gets 405.
"""
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1] if len(sys.argv) > 1 else "json"
SIZE = int(os.environ.get("FAKE_BYTES", "100000"))
SESSION = "fake-session-1"
INITS = []


def big_result_pieces(rid):
    row = '{\\"id\\":%d,\\"name\\":\\"' + "x" * 40 + '\\",\\"kind\\":\\"record\\",\\"note\\":null}'
    n = max(1, SIZE // 80)
    yield '{"result":{"content":[{"type":"text","text":"{\\"rows\\":['
    for start in range(0, n, 10000):
        piece = ",".join(row % i for i in range(start, min(n, start + 10000)))
        yield piece + ("," if start + 10000 < n else "")
    yield ']}"}]},"jsonrpc":"2.0","id":%s}' % json.dumps(rid)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    gets = 0

    def do_GET(self):
        if MODE != "get":
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        Handler.gets += 1
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if Handler.gets == 1:
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"n": 1}}
            data = "id: e1\nevent: message\ndata: %s\n\n" % json.dumps(note)
        else:
            note = {"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"n": Handler.gets, "lastEventId": self.headers.get("Last-Event-ID")}}
            data = "event: message\ndata: %s\n\n" % json.dumps(note)
        body = data.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(body), body))
        if Handler.gets == 1:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            return
        self.wfile.flush()
        import time
        time.sleep(60)

    def do_DELETE(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        method, rid = msg.get("method"), msg.get("id")
        if rid is None or method is None:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if method == "tools/call" and MODE == "forget":
            if self.headers.get("Mcp-Session-Id") == "s1":
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            result = {"content": [{"type": "text", "text": json.dumps(
                {"session": self.headers.get("Mcp-Session-Id"), "inits": len(INITS)})}]}
            body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if method == "tools/call":
            return self.big(rid)
        if method == "initialize":
            result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "fake-http", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "data", "inputSchema": {"type": "object"}}]}
        else:
            result = {}
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if method == "initialize":
            INITS.append(msg)
            self.send_header("Mcp-Session-Id", f"s{len(INITS)}" if MODE == "forget" else SESSION)
        self.end_headers()
        self.wfile.write(body)

    def big(self, rid):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if MODE == "sse" else "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def chunk(data):
            data = data.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

        if MODE == "sse":
            chunk("event: message\ndata: ")
        for piece in big_result_pieces(rid):
            chunk(piece)
        if MODE == "sse":
            chunk("\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
