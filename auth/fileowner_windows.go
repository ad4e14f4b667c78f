package auth

import "io/fs"

// fileOwner is not checked on Windows, where the file lives in the user's own profile.
func fileOwner(fs.FileInfo) (owner, me int, ok bool) { return 0, 0, false }
