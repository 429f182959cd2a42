"""The parts a Python program's strings play (guard.checks.programs), and the grounding of a
program the model wrote by them (guard.checks.risk): its own words are not taken for invented
data, what it acts on still must have been said or returned."""

from __future__ import annotations

import pytest

from guard.checks.programs import python_strings
from guard.checks.risk import risk_of

CODE = {"type": "string", "description": "Python code to execute."}


def parts(code: str) -> dict[str, str]:
    found = python_strings(code)
    assert found is not None
    return {s.text: s.part for s in found}


def test_the_parts_of_an_analysis():
    code = (
        "import pandas as pd\n"
        "df = pd.read_csv('/data/orders.csv')\n"
        "df['late'] = df['shipped'] > df['promised']\n"
        "top = df[df['region'] == 'EMEA'].groupby('carrier').agg(n=('order_id', 'count'))\n"
        "ax = top.plot(kind='bar', color='#336699', title='Late orders by carrier')\n"
        "ax.set_ylabel('Orders')\n"
        "ax.figure.savefig('/tmp/late.png')\n"
        "print('saved', len(df))\n"
    )
    got = parts(code)
    assert got["/data/orders.csv"] == "data"  # the file it reads
    assert got["late"] == "own" and got["shipped"] == "read" and got["region"] == "read"
    assert got["EMEA"] == "data"  # compared with: a value of the user's
    assert got["bar"] == got["#336699"] == got["Late orders by carrier"] == got["Orders"] == got["saved"] == "own"
    assert got["/tmp/late.png"] == "output"
    assert got["order_id"] == got["count"] == "own"  # a named aggregation's option words


@pytest.mark.parametrize("text", ["Send the report to Anna", "that one", "def f(:\n  pass", "x" * 5_000, "'just a string'"])
def test_prose_fragments_and_long_texts_are_no_program(text):
    assert python_strings(text) is None


def test_a_file_opened_to_write_is_output_and_one_opened_to_read_is_data():
    got = parts("with open('notes/summary.md', 'w') as f:\n    f.write(text)\nraw = open('inbox/today.txt').read()\n")
    assert got["notes/summary.md"] == "output" and got["inbox/today.txt"] == "data"


SAID = "I uploaded sales_q2.csv to /mnt/data. Which product categories have the highest return rate? Chart please."
RESULT = '{"columns": ["order_id", "category", "returned"], "returned": ["Y", "N"]}'


def test_an_analysis_that_titles_its_chart_and_saves_it_is_derivable():
    code = (
        "import pandas as pd\n"
        "df = pd.read_csv('/mnt/data/sales_q2.csv')\n"
        "df['returned_flag'] = df['returned'].eq('Y')\n"
        "rates = df.groupby('category')['returned_flag'].mean().sort_values(ascending=False)\n"
        "ax = rates.plot(kind='barh', title='Return rate by category')\n"
        "ax.figure.savefig('/mnt/data/return_rate.png')\n"
        "print('saved chart')\n"
    )
    assert risk_of("code", [CODE], code, SAID, RESULT).level == "derivable"


@pytest.mark.parametrize(
    "code",
    [
        "import pandas as pd\ndf = pd.read_csv('/mnt/data/customers_2023.csv')\nprint(df.head())",  # a file nobody named
        "df = pd.read_csv('/mnt/data/sales_q2.csv')\nprint(df[df['region'] == 'Boston'].shape)",  # a value nobody said
        "import requests\nrequests.delete('https://api.example.com/users/bob')",  # an address nobody gave
        "from app import users\nusers.delete_user('bob')",  # a user nobody named
        "import smtplib\nsmtplib.SMTP('localhost').sendmail('me', 'jane@example.com', 'hi')",  # a recipient nobody named
    ],
)
def test_what_a_program_acts_on_must_still_have_been_said(code):
    assert risk_of("code", [CODE], code, SAID, RESULT).level != "derivable"


