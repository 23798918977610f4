"""What every plankit MCP tool shares: checked arguments, one error shape, lean schemas.

Both servers (``plankit mcp``, ``agentctl mcp``) register their tools through
:func:`add_tool` on a :class:`PlankitServer`, so that:

- **One error shape.**  Every failure, whatever the tool, is a result with ``isError``
  set, one line of text (the first problem as ``CODE message``, ``FILE:LINE: CODE
  message`` when it is in a file, with ``(and N more)``), and as ``structuredContent``
  the project's diagnostics: ``{"errors": [{"code", "message", "line", "file"}]}``
  (:func:`plankit.errors.diagnostic_json`).  An unknown tool (``tool-unknown``),
  arguments that do not fit (``argument-unknown``, ``argument-missing``,
  ``argument-invalid``), a plankit error raised by the tool (its own code) and a bug
  (``internal-error``, logged on stderr) all come back that way.
- **Arguments in the agent's words.**  Arguments are checked before the tool runs,
  every problem in one answer, named by its path (``phases[0].name``) and with the
  expected kind in words ("a whole number", "text"), never a Python type name.  An
  optional argument given as ``null`` is taken as not given.
- **Lean, described schemas.**  The input schemas keep what a client needs (types,
  descriptions, enums, bounds, required, ``additionalProperties: false``) and drop the
  titles pydantic adds; an optional argument is its plain type, without a ``null``
  alternative.  Every argument has a description (a test checks it).
- **No empty capabilities.**  The server serves tools only: the prompt and resource
  handlers the SDK installs are removed, so ``initialize`` advertises neither.

This module imports the MCP SDK; only the servers import it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from plankit.errors import Diagnostic, PlankitError, diagnostics_json, diagnostics_of
from plankit.mcp.catalog import describe

logger = logging.getLogger("plankit.mcp")

_UNSERVED = (
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
)


class ToolFailure(ToolError):
    """A tool's refusal, as the diagnostics the agent gets."""

    def __init__(self, diagnostics: Sequence[Diagnostic]):
        self.diagnostics = list(diagnostics)
        super().__init__(summary(self.diagnostics))


def problem(code: str, message: str) -> Diagnostic:
    """A diagnostic of a call (no file, no line)."""
    return Diagnostic(0, code, message)


def summary(diagnostics: Sequence[Diagnostic]) -> str:
    """One line: the first diagnostic, and how many more there are."""
    if not diagnostics:
        return "error the tool failed"
    more = f" (and {len(diagnostics) - 1} more)" if len(diagnostics) > 1 else ""
    return " ".join(diagnostics[0].format().split()) + more


def error_result(diagnostics: Sequence[Diagnostic]) -> CallToolResult:
    """The one error shape: ``isError``, one line of text, the diagnostics as
    ``structuredContent``."""
    return CallToolResult(
        content=[TextContent(type="text", text=summary(diagnostics))],
        structured_content={"errors": diagnostics_json(diagnostics)},
        is_error=True,
    )


def json_result(data: dict[str, Any]) -> CallToolResult:
    """A result as ``structuredContent``, with the same JSON as its text."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


# --- arguments ------------------------------------------------------------------------

_KIND_WORDS = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


def _value_words(value: Any) -> str:
    """What a JSON value is, in words, with a short view of it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{json.dumps(value)}"
    shown = json.dumps(value, ensure_ascii=False)
    if len(shown) > 40:
        shown = shown[:39] + "…"
    if isinstance(value, int | float):
        return f"the number {shown}"
    if isinstance(value, str):
        return f"the text {shown}"
    return f"a list {shown}" if isinstance(value, list) else f"an object {shown}"


def _fits(kind: object, value: object) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "null":
        return value is None
    return True


def _kinds(spec: dict[str, Any]) -> list[str]:
    options = spec.get("anyOf", [spec])
    return [str(option["type"]) for option in options if "type" in option]


def argument_problems(schema: dict[str, Any], arguments: dict[str, Any]) -> list[Diagnostic]:
    """What is wrong with a call's arguments at the top level: unknown, missing, or of
    the wrong kind (every problem, in the order of the schema)."""
    properties: dict[str, Any] = schema.get("properties", {})
    names = ", ".join(properties) or "none"
    problems = [
        problem("argument-unknown", f"unknown argument `{name}`; the arguments are: {names}")
        for name in arguments
        if name not in properties
    ]
    for name in schema.get("required", []):
        if arguments.get(name) is None:
            got = " (got null)" if name in arguments else ""
            problems.append(problem("argument-missing", f"`{name}` is required{got}"))
    for name, spec in properties.items():
        if name not in arguments or arguments[name] is None:
            continue
        value = arguments[name]
        kinds = [k for k in _kinds(spec) if k != "null"]
        if kinds and not any(_fits(kind, value) for kind in kinds):
            wanted = " or ".join(_KIND_WORDS.get(k, k) for k in kinds)
            what = f": {spec['description']}" if spec.get("description") else ""
            problems.append(
                problem(
                    "argument-invalid",
                    f"`{name}` must be {wanted}, not {_value_words(value)}{what}",
                )
            )
        elif "enum" in spec and value not in spec["enum"]:
            allowed = ", ".join(json.dumps(v) for v in spec["enum"])
            problems.append(
                problem(
                    "argument-invalid",
                    f"`{name}` must be one of {allowed}, not {_value_words(value)}",
                )
            )
    return problems


