// Package kbsync keeps an R2R collection in step with a project's files: it writes each
// file as a document carrying its path and content hash, replaces a document whose file
// changed without a moment in which search misses the file, and syncs a whole directory
// (list, compare with the collection's manifest, upload, replace, prune). R2R and the
// file rules are reached through small interfaces (API, FileReader), so the same engine
// serves the sync command and the MCP tools.
package kbsync
