// Package tasks runs the tasks extension scenarios of the official MCP
// conformance suite (@modelcontextprotocol/conformance) against lcp's MCP
// server with the extension served (mcp.TasksHandler), and the tools the
// scenarios call: its test is the fixture.
package tasks
