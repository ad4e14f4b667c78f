package r2rtest

import (
	"crypto/sha256"
	"crypto/subtle"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// uuid5 is Python's uuid.uuid5(NAMESPACE_DNS, name), which R2R uses for deterministic ids.
func uuid5(name string) string {
	return uuid.NewSHA1(uuid.NameSpaceDNS, []byte(name)).String()
}

type user struct {
	id            string
	email         string
	salt          []byte
	passwordHash  []byte // sha256(salt || password); stands in for bcrypt
	superuser     bool
	verified      bool
	name          *string
	bio           *string
	picture       *string
	createdAt     time.Time
	updatedAt     time.Time
	collectionIDs []string // membership, in join order; the default collection first
	metadata      map[string]any
}

func hashPassword(salt []byte, password string) []byte {
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte(password))
	return h.Sum(nil)
}

func (u *user) checkPassword(pw string) bool {
	return subtle.ConstantTimeCompare(hashPassword(u.salt, pw), u.passwordHash) == 1
}

func (u *user) memberOf(collectionID string) bool {
	return slices.Contains(u.collectionIDs, collectionID)
}

type collection struct {
	id            string
	ownerID       string
	name          string
	description   *string
	clusterStatus string
	syncStatus    string
	createdAt     time.Time
	updatedAt     time.Time
	// docCount is R2R's document_count: a counter that only the assignments of the
	// ingestion workflow and of the collection routes raise, and every removal and document
	// deletion lowers, so it drifts from the real membership and can go below zero
	// (conformance test TestLive/collection_documents/document_count_is_a_counter).
	docCount int
}

type document struct {
	id            string
	ownerID       string
	collectionIDs []string
	docType       string
	metadata      map[string]any
	title         *string
	fileName      string
	content       []byte
	size          int64
	status        string
	createdAt     time.Time
	updatedAt     time.Time
	// assignTo are the collection_ids form values, assigned when ingestion succeeds; none
	// means the owner's default collection. skipAssign: no assignment at all.
	assignTo   []string
	skipAssign bool
	chunks     []*chunk // stored when ingestion reaches "storing"
	rawChunks  []string // for the chunks ingestion path
	gen        int      // bumped on every (re)ingestion so stale background steps stop
}

type chunk struct {
	id       string
	text     string
	order    int
	metadata map[string]any
	terms    map[string]float64 // term frequencies for scoring
	length   int                // number of tokens
}

type apiKey struct {
	keyID       string // uuid
	publicKey   string // key_XXXX
	hash        []byte // sha256 of the raw part
	userID      string
	name        string
	description string
	updatedAt   time.Time
}

type store struct {
	users       map[string]*user // by id
	byEmail     map[string]*user
	collections map[string]*collection
	docs        map[string]*document
	apiKeys     map[string]*apiKey // by public key
	blacklist   map[string]bool    // revoked token jti values
	indices     []*vectorIndex     // created through POST /v3/indices
}

func newStore() *store {
	return &store{
		users:       map[string]*user{},
		byEmail:     map[string]*user{},
		collections: map[string]*collection{},
		docs:        map[string]*document{},
		apiKeys:     map[string]*apiKey{},
		blacklist:   map[string]bool{},
	}
}

// CreateUser creates a password user with a default collection and returns its id. If the
// email exists, its password and superuser flag are updated instead.
func (e *Emulator) CreateUser(email, password string, superuser bool) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	u := e.createUserLocked(email, password, superuser, nil)
	return u.id
}

