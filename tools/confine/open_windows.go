//go:build windows

package confine

import "os"

// noBlockFlag is 0: Windows has no FIFOs in the file system namespace.
const noBlockFlag = 0

// linkCount is 1: os.FileInfo does not carry the link count on Windows.
func linkCount(os.FileInfo) uint64 { return 1 }
