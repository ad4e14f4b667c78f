package kbsync

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// Metadata keys every document r2r-mcp writes carries.
const (
	// MetaSourcePath is the file's path relative to the project root, forward slashes
	// (for a file from an extra root: "<root's base name>/<path in it>").
	MetaSourcePath = "source_path"
	// MetaContentSHA is the hex SHA-256 of the bytes sent.
	MetaContentSHA = "content_sha256"
	// MetaSource marks documents r2r-mcp wrote; its value is SourceValue.
	MetaSource = "source"
	// MetaProject is the project's name (the base name of its root).
	MetaProject = "project"
	// MetaIngestedBy is what r2r-mcp before content hashes wrote instead of MetaSource;
	// documents carrying it are r2r-mcp's too.
	MetaIngestedBy = "ingested_by"
	// MetaSourceRoot is set only on files from an extra root ("extra:<id>"); sync leaves
	// those documents alone.
	MetaSourceRoot = "source_root"
	// MetaChunking is set on documents r2r-mcp sent as its own chunks (chunking.For): the
	// chunking's version.
	MetaChunking = "chunking"
	// MetaLayer is set on the documents of a team project (see Team): LayerTeam or
	// LayerPrivate.
	MetaLayer = "layer"
	// MetaCommit and MetaCommitTime are the team ref's commit (and its committer time, Unix
	// seconds) a team document was written from; MetaRef the ref's name.
	MetaCommit     = "commit"
	MetaCommitTime = "commit_time"
	MetaRef        = "ref"
	// MetaBlob is git's object id of a team document's content.
	MetaBlob = "git_blob"
)

// Layers of a team project's documents.
const (
	// LayerTeam: the file as the team's ref has it, stored once in the team collection
	// whoever syncs it.
	LayerTeam = "team"
	// LayerPrivate: a developer's own version of a file that differs from the team's, in
	// their private collection.
	LayerPrivate = "private"
)

const (
	// MetaSize is the size of the file in bytes: R2R's size_in_bytes of the same document
	// counts what was sent (chunks with their context lines, text in characters), so this
	// is the one size r2r-mcp reports for a file's document (Size).
	MetaSize = "source_size_bytes"
)

// Metadata keys R2R writes itself that r2r-mcp reads.
const (
	// MetaChunkOrder is R2R's key for a chunk's place in its document, in the chunk's
	// metadata, to which R2R copies the document's.
	MetaChunkOrder = "chunk_order"
	// MetaFailure is R2R's reason a document's ingestion failed.
	MetaFailure = "failure"
	// MetaCollectionIDs is where R2R at HEAD takes a document's collections from.
	MetaCollectionIDs = "collection_ids"
)

// MemoryPrefix starts every metadata key of a team memory (tools/memory); a file's document
// never carries one, so it is never taken for a memory.
const MemoryPrefix = "r2r_mcp_"

// reserved are the metadata keys r2r-mcp or R2R set and r2r-mcp reads back: a caller's
// metadata setting one would change how r2r-mcp reads the document (whose file it is, how
// its chunks are ordered and cut, whether it failed).
var reserved = []string{MetaSourcePath, MetaContentSHA, MetaSource, MetaProject, MetaIngestedBy,
	MetaSourceRoot, MetaChunking, MetaSize, MetaChunkOrder, MetaFailure, MetaCollectionIDs,
	MetaLayer, MetaCommit, MetaCommitTime, MetaRef, MetaBlob}

// ReservedKey is why a caller may not set metadata key k, "" when it may.
func ReservedKey(k string) string {
	switch {
	case slices.Contains(reserved, k):
		return fmt.Sprintf("must not set %q: r2r-mcp and R2R set %s themselves and read them back", k, strings.Join(reserved, ", "))
	case strings.HasPrefix(k, MemoryPrefix):
		return fmt.Sprintf("must not set %q: keys starting with %s mark team memories (r2r_remember)", k, MemoryPrefix)
	}
	return ""
}

// SourceValue is the value of MetaSource (and MetaIngestedBy).
const SourceValue = "r2r-mcp"

// DocumentNamespace is the UUIDv5 namespace of r2r-mcp's document ids.
var DocumentNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/r2r-mcp/r2r-mcp/documents"))

// VersionID is the id of one version of a file's document: UUIDv5 of
// "<collection id>/<R2R user id>/<id path>#sha256:<content hash>". A changed file gets a
// new id, so its new version can be ingested while the old one still answers searches
// (R2R answers 409 for an id that already succeeded and has no in-place update); the same
// content gets the same id, so a repeated upload is refused by R2R rather than
// duplicated. The user id is part of it because R2R checks duplicates per owner but keys
// documents by id alone.
func VersionID(collectionID, userID, idPath, sha string) string {
	return uuid.NewSHA1(DocumentNamespace, []byte(collectionID+"/"+userID+"/"+idPath+"#sha256:"+sha)).String()
}

// TeamVersionID is the id of one version of a file in a team collection's team layer:
// UUIDv5 of "<collection id>/team/<path>#sha256:<content hash>", the same whoever writes it,
// so teammates syncing the same commit store each file once.
func TeamVersionID(collectionID, path, sha string) string {
	return uuid.NewSHA1(DocumentNamespace, []byte(collectionID+"/team/"+path+"#sha256:"+sha)).String()
}

// legacyID is the id r2r-mcp gave a file's document before content hashes (one document
// per path, no content_sha256).
func legacyID(collectionID, userID, idPath string) string {
	return uuid.NewSHA1(DocumentNamespace, []byte(collectionID+"/"+userID+"/"+idPath)).String()
}

// Size is the size r2r-mcp reports for a document: its file's bytes (MetaSize) for one
// r2r-mcp wrote, else R2R's size_in_bytes; -1 when neither is known.
func Size(doc r2r.Document) int64 {
	if n, ok := doc.Metadata[MetaSize].(float64); ok && n >= 0 && n == float64(int64(n)) {
		return int64(n)
	}
	if doc.SizeInBytes != nil {
		return *doc.SizeInBytes
	}
	return -1
}

// SHA256 is the hex SHA-256 of data.
func SHA256(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}
