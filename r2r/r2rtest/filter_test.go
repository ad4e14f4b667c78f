package r2rtest

import (
	"net/http"
	"sort"
	"strings"
	"testing"
)

// filterFixture ingests four documents with varied metadata as the superuser (whose filters
// are not rewritten) and puts "b" into an extra collection.
type filterFixture struct {
	c                    *tc
	docs                 map[string]string // name -> document id
	chunkA               string
	defaultCol, extraCol string
	adminID              string
}

func newFilterFixture(t *testing.T) *filterFixture {
	s := NewServer(t, Options{})
	c := newTC(t, s)
	f := &filterFixture{c: c, docs: map[string]string{}}
	metas := map[string]map[string]any{
		"a": {"name": "a", "title": "Alpha Guide", "year": 2020, "rating": 4.5, "tags": []any{"go", "db"},
			"published": true, "author": map[string]any{"name": "Ann", "city": "Oslo"}, "code": "5"},
		"b": {"name": "b", "title": "beta notes", "year": 2022, "tags": []any{"python"}, "published": false,
			"author": map[string]any{"name": "Bob"}, "nullable": nil},
		"c": {"name": "c", "year": "2021", "tags": "go", "draft": "yes"},
		"d": {"name": "d"},
	}
	texts := map[string]string{
		"a": "Alpha text about lighthouses and harbours.",
		"b": "Beta text about volcanoes.",
		"c": "Gamma text about deserts.",
		"d": "Delta text about glaciers.",
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		f.docs[n] = c.rawText(texts[n], metas[n])
	}
	me := c.get("/v3/users/me").results()
	f.adminID = me["id"].(string)
	f.defaultCol = me["collection_ids"].([]any)[0].(string)
	col := c.postJSON("/v3/collections", map[string]any{"name": "extra"})
	wantStatus(t, col, 200)
	f.extraCol = col.results()["id"].(string)
	wantStatus(t, c.do("POST", "/v3/collections/"+f.extraCol+"/documents/"+f.docs["b"], "", nil), 200)
	chunks := c.get("/v3/documents/" + f.docs["a"] + "/chunks")
	f.chunkA = chunks.list()[0].(map[string]any)["id"].(string)
	return f
}

func (f *filterFixture) search(t *testing.T, filters map[string]any) *resp {
	t.Helper()
	return f.c.postJSON("/v3/retrieval/search", map[string]any{"query": "text about",
		"search_settings": map[string]any{"filters": filters, "limit": 1000}})
}