func (e *Emulator) createUserLocked(email, password string, superuser bool, name *string) *user {
	email = strings.ToLower(email)
	salt := randomBytes(16)
	if u := e.st.byEmail[email]; u != nil {
		u.salt, u.passwordHash, u.superuser = salt, hashPassword(salt, password), superuser
		return u
	}
	now := e.nowLocked()
	u := &user{
		id:           uuid5(email),
		email:        email,
		salt:         salt,
		passwordHash: hashPassword(salt, password),
		superuser:    superuser,
		verified:     true,
		name:         name,
		createdAt:    now,
		updatedAt:    now,
	}
	e.st.users[u.id] = u
	e.st.byEmail[email] = u
	desc := "Your default collection."
	col := &collection{
		id:            uuid5(u.id),
		ownerID:       u.id,
		name:          "Default",
		description:   &desc,
		clusterStatus: "pending",
		syncStatus:    "pending",
		createdAt:     now,
		updatedAt:     now,
	}
	e.st.collections[col.id] = col
	u.collectionIDs = []string{col.id}
	return u
}

func (e *Emulator) adminLocked() *user { return e.st.byEmail[AdminEmail] }

// visibleLocked reports whether u may read d: owner, member of one of d's collections, or
// superuser.
func visible(u *user, d *document) bool {
	if u.superuser || d.ownerID == u.id {
		return true
	}
	for _, c := range d.collectionIDs {
		if u.memberOf(c) {
			return true
		}
	}
	return false
}

func (e *Emulator) userJSONLocked(u *user) map[string]any {
	cols := slices.Clone(u.collectionIDs)
	return map[string]any{
		"id":                       u.id,
		"email":                    u.email,
		"is_active":                true,
		"is_superuser":             u.superuser,
		"created_at":               e.tsLocked(u.createdAt),
		"updated_at":               e.tsLocked(u.updatedAt),
		"is_verified":              u.verified,
		"collection_ids":           cols,
		"graph_ids":                []string{},
		"document_ids":             []string{},
		"limits_overrides":         nil,
		"metadata":                 u.metadata,
		"verification_code_expiry": nil,
		"name":                     u.name,
		"bio":                      u.bio,
		"profile_picture":          u.picture,
		"total_size_in_bytes":      nil,
		"num_files":                nil,
		"account_type":             "password",
		"hashed_password":          nil,
		"google_id":                nil,
		"github_id":                nil,
	}
}

func (e *Emulator) collectionJSONLocked(col *collection, zeroCounts bool) map[string]any {
	users, docs := 0, 0
	if !zeroCounts {
		for _, u := range e.st.users {
			if u.memberOf(col.id) {
				users++
			}
		}
		docs = col.docCount
	}
	return map[string]any{
		"id":                   col.id,
		"owner_id":             col.ownerID,
		"name":                 col.name,
		"description":          col.description,
		"graph_cluster_status": col.clusterStatus,
		"graph_sync_status":    col.syncStatus,
		"created_at":           e.tsLocked(col.createdAt),
		"updated_at":           e.tsLocked(col.updatedAt),
		"user_count":           users,
		"document_count":       docs,
	}
}

func (e *Emulator) documentJSONLocked(d *document) map[string]any {
	var size any
	if d.size >= 0 {
		size = d.size
	}
	return map[string]any{
		"id":                       d.id,
		"collection_ids":           slices.Clone(d.collectionIDs),
		"owner_id":                 d.ownerID,
		"document_type":            d.docType,
		"metadata":                 cloneMap(d.metadata),
		"title":                    d.title,
		"version":                  "v0",
		"size_in_bytes":            size,
		"ingestion_status":         d.status,
		"extraction_status":        "pending",
		"created_at":               e.tsLocked(d.createdAt),
		"updated_at":               e.tsLocked(d.updatedAt),
		"ingestion_attempt_number": nil,
		"summary":                  nil,
		"summary_embedding":        nil,
		"total_tokens":             nil,
		"chunks":                   nil,
	}
}

func chunkJSON(d *document, ch *chunk) map[string]any {
	return map[string]any{
		"id":             ch.id,
		"document_id":    d.id,
		"owner_id":       d.ownerID,
		"collection_ids": slices.Clone(d.collectionIDs),
		"text":           ch.text,
		"metadata":       cloneMap(ch.metadata),
		"vector":         nil,
	}
}

// cloneMap deep-copies JSON-like values so responses never alias stored state.
func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneMap(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = cloneValue(x[i])
		}
		return out
	default:
		return v
	}
}
