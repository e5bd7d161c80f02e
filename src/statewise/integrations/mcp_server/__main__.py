"""``python -m statewise.integrations.mcp_server``: serve StateWise over MCP on stdio."""

import sys

from statewise.integrations.mcp_server.stdio import main

sys.exit(main())
