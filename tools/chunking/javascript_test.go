package chunking

import (
	"strings"
	"testing"
)

const jsSource = `'use strict';

import { format } from './format';

/**
 * The depth nested objects are parsed to.
 */
export const DEFAULT_DEPTH = 5;

const pattern = /[{'"]+\/}/g; // a regular expression with braces and quotes
const ratio = total / count / 2 // division, not a regular expression

/**
 * Parses a query string.
 * @param {string} str the query
 */
export async function parse(
  str: string,
  opts: Options = {},
): Promise<Record<string, unknown>> {
  if (str.length > opts.limit) {
    throw new RangeError(` + "`Input depth ${opts.depth ?? {a: 1}.a} exceeded, see ${`nested ${str}`}`" + `);
  }
  return {};
}

export interface Options {
  depth?: number;
  limit: number;
}

type Pair<K, V> = [K, V];

@Component({ selector: 'app-root' })
export class Parser extends Base implements Reader {
  private depth = 5;

  /** Creates a parser. */
  constructor(depth: number) {
    super();
    this.depth = depth;
  }

  static get defaults(): Options {
    return { depth: 5, limit: 1000 };
  }

  async read(key: string) {
    return <div className="x">It's {key}</div>;
  }
}

var parseValues = function parseQueryStringValues(str, options) {
  return str.split('&');
};

module.exports = parse;
`

// JavaScript and TypeScript files are cut by statement at bracket depth 0 (a class's members
// at depth 1), each with the comments above it (JSDoc) and the decorators before it, under a
// context line naming the class and the signature; braces, quotes and slashes in strings,
// templates, regular expressions and JSX text are not mistaken for structure.
func TestSplitJSDeclarations(t *testing.T) {
	big := "\n/** big fills a chunk of its own. */\nfunction big(n) {\n" + strings.Repeat("  n++; // count once more\n", 40) + "  return n;\n}\n"
	chunks := Split("lib/parse.ts", jsSource+big)
	for _, tc := range []struct{ context, holds string }{
		{"§ lib/parse.ts ¶", "/**\n * The depth nested objects are parsed to.\n */\nexport const DEFAULT_DEPTH = 5;"},
		{"§ lib/parse.ts ¶", "/**\n * Parses a query string.\n * @param {string} str the query\n */\nexport async function parse("},
		{"§ lib/parse.ts ¶", "throw new RangeError(`Input depth"},
		{"§ lib/parse.ts ¶", "  /** Creates a parser. */\n  constructor(depth: number) {"},
		{"§ lib/parse.ts ¶", "return <div className=\"x\">It's {key}</div>;"},
		{"§ lib/parse.ts › function big(n) ¶", "/** big fills a chunk of its own. */"},
	} {
		if !hasChunk(chunks, tc.context, tc.holds) {
			t.Errorf("no chunk opens with %q and holds %q; chunks:\n%s", tc.context, tc.holds, strings.Join(chunks, "\n----\n"))
		}
	}
	assertLinesKept(t, "lib/parse.ts", jsSource+big, chunks)
}

// A declaration's path, as its chunk's context line shows it when the declaration has the
// chunk to itself.
func TestJSDeclarationPaths(t *testing.T) {
	src, ok := jsLines(jsSource)
	if !ok {
		t.Fatal("jsSource does not scan")
	}
	var paths []string
	for _, b := range src.declBlocks(src.jsStatements(0, len(src.lines), 0), src.jsDecl) {
		if b.decl {
			paths = append(paths, strings.Join(b.path, sep))
		}
	}
	want := []string{
		"export const DEFAULT_DEPTH = 5",
		"const pattern = /[{'\"]+\\/}/g",
		"const ratio = total / count / 2",
		"export async function parse( str: string, opts: Options = {}, ): Promise<Record<string, unknown>>",
		"export interface Options",
		"type Pair<K, V> = [K, V]",
		"Parser › export class Parser extends Base implements Reader",
		"Parser › private depth = 5",
		"Parser › constructor(depth: number)",
		"Parser › static get defaults(): Options",
		"Parser › async read(key: string)",
		"var parseValues = function parseQueryStringValues(str, options)",
		"module.exports = parse",
	}
	if strings.Join(paths, "\n") != strings.Join(want, "\n") {
		t.Errorf("declaration paths:\n%s\nwant:\n%s", strings.Join(paths, "\n"), strings.Join(want, "\n"))
	}
}

// A file that does not scan (a bracket, template or comment left open, or closed twice) is
// still cut, at blank lines, with every line kept.
func TestSplitJSFallback(t *testing.T) {
	for _, text := range []string{
		"function f() {\n  return 1;\n\nfunction g() {}\n",
		"const s = `open template\n\nfunction g() {}\n",
		"/* open comment\n\nfunction g() {}\n",
		"}\nfunction g() {}\n",
	} {
		if _, ok := jsLines(text); ok {
			t.Errorf("jsLines(%q) scanned", text)
		}
		assertLinesKept(t, "bad.js", text, Split("bad.js", text))
	}
}
