"""What a Python program the model wrote does with each string in it.

A program's strings play different parts. Some are the program's own words: what it prints or
puts on a chart, the keys and columns it defines, the option words of an API (``kind="bar"``,
``action="store_true"``), the file it saves its output to. Others are what it acts on: a file it
opens, a value it compares with, an argument it passes to a call. Only the second kind must have
been said by the user or returned by a tool; the grounding of a program (``risk``) reads the
parts from Python's own parser (``ast``: nothing is run), so that an analysis the model writes
("which categories had the highest return rate? chart please") is not taken for invented data
because it titles its chart.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

__all__ = ["Part", "StringPart", "added_lines", "python_strings"]

Part = Literal["own", "output", "read", "data", "name"]

#: Longest program read (a longer one is judged by the patterns alone).
MAX_PROGRAM = 4_000
#: Calls whose arguments are text for people: printed, logged, or put on a chart.
_FOR_PEOPLE = frozenset(
    "print pprint echo log debug info warning warn error exception critical title suptitle xlabel ylabel "
    "set_title set_xlabel set_ylabel set_label text annotate legend".split()
)
#: Keyword arguments that hold text for people (a label, a title, a help line, a message).
_LABEL_KEYWORDS = frozenset("title label xlabel ylabel help description message msg text caption".split())
#: Calls that write their first argument as a file: the program's own output.
_WRITERS = frozenset(
    "savefig to_csv to_excel to_json to_parquet to_html to_markdown to_pickle to_feather write_text write_bytes "
    "write_image write_html imwrite save".split()
)
#: A name with a digit in it ("md5", "sales_2024"): a part of a library, or a name someone gave.
_NUMBERED = re.compile(r"\d")
#: An API's option word ("bar", "store_true", "center") or a colour ("#4C72B0").
_OPTION_WORD = re.compile(r"[a-z][a-z_]{0,30}|#[0-9A-Fa-f]{3,8}")


@dataclass(frozen=True)
class StringPart:
    text: str
    part: Part


@lru_cache(maxsize=256)  # a value is read by the program rule and by the code-shape rule: parsed once
def python_strings(code: str) -> tuple[StringPart, ...] | None:
    """The string constants of a Python program and the part each plays, or None when the text is
    no Python program with a call or an assignment in it (prose, a fragment that does not parse,
    a program longer than ``MAX_PROGRAM``).

    - ``own``: text for people (printed, logged, a chart's title or label, an f-string's
      template, a docstring), a key the program stores (``df["rate"] = …``, a dict's key), an
      option word given to a keyword argument (``kind="bar"``);
    - ``output``: a file the program writes (``savefig``, ``to_csv``, ``open(…, "w")``);
    - ``read``: a key or column the program reads (``df["category"]``);
    - ``data``: everything else (a value compared with, an argument passed, a file opened);
    - ``name``: a name with a digit in it that the program does not define (``hashlib.md5``):
      a library's part or a variable someone must have named."""
    if len(code) > MAX_PROGRAM:
        return None
    trees = _parsed(code)
    if trees is None:
        return None
    nodes = [node for tree in trees for node in ast.walk(tree)]
    if not any(isinstance(node, (ast.Call, ast.Assign, ast.AugAssign, ast.AnnAssign)) for node in nodes):
        return None
    parents: dict[int, ast.AST] = {}
    for node in nodes:
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    out: list[StringPart] = []
    defined = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(StringPart(node.value, _part(node, parents)))
        elif isinstance(node, ast.Attribute) and _NUMBERED.search(node.attr):
            out.append(StringPart(node.attr, "name"))
        elif isinstance(node, ast.Name) and _NUMBERED.search(node.id) and node.id not in defined:
            out.append(StringPart(node.id, "name"))
    return tuple(out)


#: A unified diff's header or hunk line: the added lines are the program.
_DIFF = re.compile(r"^(?:--- |\+\+\+ |@@ )", re.MULTILINE)
#: Lines that continue a block and cannot stand alone ("else:", "except ValueError:").
_CONTINUES = re.compile(r"(?:else|except\b.*|finally|case\b.*)\s*:")
_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)


def added_lines(code: str) -> str:
    """What a unified diff adds (its ``+`` lines, without the ``+``), or the text itself: the
    header's and hunks' line numbers are the diff's own."""
    if not _DIFF.search(code[:MAX_PROGRAM]):
        return code
    return "\n".join(line[1:] for line in code.splitlines() if line.startswith("+") and not line.startswith("+++"))


def _parsed(code: str) -> list[ast.Module] | None:
    """The program's syntax trees: the whole text (dedented), or a unified diff's added lines; an
    excerpt (an edit's new text, cut from inside a block) line by line, each block opener given a
    body. None when a line is no Python."""
    code = added_lines(code)
    try:
        return [ast.parse(textwrap.dedent(code))]
    except _ERRORS:
        pass
    trees = []
    for line in code.splitlines():
        text = line.strip()
        if not text or text.startswith("#") or _CONTINUES.fullmatch(text):
            continue
        if text.startswith("elif "):
            text = text[2:]  # "elif x:" tests as "if x:" does
        if text.startswith("@"):
            text += "\ndef _(): pass"  # a decorator, before the function it decorates
        elif text.endswith(":"):
            text += " pass"
        try:
            trees.append(ast.parse(text))
        except _ERRORS:
            return None
    return trees or None


def _part(node: ast.Constant, parents: dict[int, ast.AST]) -> Part:
    parent = parents.get(id(node))
    if isinstance(parent, (ast.Expr, ast.JoinedStr, ast.FormattedValue)):
        return "own"  # a docstring, an f-string's template
    key = parents.get(id(parent)) if isinstance(parent, (ast.Tuple, ast.List)) else parent  # df[["a", "b"]]
    if isinstance(key, ast.Subscript) and (key.slice is node or key.slice is parent):
        return "own" if isinstance(key.ctx, ast.Store) else "read"
    if isinstance(parent, ast.Dict):
        return "own" if any(k is node for k in parent.keys) else "data"
    keyword = _enclosing_keyword(node, parents)
    if keyword is not None:
        if keyword.arg in _LABEL_KEYWORDS or _OPTION_WORD.fullmatch(node.value):
            return "own"
        return "data"
    if isinstance(parent, ast.Call) and any(a is node for a in parent.args):
        name = _called(parent)
        if name in _FOR_PEOPLE:
            return "own"
        if parent.args[0] is node and (name in _WRITERS or (name == "open" and _writes(parent))):
            return "output"
    return "data"


def _enclosing_keyword(node: ast.AST, parents: dict[int, ast.AST]) -> ast.keyword | None:
    """The keyword argument a string is the value of, directly or inside a tuple or list there
    (pandas' ``orders=("order_id", "nunique")``)."""
    parent = parents.get(id(node))
    while isinstance(parent, (ast.Tuple, ast.List)):
        parent = parents.get(id(parent))
    return parent if isinstance(parent, ast.keyword) else None


def _called(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _writes(call: ast.Call) -> bool:
    """Whether ``open(...)`` opens its file to write: a mode with w, a or x."""
    modes = [*call.args[1:2], *(k.value for k in call.keywords if k.arg == "mode")]
    return any(isinstance(m, ast.Constant) and isinstance(m.value, str) and set(m.value) & set("wax") for m in modes)