@pytest.mark.parametrize("text", ["(" * 3_999 + "1", "1+" * 1_999 + "1", "[" * 2_000 + "]" * 1_999, "f(" * 1_000 + ")" * 1_000])
def test_hostile_programs_are_read_or_refused_in_bounded_time(text):
    import time

    start = time.perf_counter()
    python_strings(text)  # a tree or None, never an exception
    assert time.perf_counter() - start < 1.0


def test_names_with_digits_the_program_does_not_define_are_targets():
    got = parts("import hashlib\ndf2 = load()\nprint(hashlib.sha256(df2.to_bytes()).hexdigest(), sales_2024)\n")
    assert got["sha256"] == got["sales_2024"] == "name" and "df2" not in got


def test_an_excerpt_and_a_diff_are_read_line_by_line():
    excerpt = "        rows = [r for r in rows if not r.done]\n    if args.json:\n        print(json.dumps(rows, indent=2))\n"
    assert parts(excerpt) == {}  # nothing quoted; args.json is an attribute, no file
    diff = "--- a/t.py\n+++ b/t.py\n@@ -1,2 +1,3 @@\n import re\n+import unicodedata\n-x = 1\n+x = unicodedata.normalize('NFKD', s)\n"
    assert parts(diff) == {"NFKD": "data"}
    assert python_strings("--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-Old title\n+# New title: see docs\n") is None


EDIT = {"type": "string", "description": "The new text."}


def test_code_written_into_a_file_names_only_paths_and_addresses():
    said, result = "slugify() mangles accented characters, fix it", '{"path": "textkit/text.py", "content": "def slugify(value): ..."}'
    new = "value = unicodedata.normalize('NFKD', value)\nvalue = value.encode('ascii', 'ignore').decode('ascii')"
    assert risk_of("new_str", [EDIT], new, said, result).level == "derivable"
    test = "def test_accents():\n    assert slugify('Crème Brûlée') == 'creme-brulee'"
    assert risk_of("new_str", [EDIT], test, said, result).level == "derivable"
    # Everyday negatives: an address or a path nobody gave, in written code; the same literal run as code
    assert risk_of("new_str", [EDIT], "WEBHOOK = 'https://hooks.example.com/T000/B000'\nsend(WEBHOOK)", said, result).level != "derivable"
    assert risk_of("new_str", [EDIT], "CONFIG = load('/etc/textkit/prod.yaml')", said, result).level != "derivable"
    assert risk_of("code", [CODE], "from app import users\nusers.delete_user('bob')", said, result).level != "derivable"


@pytest.mark.parametrize(("value", "level"), [("-q", "derivable"), ("-x --maxfail=1 -v", "derivable"), ("--user=bob", "ordinary"),
                                              ("tests/test_text.py -q", "ordinary"), ("-k slugify", "ordinary")])
def test_command_line_options_alone_are_the_models_choice(value, level):
    assert risk_of("args", [{"type": "string", "description": "Extra pytest arguments."}], value, "run the tests").level == level



def test_code_in_another_language_written_into_a_file():
    from guard.normalise import numbers_in

    said, result = "ParseSize rejects 1.5GB, fix it", '{"path": "size.go", "content": "n, err := strconv.ParseInt(s[:i], 10, 64)"}'
    numbers = frozenset(numbers_in(f"{said} {result}"))
    go = 'num, err := strconv.ParseFloat(s[:i], 64)  // fractional sizes\nif err != nil {\n\treturn 0, fmt.Errorf("bytesize: bad number %q", s)\n}\nreturn int64(num * float64(unit)), nil'
    assert risk_of("new_str", [EDIT], go, said, result, numbers=numbers).level == "derivable"
    # Everyday negatives: an address or a path in written code, a number nobody gave
    assert risk_of("new_str", [EDIT], 'resp, err := http.Get("https://api.example.com/v2/sizes")', said, result, numbers=numbers).level != "derivable"
    assert risk_of("new_str", [EDIT], 'err := os.Remove("/var/data/sizes.db")', said, result, numbers=numbers).level != "derivable"
    assert risk_of("new_str", [EDIT], "const maxRetries = 50 // retries", said, result, numbers=numbers).level != "derivable"
