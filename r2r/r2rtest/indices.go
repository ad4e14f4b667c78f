package r2rtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// emulatedSchema is the Postgres schema the emulated index definitions name.
const emulatedSchema = "r2r_default"

// vectorIndex is an index created through POST /v3/indices.
type vectorIndex struct {
	name, definition string
}

// builtinIndexes are the indexes R2R 3.6.6 creates with its tables that GET /v3/indices
// lists (it lists every index whose definition mentions "vector", hence the chunks table's
// idx_vectors_* and the documents' full-text index); none of them serves vector search.
var builtinIndexes = []struct{ name, table, using string }{
	{"idx_doc_search_" + emulatedSchema, "documents", "gin (raw_tsvector)"},
	{"idx_vectors_collection_ids", "chunks", "gin (collection_ids)"},
	{"idx_vectors_document_id", "chunks", "btree (document_id)"},
	{"idx_vectors_owner_id", "chunks", "btree (owner_id)"},
	{"idx_vectors_text", "chunks", "gin (to_tsvector('english'::regconfig, text))"},
}

// indexMeasureOps maps R2R's IndexMeasure values on the chunks' vec column to pgvector's
// operator classes.
var indexMeasureOps = map[string]string{
	"cosine_distance":   "vector_cosine_ops",
	"l2_distance":       "vector_l2_ops",
	"max_inner_product": "vector_ip_ops",
}

// handleListIndices answers GET /v3/indices like R2R 3.6.6: any authenticated user gets the
// whole schema's indexes, sorted by name, each wrapped as {"index": {...}}. row_estimate is
// the chunk count for chunks indexes (what Postgres estimates once it has analyzed them).
func (c *call) handleListIndices() {
	if !c.guard() {
		return
	}
	p, ok := c.parseList(false)
	if !ok {
		return
	}
	e := c.e
	e.mu.Lock()
	chunks, docs := 0, len(e.st.docs)
	for _, d := range e.st.docs {
		chunks += len(d.chunks)
	}
	all := make([]map[string]any, 0, len(builtinIndexes)+len(e.st.indices))
	entry := func(name, table, def string, rows int) map[string]any {
		return map[string]any{"index": map[string]any{"name": name, "table_name": table, "definition": def,
			"size_in_bytes": 8192, "row_estimate": rows, "number_of_scans": 0, "tuples_read": 0, "tuples_fetched": 0}}
	}
	for _, b := range builtinIndexes {
		rows := chunks
		if b.table == "documents" {
			rows = docs
		}
		def := fmt.Sprintf("CREATE INDEX %s ON %s.%s USING %s", b.name, emulatedSchema, b.table, b.using)
		all = append(all, entry(b.name, b.table, def, rows))
	}
	for _, ix := range e.st.indices {
		all = append(all, entry(ix.name, "chunks", ix.definition, chunks))
	}
	e.mu.Unlock()
	slices.SortFunc(all, func(a, b map[string]any) int {
		return strings.Compare(a["index"].(map[string]any)["name"].(string), b["index"].(map[string]any)["name"].(string))
	})
	total := len(all)
	lo, hi := window(total, p.offset, p.limit)
	page := all[lo:hi]
	if len(page) == 0 {
		total = 0
	}
	c.writeJSON(http.StatusOK, map[string]any{"results": map[string]any{"indices": page}, "total_entries": total})
}

// handleCreateIndex answers POST /v3/indices like R2R 3.6.6 without an orchestrator: any
// authenticated user may build an index on the chunks' vec column; R2R names it after the
// operator class, the method and the second it was created; errors inside the build are
// a 500 naming the handler.
func (c *call) handleCreateIndex() {
	if !c.guard() {
		return
	}
	body, ok := c.decodeJSONObject()
	if !ok {
		return
	}
	cfg, ok := body["config"].(map[string]any)
	if !ok {
		c.invalid(validationError{Type: "missing", Loc: []any{"body", "config"}, Msg: "Field required", Input: nil})
		return
	}
	str := func(key, def string) string {
		if v, ok := cfg[key].(string); ok {
			return v
		}
		return def
	}
	method, measure := str("index_method", "hnsw"), str("index_measure", "cosine_distance")
	if method == "auto" {
		method = "hnsw"
	}
	fail := func(msg string) {
		c.internal("create_index", "HTTPException", "500: Error during vector index creation: "+msg)
	}
	ops, known := indexMeasureOps[measure]
	switch {
	case str("table_name", "chunks") != "chunks":
		fail("the emulator builds indexes on the chunks table only")
		return
	case method != "hnsw" && method != "ivfflat":
		fail(fmt.Sprintf("'%s' is not a valid IndexMethod", method))
		return
	case !known:
		fail(fmt.Sprintf("'%s' is not a valid IndexMeasure", measure))
		return
	}
	opts := "WITH (m='16', ef_construction='64')"
	if method == "ivfflat" {
		opts = "WITH (lists='100')"
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	name := str("index_name", fmt.Sprintf("ix_%s_%s__vec_%s", ops, method, e.nowLocked().UTC().Format("20060102150405")))
	for _, ix := range e.st.indices {
		if ix.name == name {
			fail(fmt.Sprintf("Failed to create index: relation \"%s\" already exists", name))
			return
		}
	}
	def := fmt.Sprintf("CREATE INDEX %s ON %s.chunks USING %s (vec %s) %s", name, emulatedSchema, method, ops, opts)
	e.st.indices = append(e.st.indices, &vectorIndex{name: name, definition: def})
	c.ok(map[string]any{"message": "Vector index creation task completed successfully."})
}

// handleDeleteIndex answers DELETE /v3/indices/{table_name}/{index_name}; a missing index
// is the same 500 R2R gives when Postgres refuses the DROP.
func (c *call) handleDeleteIndex() {
	if !c.guard() {
		return
	}
	name := c.pathValue("index_name")
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	i := slices.IndexFunc(e.st.indices, func(ix *vectorIndex) bool { return ix.name == name })
	if i < 0 {
		c.internal("delete_index", "HTTPException", fmt.Sprintf("500: Error during vector index deletion: Vector index '%s' does not exist on table %s.chunks", name, emulatedSchema))
		return
	}
	e.st.indices = slices.Delete(e.st.indices, i, i+1)
	c.ok(map[string]any{"message": "Vector index deletion task completed successfully."})
}
