// Command notools-server is a test fixture for r2r-mcp doctor: a minimal mcp-go stdio
// server that declares prompts but not the tools capability. It ignores its arguments
// (doctor runs it as "PATH serve ...").
//
// With NOTOOLS_FIXTURE_EXIT set it instead writes that text to stderr and exits with
// status 3 before reading anything, like a server that dies on startup. With
// NOTOOLS_FIXTURE_HANG set it never answers, like a server stuck before its first reply.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	if msg := os.Getenv("NOTOOLS_FIXTURE_EXIT"); msg != "" {
		fmt.Fprintln(os.Stderr, "notools-server: starting")
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(3)
	}
	if os.Getenv("NOTOOLS_FIXTURE_HANG") != "" {
		fmt.Fprintln(os.Stderr, "notools-server: hanging")
		time.Sleep(time.Hour)
	}
	s := server.NewMCPServer("notools-fixture", "0.0.1", server.WithPromptCapabilities(false))
	s.AddPrompt(mcp.NewPrompt("hello", mcp.WithPromptDescription("says hello")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("hello", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("hello")),
			}), nil
		})
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "notools-server:", err)
		os.Exit(1)
	}
}
