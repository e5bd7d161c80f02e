"""``python -m statewise.integrations.mcp_server``: serve StateWise over MCP on stdio."""

import sys

from statewise.integrations.mcp_server.stdio import main

if __name__ == "__main__":  # importing the module (a package walk) must not start a server
    sys.exit(main())
