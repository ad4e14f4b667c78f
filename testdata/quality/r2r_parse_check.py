"""Which answer phrases survive R2R 3.6.6's own parsing of their file?

Run with the real R2R's venv (testdata/r2r-real/up.sh builds it):

    ~/.cache/r2r-mcp/real-r2r/venv-*/bin/python testdata/quality/r2r_parse_check.py

It turns each question's file into text the way R2R's parsers do (Markdown: python-markdown
then BeautifulSoup's get_text; reStructuredText: docutils to HTML, tags stripped) and lists
the questions whose answer phrase, compared as the harness compares (plain in questions.go),
is not in that text: no chunk R2R makes of the file can hold it.
"""

import html
import json
import pathlib
import re
import sys

import markdown
from bs4 import BeautifulSoup
from docutils.core import publish_string
from docutils.writers import html5_polyglot

HERE = pathlib.Path(__file__).resolve().parent


def plain(s):
    s = html.unescape(s)
    out, space = [], True
    for c in s:
        if c.isalpha() or c.isdigit():
            out.append(c.lower())
            space = False
        elif not space:
            out.append(" ")
            space = True
    return "".join(out).strip()


def r2r_text(path):
    data = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        return BeautifulSoup(markdown.markdown(data), "html.parser").get_text()
    out = publish_string(
        source=data, writer=html5_polyglot.Writer(), settings_overrides={"report_level": 5}
    ).decode("utf-8")
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", out))


def main():
    questions = json.loads((HERE / "questions.json").read_text(encoding="utf-8"))
    lost = []
    for q in questions:
        text = " " + plain(r2r_text(HERE / "corpus" / q["file"])) + " "
        if " " + plain(q["answer"]) + " " not in text:
            lost.append(q)
    for q in lost:
        print(f"{q['id']}: {q['file']}: {q['answer']!r} is not in R2R's text of the file")
    print(f"{len(questions) - len(lost)} of {len(questions)} answer phrases survive R2R's parsing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
