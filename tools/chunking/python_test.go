package chunking

import (
	"strings"
	"testing"
)

const pySource = `"""Caching helpers."""

import random
from typing import Any

ROTATION_PERIOD_DAYS = 83
_template: str = f"{ROTATION_PERIOD_DAYS:>{4}} days {'left'}"  # an f-string with nested braces and quotes


# Cache keeps at most maxsize items.
@dataclass(frozen=True)
class Cache(MutableMapping):
    """Mutable mapping to serve as a simple cache or cache base class."""

    __marker = object()
    __size = _DefaultSize()

    def __init__(self, maxsize, getsizeof=None):
        if getsizeof:
            self.getsizeof = getsizeof
        self.__data = {}

    @property
    def maxsize(self) -> int:
        """The maximum size of the cache."""
        return self.__maxsize

    async def fetch(self, key: str, *, timeout: float = 1.0) -> Any:
        if (n := len(key)) > 10:
            raise ValueError("value too large")
        match key:
            case "a":
                return 1
            case _:
                return '''a triple-quoted string
def not_a_function():
    with a line that looks like code'''

    class Meta:
        ordering = ["key"]


def cached(cache, key=hashkey, lock=None,
           info=False):
    # a comment inside the body
    return cache
`

// Python files are cut by statement on the indentation their scanner reads: a function,
// a class's head (decorators, signature, docstring, attributes) and each of its members is
// a declaration with the comments above it, under a context line naming the class and the
// signature; what a string or bracket spans is never mistaken for a statement.
func TestSplitPythonDeclarations(t *testing.T) {
	big := "\n\nclass Big:\n    def fill(self, n):\n        \"\"\"Fill fills a chunk of its own.\"\"\"\n" + strings.Repeat("        n += 1  # count once more\n", 30) + "        return n\n"
	chunks := Split("pkg/cache.py", pySource+big)
	for _, tc := range []struct{ context, holds string }{
		{"§ pkg/cache.py ¶", "# Cache keeps at most maxsize items.\n@dataclass(frozen=True)\nclass Cache(MutableMapping):"},
		{"§ pkg/cache.py ¶", "def __init__(self, maxsize, getsizeof=None):"},
		{"§ pkg/cache.py ¶", "    @property\n    def maxsize(self) -> int:\n        \"\"\"The maximum size of the cache.\"\"\""},
		{"§ pkg/cache.py ¶", `raise ValueError("value too large")`},
		{"§ pkg/cache.py ¶", "def not_a_function():\n    with a line that looks like code'''"},
		{"§ pkg/cache.py ¶", "ROTATION_PERIOD_DAYS = 83"},
		{"§ pkg/cache.py › Big › def fill(self, n) ¶", `"""Fill fills a chunk of its own."""`},
		{"§ pkg/cache.py › Big › def fill(self, n) ¶", "        return n"},
	} {
		if !hasChunk(chunks, tc.context, tc.holds) {
			t.Errorf("no chunk opens with %q and holds %q; chunks:\n%s", tc.context, tc.holds, strings.Join(chunks, "\n----\n"))
		}
	}
	assertLinesKept(t, "pkg/cache.py", pySource+big, chunks)
}

// A declaration's path, as its chunk's context line shows it when the declaration has the
// chunk to itself.
func TestPythonDeclarationPaths(t *testing.T) {
	src, ok := pyLines(pySource)
	if !ok {
		t.Fatal("pySource does not scan")
	}
	var paths []string
	for _, b := range src.declBlocks(src.pyStatements(0, len(src.lines), 0), func(from, to int) ([]block, bool) { return src.pyDecl(from, to, nil) }) {
		if b.decl {
			paths = append(paths, strings.Join(b.path, sep))
		}
	}
	want := []string{
		"ROTATION_PERIOD_DAYS = 83",
		`_template: str = f"{ROTATION_PERIOD_DAYS:>{4}} days {'left'}" # an f-string with nested braces and quotes`,
		"Cache › class Cache(MutableMapping)",
		"Cache › def __init__(self, maxsize, getsizeof=None)",
		"Cache › def maxsize(self) -> int",
		"Cache › async def fetch(self, key: str, *, timeout: float = 1.0) -> Any",
		"Cache › class Meta",
		"def cached(cache, key=hashkey, lock=None, info=False)",
	}
	if strings.Join(paths, "\n") != strings.Join(want, "\n") {
		t.Errorf("declaration paths:\n%s\nwant:\n%s", strings.Join(paths, "\n"), strings.Join(want, "\n"))
	}
}

// A file that does not scan as Python (a string or bracket left open) is still cut, at
// blank lines, with every line kept.
func TestSplitPythonFallback(t *testing.T) {
	for _, text := range []string{
		"def f():\n    return 'unterminated\n\ndef g():\n    pass\n",
		"x = (1,\n\ndef g():\n    pass\n",
		"x = 1)\n",
	} {
		if _, ok := pyLines(text); ok {
			t.Errorf("pyLines(%q) scanned", text)
		}
		assertLinesKept(t, "bad.py", text, Split("bad.py", text))
	}
}

func hasChunk(chunks []string, context, holds string) bool {
	for _, c := range chunks {
		line, body, _ := strings.Cut(c, "\n")
		if strings.HasPrefix(line, context) && strings.Contains(body, holds) {
			return true
		}
	}
	return false
}

// assertLinesKept checks that every line of text is in one of the chunks' bodies.
func assertLinesKept(t *testing.T, file, text string, chunks []string) {
	t.Helper()
	var bodies []string
	for _, c := range chunks {
		_, _, body := Context(c, file)
		bodies = append(bodies, body)
	}
	joined := strings.Join(bodies, "\n")
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.Contains(joined, line) {
			t.Errorf("%s: line %q lost", file, line)
		}
	}
}

// A class whose body starts with a method: its head is the class line alone (nothing
// appended for the empty stretch before the first member), and a class attribute after the
// methods is a declaration of its own.
func TestPythonClassHeadAlone(t *testing.T) {
	src, ok := pyLines("class A:\n    def f(self):\n        return 1\n\n    x = 2\n")
	if !ok {
		t.Fatal("does not scan")
	}
	bs, _ := src.pyDecl(0, len(src.lines), nil)
	var texts []string
	for _, b := range bs {
		texts = append(texts, b.text)
	}
	want := []string{"class A:", "    def f(self):\n        return 1", "    x = 2"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("blocks %q, want %q", texts, want)
	}
}
