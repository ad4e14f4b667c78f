// Command r2r-mcp puts an R2R knowledge base in the hands of coding agents over MCP.
package main

import "github.com/r2r-mcp/r2r-mcp/cmd"

func main() {
	cmd.Execute()
}
