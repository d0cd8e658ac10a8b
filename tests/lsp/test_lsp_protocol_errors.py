"""`kernlint server` answers the requests pygls would leave hanging: any request after `shutdown` gets
InvalidRequest (-32600), a request whose params do not match its method gets InvalidParams (-32602).

Driven over stdio with raw JSON-RPC: the typed pytest-lsp client cannot send malformed params, nor requests
after shutdown.
"""
from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls", reason="pygls is not installed: pip install 'kernlint[lsp]' to test the LSP server")

INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
PROMPT_S = 10.0   # an answer that is coming arrives in milliseconds; before the fix none ever came

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, n):
    offs = tl.program_id(0) * 64 + tl.arange(0, 64)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def add(x, y, n):
    add_kernel[(triton.cdiv(n, 64),)](x, y, n, num_warps=4)
'''
DEF_LINE = 5   # 0-based line of `def add_kernel`: hovering it shows the kernel's table


class RawClient:
    """A minimal LSP client over the server's stdio: messages are plain dicts, so anything can be sent."""

    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "kernlint", "server", "--debounce-ms", "20"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
        self._inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.responses: dict[int, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.stderr = b""
        self._next_id = 1
        threading.Thread(target=self._read, daemon=True).start()
        # drained on its own thread so a chatty stderr (pygls logs each bad message's traceback) never blocks
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self._inbox.put(None)     # the server closed stdout
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            assert length is not None, "a message without Content-Length"
            self._inbox.put(json.loads(out.read(length)))

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for chunk in self.proc.stderr:
            self.stderr += chunk

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, **({"params": params} if params is not None else {})})

    def request(self, method: str, params: Any = None, timeout: float = PROMPT_S) -> dict[str, Any]:
        """Send a request and return its whole response message (`result` or `error`)."""
        msg_id, self._next_id = self._next_id, self._next_id + 1
        self.send({"id": msg_id, "method": method, **({"params": params} if params is not None else {})})
        return self.response(msg_id, timeout)

    def response(self, msg_id: int, timeout: float) -> dict[str, Any]:
        while msg_id not in self.responses:
            try:
                message = self._inbox.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no response to request {msg_id} within {timeout} s; "
                                     f"server stderr: {self.stderr[-3000:].decode(errors='replace')}") from None
            if message is None:
                raise AssertionError(f"server closed stdout; stderr: {self.stderr[-3000:].decode(errors='replace')}")
            if "id" in message and "method" in message:      # a server->client request: accept it
                self.send({"id": message["id"], "result": None})
            elif "id" in message:
                self.responses[message["id"]] = message
            else:
                self.notifications.append(message)
        return self.responses.pop(msg_id)

    def initialize(self, root: Path) -> None:
        reply = self.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}, 60)
        assert "result" in reply, reply
        self.notify("initialized", {})

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def client(tmp_path: Path) -> Any:
    c = RawClient(tmp_path)
    try:
        c.initialize(tmp_path)
        yield c
    finally:
        c.close()


def hover_params(uri: str, line: int = DEF_LINE) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": 4}}


def open_kernel(client: RawClient, tmp_path: Path) -> str:
    uri = (tmp_path / "add.py").as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": KERNEL}})
    return uri


def assert_error(reply: dict[str, Any], code: int) -> str:
    assert "result" not in reply and reply.get("error", {}).get("code") == code, reply
    return str(reply["error"]["message"])


def test_requests_after_shutdown_get_invalid_request_and_exit_still_ends_with_0(client: RawClient,
                                                                               tmp_path: Path) -> None:
    uri = open_kernel(client, tmp_path)
    reply = client.request("shutdown", timeout=60)
    assert "error" not in reply and reply["result"] is None, reply
    # LSP: "If a server receives requests after a shutdown request those requests should error with
    # InvalidRequest" — a hover, a second shutdown and a request with bad params alike
    message = assert_error(client.request("textDocument/hover", hover_params(uri)), INVALID_REQUEST)
    assert "textDocument/hover" in message and "shutdown" in message
    assert_error(client.request("shutdown"), INVALID_REQUEST)
    assert_error(client.request("textDocument/hover", {"textDocument": 5}), INVALID_REQUEST)
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})   # notifications: ignored, no reply
    client.notify("exit")
    assert client.proc.wait(timeout=30) == 0
    assert client.responses == {}


@pytest.mark.parametrize("method, params, field", [
    ("textDocument/hover", {"textDocument": 5, "position": {"line": 0, "character": 0}}, "text_document"),
    ("textDocument/hover", {"textDocument": {"uri": "file:///x.py"}}, "position"),      # position missing
    ("textDocument/hover", "garbage", "params"),
    ("textDocument/codeAction", {"garbage": True}, "context"),
    ("textDocument/codeAction", 12, "params"),
])
def test_invalid_params_get_invalid_params_and_the_server_keeps_serving(
        client: RawClient, tmp_path: Path, method: str, params: Any, field: str) -> None:
    uri = open_kernel(client, tmp_path)
    message = assert_error(client.request(method, params), INVALID_PARAMS)
    assert method in message and field in message      # says which field is wrong
    hover = client.request("textDocument/hover", hover_params(uri), timeout=120)   # the first lint runs here
    assert "add_kernel" in hover["result"]["contents"]["value"], hover
    assert client.request("shutdown", timeout=60)["result"] is None
    client.notify("exit")
    assert client.proc.wait(timeout=30) == 0
