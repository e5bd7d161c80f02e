"""StateWise as an MCP server: the store and the guard as tools for any MCP-speaking agent.

``statewise mcp`` (or ``python -m statewise.integrations.mcp_server``) serves over stdio with
the official ``mcp`` Python SDK (2.x, ``mcp.server.mcpserver.MCPServer``). The tools:

* ``remember`` — record an observation or a developer statement, typed, scoped, with provenance;
* ``recall`` — the records that apply to a task, with freshness and authority, held-back counts
  and near misses;
* ``check_action`` — run the guard on a proposed action: verdict, checked action, reason, report;
* ``verify`` — observe a key with its read-only verifier and compare with the store;
* ``history``, ``lineage`` — a (key, scope)'s records, and a record's chain of repairs;
* ``revert_repair`` — undo a repair (``Store.revert``);
* ``forget`` — retract a record that should no longer apply, with the reason (kept in history).

Arguments are checked strictly: an argument the tool does not declare is refused, and every
validation error (from the SDK's own argument checking as from StateWise) comes back as one
line naming the argument.

When a premise of a checked action needs the developer (a developer-owned record whose
validity is in doubt), the question goes to the developer through MCP elicitation if the
client declared that capability, and the answer becomes a persistent correction through the
guard's normal path. The protocol era decides how: on a handshake-era connection
(protocol 2025-11-25 and earlier) the guard runs in a worker thread and each question is an
``elicitation/create`` request sent mid-call through the event loop; on a 2026-07-28
connection, which has no server-to-client requests, ``check_action`` first runs the guard as a
dry run that writes nothing (the ``no_repair`` ablation) to learn the questions, returns them
as an ``InputRequiredResult``, and runs the real check when the client retries with the
answers. A client without elicitation gets the unresolved questions back as data
(``questions``) and is told to call ``remember`` with the developer's answer.

One store is opened per server and closed on shutdown. Calls are served concurrently; the
store's connection is used by one call at a time.

Every tool returns a typed result (the models in ``results``), so the SDK publishes a real
``outputSchema`` for it and sends ``structuredContent`` validated against that schema.

The package, by seam: ``service`` (strict argument checking, the shared store, one-line
errors), ``results`` (what each tool returns), ``clarification`` (questions for the developer
in both protocol eras), ``tools`` (the tool definitions and ``build_server``) and ``stdio``
(serving, and the ``python -m`` entry point).
"""

from statewise.integrations.mcp_server.stdio import main, serve_stdio
from statewise.integrations.mcp_server.tools import build_server

__all__ = ["build_server", "main", "serve_stdio"]
