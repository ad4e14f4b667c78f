package kbsync

import (
	"encoding/json"
	"unicode/utf8"
)

// nameRefusal refuses a path that is not valid UTF-8 (nil when it is). Metadata reaches R2R
// as JSON, which holds only UTF-8: such a name would be stored with U+FFFD in place of its
// bad bytes, so its document could never be matched to the file again and every other
// prune would delete it. Refusing is lossless where an encoding of the name would not be:
// any escape scheme is also a valid name of some other file.
func nameRefusal(p string) *Refusal {
	if utf8.ValidString(p) {
		return nil
	}
	return &Refusal{Kind: "invalid_file_name", Reason: "its name is not valid UTF-8, which R2R cannot store; " +
		"rename it (e.g. with convmv) to sync it"}
}

// storedName is the name R2R stores for p: what encoding/json makes of it.
func storedName(p string) string {
	b, _ := json.Marshal(p)
	var s string
	_ = json.Unmarshal(b, &s)
	return s
}
