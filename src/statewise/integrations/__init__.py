"""Agent integrations: the shell command normalizer, pre/post-tool hooks, and the MCP server."""
