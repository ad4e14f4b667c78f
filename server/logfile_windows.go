//go:build windows

package server

// noFollow is 0 on Windows, which has no O_NOFOLLOW; openLog checks with Lstat instead.
const noFollow = 0

func isSymlinkLoop(error) bool { return false }