def _path(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "the arguments"


_PYDANTIC_WORDS = {
    "string_type": "must be text",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
}


def pydantic_problem(error: dict[str, Any]) -> Diagnostic:
    """One pydantic validation error as a diagnostic in the agent's words."""
    loc = tuple(error.get("loc", ()))
    kind = str(error.get("type", ""))
    where = f"`{_path(loc)}`"
    ctx = error.get("ctx") or {}
    got = _value_words(error.get("input"))
    if kind == "missing":
        return problem("argument-missing", f"{where} is required")
    if kind == "extra_forbidden":
        return problem("argument-unknown", f"unknown field {where}")
    if kind in _PYDANTIC_WORDS:
        return problem("argument-invalid", f"{where} {_PYDANTIC_WORDS[kind]}, not {got}")
    if kind in ("too_short", "too_long"):
        size = ctx.get("min_length") if kind == "too_short" else ctx.get("max_length")
        word = "at least" if kind == "too_short" else "at most"
        return problem("argument-invalid", f"{where} must have {word} {size} item(s)")
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        bound = next(iter(ctx.values()), "")
        word = {
            "greater_than_equal": "at least",
            "greater_than": "more than",
            "less_than_equal": "at most",
            "less_than": "less than",
        }[kind]
        return problem("argument-invalid", f"{where} must be {word} {bound}, not {got}")
    if kind in ("literal_error", "enum"):
        return problem(
            "argument-invalid", f"{where} must be one of {ctx.get('expected', '')}, not {got}"
        )
    message = " ".join(str(error.get("msg", "is not valid")).split())
    return problem("argument-invalid", f"{where}: {message}")


class CheckedTool(Tool):
    """A tool whose arguments are checked first and whose every failure comes back in
    the one error shape (see the module documentation)."""

    async def run(
        self, arguments: dict[str, Any], context: Any, convert_result: bool = False
    ) -> Any:
        """Check ``arguments``, run the tool, turn a failure into an error result."""
        required = set(self.parameters.get("required", []))
        given = {k: v for k, v in arguments.items() if v is not None or k in required}
        problems = argument_problems(self.parameters, given)
        if not problems:
            try:
                self.fn_metadata.validate_arguments(given)
            except ValidationError as exc:
                problems = [pydantic_problem(dict(e)) for e in exc.errors()]
        if problems:
            return self._converted(error_result(problems), convert_result)
        try:
            return await super().run(given, context, convert_result)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ToolFailure):
                return self._converted(error_result(cause.diagnostics), convert_result)
            if isinstance(cause, PlankitError):
                return self._converted(error_result(diagnostics_of(cause)), convert_result)
            logger.error("tool %s failed: %s", self.name, cause or exc, exc_info=cause)
            why = f"{self.name} failed unexpectedly; the server's log (stderr) has the details"
            return self._converted(error_result([problem("internal-error", why)]), convert_result)

    def _converted(self, result: CallToolResult, convert: bool) -> Any:
        return self.fn_metadata.convert_result(result) if convert else result


def lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without pydantic's titles, optional arguments without their ``null``
    alternative, and unknown arguments refused."""

    def clean(node: Any, *, property_map: bool = False) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "title" and not property_map:
                    continue
                out[key] = clean(value, property_map=key in ("properties", "$defs"))
            options = out.get("anyOf")
            if isinstance(options, list) and out.get("default", 0) is None:
                kept = [o for o in options if o != {"type": "null"}]
                if len(kept) == 1:
                    del out["anyOf"]
                    out.pop("default")
                    out = {**kept[0], **out}
            return out
        if isinstance(node, list):
            return [clean(item) for item in node]
        return node

    lean: dict[str, Any] = clean(schema)
    lean["additionalProperties"] = False
    return lean


class PlankitServer(MCPServer[Any]):
    """An ``MCPServer`` serving tools only, answering an unknown tool in the one error
    shape."""

    def __init__(self, name: str, *, instructions: str) -> None:
        from plankit import __version__

        super().__init__(name, instructions=instructions, version=__version__, log_level="WARNING")
        handlers = self._lowlevel_server._request_handlers
        for method in _UNSERVED:
            handlers.pop(method, None)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Call tool ``name``; an unknown one is an error result naming the tools."""
        if self._tool_manager.get_tool(name) is None:
            names = ", ".join(t.name for t in self._tool_manager.list_tools())
            why = f"no tool `{name}`; the tools are: {names}"
            return error_result([problem("tool-unknown", why)])
        return await super().call_tool(name, arguments, context)


def add_tool(
    server: MCPServer[Any],
    fn: Callable[..., Any],
    annotations: ToolAnnotations,
    *,
    name: str | None = None,
) -> str:
    """Register ``fn`` as the catalogued tool of its name (description from
    :mod:`plankit.mcp.catalog`), checked and with a lean schema; returns the name."""
    tool_name = name or fn.__name__
    tool = CheckedTool.from_function(
        fn,
        name=tool_name,
        description=describe(tool_name),
        annotations=annotations,
        structured_output=False,
    )
    assert isinstance(tool, CheckedTool)
    tool.parameters = lean_schema(tool.parameters)
    tools = server._tool_manager._tools
    tools[tool_name] = tool
    return tool_name
