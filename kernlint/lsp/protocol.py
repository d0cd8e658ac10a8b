"""The JSON-RPC error answers pygls leaves out: a request after `shutdown`, and a request with invalid params.

pygls 2.1 (pygls/protocol/json_rpc.py) drops both without a response, so a client awaiting one hangs:

* `JsonRPCProtocol.handle_message` logs "Server shutting down" and returns for every message but `exit` once
  `shutdown` has run. LSP: "If a server receives requests after a shutdown request those requests should error
  with InvalidRequest" (-32600).
* `structure_message` (the `object_hook` of the read loop's `json.loads`, pygls/io_.py) raises
  `JsonRpcInvalidParams` when the params do not match the method's lsprotocol type; the read loop only logs it
  and shows a `window/showMessage`, the request id is never answered. JSON-RPC: InvalidParams (-32602).

`KernlintProtocol` answers both and otherwise defers to pygls; notifications after `shutdown` stay ignored.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cattrs import transform_error
from cattrs.errors import ClassValidationError
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol
from pygls.protocol.json_rpc import RPCRequest

if TYPE_CHECKING:
    from cattrs import Converter
    from pygls.lsp.server import LanguageServer


@dataclass(frozen=True)
class BadParamsRequest:
    """A request whose params failed to structure: to be answered with `error`, never dispatched."""
    id: int | str
    method: str
    error: lsp.ResponseError


def _params_error(method: str, exc: JsonRpcException) -> lsp.ResponseError:
    # cattrs' "While structuring HoverRequest (1 sub-exception)" names no field; transform_error lists each
    # bad one ("required field missing @ $.params.position") so the client's log says what to fix
    cause = exc.__cause__
    details = transform_error(cause, path="$") if isinstance(cause, ClassValidationError) else [str(cause or exc)]
    message = f"{JsonRpcInvalidParams.MESSAGE}: {method}: {'; '.join(details)}"
    return JsonRpcInvalidParams(message).to_response_error()


class KernlintProtocol(LanguageServerProtocol):
    """pygls's LSP protocol, plus an error answer to every request it would drop (see the module docstring)."""

    def __init__(self, server: LanguageServer, converter: Converter) -> None:
        super().__init__(server, converter)
        # set when the `shutdown` request arrives, not when its handler finishes (pygls's `_shutdown`): a request
        # that comes in while shutdown is still running is already "after a shutdown request"
        self.shutdown_requested = False

    def structure_message(self, data: dict[str, Any]) -> Any:
        # json.loads calls this for every object, innermost first; pygls passes through any dict without
        # "jsonrpc" (params, ranges, ...), so only the message itself can fail here
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            msg_id, method = data.get("id"), data.get("method")
            # only a request can be answered, and only under an id the client can match (bool is an int to
            # Python, not to JSON); a bad notification or response keeps pygls's handling (logged, showMessage)
            answerable = isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool) and isinstance(method, str)
            if not answerable or data.get("jsonrpc") != JsonRPCProtocol.VERSION:
                raise
            # returned instead of raised: raising out of json.loads would lose the id; handle_message answers it
            return BadParamsRequest(msg_id, method, _params_error(method, exc))

    def handle_message(self, message: Any) -> None:
        is_request = isinstance(message, BadParamsRequest) or (
            isinstance(message, RPCRequest) and message.jsonrpc == JsonRPCProtocol.VERSION)
        # `exit` is a notification; one sent with an id must still end the process, so it is never refused
        if is_request and message.method != lsp.EXIT and self.shutdown_requested:
            error = JsonRpcInvalidRequest(f"{JsonRpcInvalidRequest.MESSAGE}: {message.method} after shutdown")
            self._send_response(message.id, error=error.to_response_error())
            return
        if isinstance(message, BadParamsRequest):
            self._send_response(message.id, error=message.error)
            return
        if is_request and message.method == lsp.SHUTDOWN:
            self.shutdown_requested = True
        super().handle_message(message)