func names(t *testing.T, r *resp) string {
	t.Helper()
	wantStatus(t, r, http.StatusOK)
	var out []string
	for _, h := range r.results()["chunk_search_results"].([]any) {
		out = append(out, h.(map[string]any)["metadata"].(map[string]any)["name"].(string))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

type m = map[string]any
type l = []any

func TestFilterOperators(t *testing.T) {
	f := newFilterFixture(t)
	cases := []struct {
		name   string
		filter m
		want   string
	}{
		{"empty matches all", m{}, "a,b,c,d"},
		{"bare value is $eq", m{"name": "a"}, "a"},
		{"$eq", m{"name": m{"$eq": "a"}}, "a"},
		{"$ne", m{"name": m{"$ne": "a"}}, "b,c,d"},
		{"$ne skips missing keys (SQL NULL)", m{"title": m{"$ne": "Alpha Guide"}}, "b"},
		{"$gt numeric casts string numbers", m{"year": m{"$gt": 2020}}, "b,c"},
		{"$gte", m{"year": m{"$gte": 2020}}, "a,b,c"},
		{"$lt", m{"year": m{"$lt": 2022}}, "a,c"},
		{"$lte", m{"year": m{"$lte": 2020}}, "a"},
		{"float", m{"rating": m{"$gt": 4.2}}, "a"},
		{"$gt on strings compares text", m{"title": m{"$gt": "B"}}, "b"},
		{"$like", m{"title": m{"$like": "Alpha%"}}, "a"},
		{"$like is case-sensitive", m{"title": m{"$like": "alpha%"}}, ""},
		{"$like underscore", m{"title": m{"$like": "b_ta%"}}, "b"},
		{"$ilike", m{"title": m{"$ilike": "ALPHA%"}}, "a"},
		{"$in", m{"name": m{"$in": l{"a", "c"}}}, "a,c"},
		{"$nin", m{"name": m{"$nin": l{"a", "c"}}}, "b,d"},
		{"$in never matches numbers (quirk)", m{"year": m{"$in": l{2020}}}, ""},
		{"$in stringifies parameters", m{"code": m{"$in": l{5}}}, "a"},
		{"$in matches array elements and strings", m{"tags": m{"$in": l{"go"}}}, "a,c"},
		{"$in empty", m{"name": m{"$in": l{}}}, ""},
		{"$nin skips missing keys", m{"tags": m{"$nin": l{"go"}}}, "b"},
		{"$nin empty", m{"name": m{"$nin": l{}}}, "a,b,c,d"},
		{"$contains all", m{"tags": m{"$contains": l{"go", "db"}}}, "a"},
		{"$contains needs an array", m{"tags": m{"$contains": l{"go"}}}, "a"},
		{"$contains empty", m{"tags": m{"$contains": l{}}}, "a,b,c,d"},
		{"$json_contains object", m{"author": m{"$json_contains": m{"name": "Ann"}}}, "a"},
		{"$json_contains scalar", m{"tags": m{"$json_contains": "go"}}, "a,c"},
		{"bool", m{"published": true}, "a"},
		{"bool $ne", m{"published": m{"$ne": true}}, "b"},
		{"bool cast of text", m{"draft": m{"$eq": true}}, "c"},
		{"dotted path", m{"author.name": "Bob"}, "b"},
		{"array index in a path", m{"tags.0": "go"}, "a"},
		{"negative array index", m{"tags.-1": "db"}, "a"},
		{"path through a scalar", m{"name.x": "a"}, ""},
		{"object compared as jsonb text", m{"author": m{"$ilike": "%\"name\": \"ann\"%"}}, "a"},
		{"$in with a bool never matches", m{"published": m{"$in": l{true}}}, ""},
		{"$in matches object keys", m{"author": m{"$in": l{"city"}}}, "a"},
		{"$json_contains array", m{"tags": m{"$json_contains": l{"db"}}}, "a"},
		{"$json_contains number", m{"year": m{"$json_contains": 2020}}, "a"},
		{"$eq with a list compares text", m{"tags": m{"$eq": l{"python"}}}, ""},
		{"bool $lt", m{"published": m{"$lt": true}}, "b"},
		{"metadata. prefix", m{"metadata.author.name": "Bob"}, "b"},
		{"metadata object", m{"metadata": m{"author.name": "Ann", "name": "a"}}, "a"},
		{"metadata object title", m{"metadata": m{"title": "Alpha Guide"}}, "a"},
		{"nested dict is a path", m{"author": m{"name": "Ann"}}, "a"},
		{"$eq null", m{"nullable": m{"$eq": nil}}, "a,b,c,d"},
		{"$eq null on missing", m{"title": m{"$eq": nil}}, "c,d"},
		{"$ne null", m{"title": m{"$ne": nil}}, "a,b"},
		{"$gt null", m{"title": m{"$gt": nil}}, ""},
		{"$and", m{"$and": l{m{"year": m{"$gte": 2020}}, m{"published": true}}}, "a"},
		{"$or", m{"$or": l{m{"name": "a"}, m{"name": "d"}}}, "a,d"},
		{"nested $or/$and", m{"$or": l{m{"$and": l{m{"year": m{"$gt": 2020}}, m{"tags": m{"$in": l{"python"}}}}}, m{"name": "d"}}}, "b,d"},
		{"empty $and", m{"$and": l{}}, "a,b,c,d"},
		{"empty $or", m{"$or": l{}}, ""},
		{"siblings are ANDed", m{"name": "a", "year": 2020}, "a"},
		{"$neq on metadata is a path segment (quirk)", m{"title": m{"$neq": "x"}}, ""},
		{"unknown $key is a metadata path", m{"$not": m{"name": "a"}}, ""},
		{"chunk metadata document_type", m{"document_type": "txt"}, "a,b,c,d"},
		{"chunk metadata chunk_order", m{"chunk_order": 0}, "a,b,c,d"},
		{"id", m{"id": f.chunkA}, "a"},
		{"id uppercase", m{"id": m{"$eq": strings.ToUpper(f.chunkA)}}, "a"},
		{"document_id", m{"document_id": m{"$eq": f.docs["a"]}}, "a"},
		{"document_id $ne", m{"document_id": m{"$ne": f.docs["a"]}}, "b,c,d"},
		{"document_id $in", m{"document_id": m{"$in": l{f.docs["a"], f.docs["b"]}}}, "a,b"},
		{"document_id $nin", m{"document_id": m{"$nin": l{f.docs["a"]}}}, "b,c,d"},
		{"document_id $in empty", m{"document_id": m{"$in": l{}}}, ""},
		{"owner_id", m{"owner_id": f.adminID}, "a,b,c,d"},
		{"column $eq null", m{"owner_id": m{"$eq": nil}}, ""},
		{"column $ne null", m{"owner_id": m{"$ne": nil}}, "a,b,c,d"},
		{"text $like", m{"text": m{"$like": "%lighthouses%"}}, "a"},
		{"text $ilike", m{"text": m{"$ilike": "%VOLCANOES%"}}, "b"},
		{"text $gt", m{"text": m{"$gt": "C"}}, "c,d"},
		{"collection_ids $overlap", m{"collection_ids": m{"$overlap": l{f.extraCol}}}, "b"},
		{"collection_ids list", m{"collection_ids": l{f.extraCol}}, "b"},
		{"collection_ids $in", m{"collection_ids": m{"$in": l{f.extraCol}}}, "b"},
		{"collection_ids $contains", m{"collection_ids": m{"$contains": l{f.defaultCol, f.extraCol}}}, "b"},
		{"collection_ids $nin", m{"collection_ids": m{"$nin": l{f.extraCol}}}, "a,c,d"},
		{"collection_ids $eq is exact", m{"collection_ids": m{"$eq": f.defaultCol}}, "a,c,d"},
		{"collection_ids $ne", m{"collection_ids": m{"$ne": f.defaultCol}}, "b"},
		{"collection_ids $overlap empty", m{"collection_ids": m{"$overlap": l{}}}, ""},
		{"collection_ids $contains empty", m{"collection_ids": m{"$contains": l{}}}, "a,b,c,d"},
		{"collection_id shorthand", m{"collection_id": f.extraCol}, "b"},
		{"collection_id $eq overlaps", m{"collection_id": m{"$eq": f.defaultCol}}, "a,b,c,d"},
		{"collection_id $ne", m{"collection_id": m{"$ne": f.extraCol}}, "a,c,d"},
		{"collection_id $in", m{"collection_id": m{"$in": l{f.extraCol}}}, "b"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if got := names(t, f.search(t, tt.filter)); got != tt.want {
				t.Fatalf("filter %v matched %q, want %q", tt.filter, got, tt.want)
			}
		})
	}
}

func TestFilterErrors(t *testing.T) {
	f := newFilterFixture(t)
	cases := []struct {
		name    string
		filter  m
		errType string
		msg     string
	}{
		{"$neq on a column", m{"id": m{"$neq": "x"}}, "FilterError", "Unsupported operator '$neq' for standard column 'id'."},
		{"operator without $", m{"id": m{"eq": "x"}}, "FilterError", "Operators must start with '$'"},
		{"$and not a list", m{"$and": m{"name": "a"}}, "FilterError", "'$and' value must be a list"},
		{"$or not a list", m{"$or": "x"}, "FilterError", "'$or' value must be a list"},
		{"$like needs a string", m{"title": m{"$like": 5}}, "FilterError", "'$like' requires string value for 'title'."},
		{"column $like needs a string", m{"text": m{"$ilike": 5}}, "FilterError", "requires a string value for field 'text'"},
		{"$in needs a list", m{"name": m{"$in": "a"}}, "FilterError", "'$in' requires list value for 'name'."},
		{"column $in needs a list", m{"document_id": m{"$in": "a"}}, "FilterError", "requires a list value for field 'document_id'"},
		{"$contains needs a list", m{"tags": m{"$contains": "go"}}, "FilterError", "requires a list value"},
		{"two operators in one object", m{"year": m{"$gt": 1, "$lt": 5}}, "FilterError", "Invalid filter structure for metadata path 'year'"},
		{"$overlap is not a metadata operator", m{"tags": m{"$overlap": l{"go"}}}, "FilterError", "Unsupported operator '$overlap' for metadata field 'tags'."},
		{"$and below a path", m{"tags": m{"$and": l{}}}, "FilterError", "Unsupported operator '$and'"},
		{"metadata must be an object", m{"metadata": "x"}, "FilterError", "must be a dictionary"},
		{"collection_ids string", m{"collection_ids": "x"}, "FilterError", "Expected {op: value} dict or list of UUIDs."},
		{"collection_ids bad uuid", m{"collection_ids": m{"$overlap": l{"nope"}}}, "FilterError", "Invalid UUID format"},
		{"collection_ids $eq list", m{"collection_ids": m{"$eq": l{"x"}}}, "FilterError", "requires a single UUID string value"},
		{"collection_ids $eq bad uuid", m{"collection_ids": m{"$eq": "nope"}}, "FilterError", "Invalid UUID format for '$eq'"},
		{"collection_ids $gt", m{"collection_ids": m{"$gt": "x"}}, "FilterError", "Unsupported operator '$gt' for array column"},
		{"collection_ids $in not a list", m{"collection_ids": m{"$in": "x"}}, "FilterError", "requires a list of UUID strings"},
		{"collection_id number", m{"collection_id": 5}, "FilterError", "Invalid condition for shorthand 'collection_id'"},
		{"collection_id $ne bad uuid", m{"collection_id": m{"$ne": "nope"}}, "DataError", "invalid input for query argument"},
		{"column not in chunks table", m{"created_at": m{"$gt": "2020-01-01"}}, "UndefinedColumnError", `column "created_at" does not exist`},
		{"status column", m{"status": "success"}, "UndefinedColumnError", `column "status" does not exist`},
		{"uuid column bad value", m{"id": m{"$eq": "nope"}}, "DataError", "invalid UUID"},
		{"uuid column number", m{"document_id": 5}, "DataError", "expected str, got int"},
		{"uuid column $in bad value", m{"owner_id": m{"$in": l{"nope"}}}, "DataError", "invalid UUID"},
		{"uuid column like", m{"id": m{"$like": "%"}}, "UndefinedFunctionError", "operator does not exist: uuid ~~"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			wantInternal(t, f.search(t, tt.filter), tt.errType, tt.msg)
		})
	}
}

