package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlain(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Hello,  World!", "hello world"},
		{"``auto_envvar_prefix``\n   parameter", "auto envvar prefix parameter"},
		{"**Über** -- `x=1`", "über x 1"},
		{"  ", ""},
		{"headers[&#x27;CSP&#x27;] = &quot;self&quot; &lt;b&gt;", "headers csp self b"},
		{"a &amp;b", "a b"},
	} {
		if got := plain(tc.in); got != tc.want {
			t.Errorf("plain(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestContainsPlain(t *testing.T) {
	for _, tc := range []struct {
		text, phrase string
		want         bool
	}{
		{"Set `count=True` to count.", "count true", true},
		{"set count=True", "set count true", true},
		{"recount truer", "count true", false}, // word boundaries
		{"the multiple\noptions format", "multiple options", true},
		{"a…", "a b", false},
	} {
		if got := containsPlain(tc.text, tc.phrase); got != tc.want {
			t.Errorf("containsPlain(%q, %q) = %v, want %v", tc.text, tc.phrase, got, tc.want)
		}
	}
}

func TestAnyStringNeedsOneField(t *testing.T) {
	v := map[string]any{"results": []any{map[string]any{"a": "the answer", "b": "phrase here"}}}
	if anyString(v, func(s string) bool { return containsPlain(s, "answer phrase") }) {
		t.Error("a phrase split across two fields counted as in view")
	}
	if !anyString(v, func(s string) bool { return containsPlain(s, "phrase here") }) {
		t.Error("a phrase inside one field not found")
	}
}

func TestLoadQuestionsReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n\nThe *answer* is here."), 0o644); err != nil {
		t.Fatal(err)
	}
	qpath := filepath.Join(dir, "q.json")
	write := func(s string) {
		if err := os.WriteFile(qpath, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`[{"id":"1","question":"q","file":"a.md","answer":"the answer is"}]`)
	if qs, err := loadQuestions(qpath, dir); err != nil || len(qs) != 1 {
		t.Fatalf("valid question: %v, %d questions", err, len(qs))
	}
	write(`[{"id":"1","question":"q","file":"a.md","answer":"not there"},
		{"id":"1","question":"q","file":"a.md","answer":"answer is"},
		{"id":"3","question":"q","file":"b.md","answer":"the answer"},
		{"id":"4","question":"q","file":"a.md","answer":"answer"},
		{"id":"5","question":"where the answer is?","file":"a.md","answer":"answer is"}]`)
	_, err := loadQuestions(qpath, dir)
	if err == nil {
		t.Fatal("bad questions accepted")
	}
	for _, want := range []string{`"not there"`, `id "1" is empty or repeated`, "b.md", "shorter than two words", "5: the question holds its own answer phrase"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestQuestionFileChecksOut(t *testing.T) {
	qs, err := loadQuestions("questions.json", "corpus")
	if err != nil {
		t.Fatal(err)
	}
	hard := 0
	for _, q := range qs {
		if q.Hard {
			hard++
		}
	}
	if len(qs) < 80 || hard*5 < len(qs) {
		t.Errorf("%d questions, %d hard: the benchmark needs at least 80, a fifth of them hard", len(qs), hard)
	}
}

func TestFigures(t *testing.T) {
	recs := []Record{
		{Search: ToolMeasure{DocRank: 1, AnswerText: true, DistinctDocs: 3}, Raw: RawMeasure{DocRank: 2, AnswerRank: 4}},
		{Search: ToolMeasure{DocRank: 5, AnswerStructured: true, DistinctDocs: 5}, Raw: RawMeasure{AnswerRank: 2}},
	}
	f := figures(recs, false)
	if f.Search.Hit1 != 0.5 || f.Search.Hit3 != 0.5 || f.Search.Hit10 != 1 || f.Search.DistinctDocs != 4 {
		t.Errorf("search figures %+v", f.Search)
	}
	if f.Raw.Hit1 != 0 || f.Raw.Hit3 != 0.5 || f.Raw.Answer3 != 0.5 || f.Raw.Answer10 != 1 {
		t.Errorf("raw figures %+v", f.Raw)
	}
}
