"""A minimal MCP server built with the PyPI `mcp` SDK (2.x: `MCPServer`, formerly `FastMCP`).

It is "the PyPI mcp SDK's server" for the `mcpnative` vectors: one `echo` tool, one resource
and one prompt, served over stdio. Run it with the venv from scripts/install-mcp-servers.sh.
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer("swp-conform-python-example")


@server.tool()
def echo(message: str) -> str:
    """Echoes back the input."""
    return f"Echo: {message}"


@server.resource("example://greeting")
def greeting() -> str:
    """A static greeting."""
    return "Hello from the PyPI mcp SDK"


@server.prompt()
def simple_prompt(topic: str = "MCP") -> str:
    """A prompt without required arguments."""
    return f"Say something about {topic}."


if __name__ == "__main__":
    server.run("stdio")