func TestSearchScopingForNonSuperusers(t *testing.T) {
	s := NewServer(t, Options{})
	alice, aliceID := userClient(t, s, "alice@example.com")
	bob, _ := userClient(t, s, "bob@example.com")
	admin := newTC(t, s)

	alice.rawText("Alice writes about orchids.", map[string]any{"name": "alice"})
	bobDoc := bob.rawText("Bob writes about orchids too.", map[string]any{"name": "bob"})
	admin.rawText("Admin writes about orchids as well.", map[string]any{"name": "admin"})

	// A collection Bob owns and shares with Alice by adding her.
	col := bob.postJSON("/v3/collections", map[string]any{"name": "shared"}).results()["id"].(string)
	wantStatus(t, bob.do("POST", "/v3/collections/"+col+"/documents/"+bobDoc, "", nil), 200)

	search := func(c *tc, filters m) *resp {
		return c.postJSON("/v3/retrieval/search", map[string]any{"query": "orchids",
			"search_settings": map[string]any{"filters": filters, "limit": 100}})
	}
	if got := names(t, search(alice, m{})); got != "alice" {
		t.Fatalf("alice sees %q before sharing", got)
	}
	s.mu.Lock()
	s.st.users[aliceID].collectionIDs = append(s.st.users[aliceID].collectionIDs, col)
	s.mu.Unlock()
	if got := names(t, search(alice, m{})); got != "alice,bob" {
		t.Fatalf("alice sees %q after sharing", got)
	}
	if got := names(t, search(admin, m{})); got != "admin,alice,bob" {
		t.Fatalf("superuser sees %q", got)
	}
	// A collection_ids filter narrows the collections but the caller's own chunks still come back.
	if got := names(t, search(alice, m{"collection_ids": m{"$overlap": l{col}}})); got != "alice,bob" {
		t.Fatalf("alice with collection filter sees %q", got)
	}
	other := uuid5("not-a-member")
	if got := names(t, search(alice, m{"collection_ids": m{"$overlap": l{other}}})); got != "alice" {
		t.Fatalf("alice filtering on a foreign collection sees %q", got)
	}
	if got := names(t, search(alice, m{"name": "bob"})); got != "bob" {
		t.Fatalf("alice filtering by name sees %q", got)
	}
	// Non-superusers must use $overlap on collection_ids (KeyError otherwise).
	wantInternal(t, search(alice, m{"collection_ids": m{"$in": l{col}}}), "KeyError", "'$overlap'")
	wantInternal(t, search(alice, m{"collection_ids": l{col}}), "TypeError", "list indices")
	wantInternal(t, search(alice, m{"collection_ids": m{"$overlap": "x"}}), "TypeError", "not iterable")
	wantInternal(t, search(alice, m{"collection_ids": m{"$overlap": l{"nope"}}}), "ValueError", "badly formed")
	// The superuser's filters are used as they are.
	if got := names(t, search(admin, m{"collection_ids": l{col}})); got != "bob" {
		t.Fatalf("superuser with collection filter sees %q", got)
	}
}
