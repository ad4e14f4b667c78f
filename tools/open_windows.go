//go:build windows

package tools

import "os"

// openNoBlock opens p read-only. Windows has no FIFOs in the file system namespace.
func openNoBlock(p string) (*os.File, error) {
	return os.Open(p)
}
