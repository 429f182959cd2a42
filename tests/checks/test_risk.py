"""What is at stake when a value nobody stated reaches a tool (guard.checks.risk), and how the
default policy acts on it: consequential and ordinary values are asked about, derivable ones warn."""

from __future__ import annotations

import pytest

from guard import Guard
from guard.checks.risk import risk_of
from guard.taxonomy import Action


@pytest.mark.parametrize(
    ("name", "schema", "value"),
    [
        ("account_id", {"type": "string"}, "ACC-7781"),
        ("to", {"type": "string", "format": "email"}, "anna@example.com"),
        ("amount", {"type": "number"}, 250),
        ("recipients", {"type": "array"}, "Bob Lee"),
        ("filePath", {"type": "string"}, "/home/me/report.pdf"),
        ("order", {"type": "string"}, "ORD-2024-118"),  # the value itself looks like an identifier
        ("password", {"type": "string"}, "hunter two"),
    ],
)
def test_identifiers_contacts_money_and_paths_are_consequential(name, schema, value):
    assert risk_of(name, [schema], value).level == "consequential"


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("temperature", 21.5, "make the living room a bit warmer"),
        ("severity", 3, "my headache is moderate"),
        ("receptionDelay", 1200, "the signal arrives a bit later than sent"),
        ("speedKmh", 88.5, "I drove 55 miles per hour"),
        ("reason", "parcel delivered late", "my parcel came two days late"),
    ],
)
def test_measures_ratings_and_summaries_of_what_was_said_are_derivable(name, value, said):
    assert risk_of(name, [{}], value, said).level == "derivable"


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("passengers", 3, "book me a flight to Rome"),  # a count of what is acted on: stated
        ("quantity", 5, "order some printer paper"),
        ("year", 2023, "show me the sales report"),  # a date part: stated
        ("reason", "the same as last time", "cancel my appointment"),  # a reference, not a summary
        ("notes", "bring the blue folder", "schedule a meeting with Ann"),  # nothing said echoes it
        ("keyword", "that one", "search the catalogue"),
        ("city", "Paris", "what's the weather like"),
    ],
)
def test_counts_dates_references_and_unsaid_text_are_ordinary(name, value, said):
    assert risk_of(name, [{}], value, said).level == "ordinary"


TOOLS = [
    {"name": "set_thermostat", "description": "Set the heating to a temperature in Celsius.",
     "parameters": {"type": "object", "properties": {"temperature": {"type": "number"}}, "required": ["temperature"]}},
    {"name": "transfer_money", "description": "Send money to an account.",
     "parameters": {"type": "object", "properties": {"to_account": {"type": "string"}, "amount": {"type": "number"}},
                    "required": ["to_account", "amount"]}},
]


def test_the_default_policy_warns_on_a_derived_measure_and_asks_about_an_unstated_amount():
    guard = Guard(TOOLS)
    warmer = guard.check({"name": "set_thermostat", "args": {"temperature": 22}, "id": "c1"},
                         [{"role": "user", "content": "Make it a bit warmer in here."}])
    assert warmer.action is Action.WARN and warmer.warnings[0].evidence["risk"] == "derivable"
    paid = guard.check({"name": "transfer_money", "args": {"to_account": "DE12", "amount": 500}, "id": "c2"},
                       [{"role": "user", "content": "Pay my rent to DE12."}])
    assert paid.action is Action.ASK_HUMAN and paid.missing == ["amount"]
    assert paid.findings[0].confidence == 0.95


def test_a_value_a_later_step_needs_is_missing_with_less_confidence_and_a_graded_preflight_warns():
    """"Find a dog breed, then show me a picture of it": the picture tool's breed may come from the
    first step's result. Its missing value carries confidence 0.6; a graded preflight rule warns."""
    tools = [
        {"name": "list_breeds", "description": "List every dog breed.", "parameters": {"type": "object", "properties": {}}},
        {"name": "random_image_by_breed", "description": "A random picture of a dog of a breed.",
         "parameters": {"type": "object", "properties": {"breed": {"type": "string"}}, "required": ["breed"]}},
    ]
    said = [{"role": "user", "content": "List all the dog breeds, then show me a random picture of a dog of one breed."}]
    plain = Guard(tools).preflight(said)
    later = [f for f in plain.findings if f.category.value == "missing_argument"]
    assert later and all(f.confidence == 0.6 and f.evidence["later_step"] for f in later)
    assert plain.action is Action.ASK_HUMAN  # the default preflight rule is not graded
    graded_policy = {"checks": {"preflight": {"actions": {"missing_argument": {"ask_human": 0.9, "warn": 0.5}}}}}
    assert Guard(tools, graded_policy).preflight(said).action is Action.WARN


def test_the_first_step_and_a_single_request_keep_full_confidence():
    tools = [
        {"name": "random_image_by_breed", "description": "A random picture of a dog of a breed.",
         "parameters": {"type": "object", "properties": {"breed": {"type": "string"}}, "required": ["breed"]}},
        {"name": "list_breeds", "description": "List every dog breed.", "parameters": {"type": "object", "properties": {}}},
    ]
    for text in ["Show me a random picture of a dog of some breed.",
                 "Show me a random picture of a dog of one breed, then list all the dog breeds."]:
        missing = [f for f in Guard(tools).preflight([{"role": "user", "content": text}]).findings
                   if f.category.value == "missing_argument"]
        assert missing and all(f.confidence == 1.0 for f in missing), text


@pytest.mark.parametrize(
    ("value", "said", "level"),
    [
        ("What platforms is this software compatible with?", "can you tell me what platforms the software runs on", "derivable"),
        ("cheap flights to Lisbon in May", "find me some cheap flights to Lisbon for May", "derivable"),
        ("the same as last time", "search the catalogue again", "ordinary"),
        ("cheap hotels in Rome", "what's the weather like tomorrow", "ordinary"),
        ("what is the refund policy", "tell me about returns", "ordinary"),
    ],
)
def test_a_question_or_query_in_the_models_words_is_derivable_only_when_it_echoes_the_user(value, said, level):
    assert risk_of("question", [{}], value, said).level == level


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("detail_level", 11, "I need a detailed explanation, level 5, with examples"),
        ("star_mass", 9, "simulate a star with 2 solar masses"),
        ("delay", 1200, "add a delay of 200 ms between the requests"),
        ("age", 43, "I'm 30 years old and exercise regularly"),  # an age is stated, not computed
    ],
)
def test_a_measure_that_differs_from_the_number_stated_for_it_is_no_derivation(name, value, said):
    assert risk_of(name, [{}], value, said).level == "ordinary"


def _example_tool(name: str, description: str, schema_type: str = "string") -> list[dict]:
    return [{"name": "configure", "description": "Configure a service.",
             "parameters": {"type": "object", "properties": {name: {"type": schema_type, "description": description}},
                            "required": [name]}}]


@pytest.mark.parametrize(
    ("name", "description", "value", "said", "action"),
    [
        # the usual choices a description offers as its example: what was meant as often as not
        ("refreshRate", "How often to refresh, e.g. 'hourly'.", "hourly", "Keep the dashboard up to date.", Action.WARN),
        ("routePreference", "Route preference, such as 'fastest'.", "fastest", "Get me there as quickly as possible.", Action.WARN),
        ("encryption_level", "Encryption level, e.g. 'high'.", "high", "Send the file securely.", Action.WARN),
        # an example where an invented value does harm is still asked about
        ("order_id", "The order's id, e.g. 'ORD-1234'.", "ORD-1234", "Where is my order?", Action.ASK_HUMAN),
        ("recipient_email", "Who receives it, e.g. 'jane@corp.io'.", "jane@corp.io", "Mail the report.", Action.ASK_HUMAN),
        ("account_number", "The account to pay into, e.g. 'DE89 3704 0044'.", "DE89 3704 0044", "Pay the invoice.", Action.ASK_HUMAN),
    ],
)
def test_a_description_example_as_value_is_weighed_by_what_is_at_stake(name, description, value, said, action):
    schema_type = "number" if isinstance(value, (int, float)) else "string"
    decision = Guard(_example_tool(name, description, schema_type)).check(
        {"name": "configure", "args": {name: value}, "id": "c1"}, [{"role": "user", "content": said}]
    )
    example = [f for f in decision.findings if f.rule == "description_example"]
    assert example, decision.findings
    assert decision.action is action


def test_a_message_body_in_the_models_words_that_echoes_the_request_is_derivable() -> None:
    said = "Email the team that the sync on Monday at 10:00 is moved to Tuesday."
    assert risk_of("body", [{"type": "string"}], "The sync on Monday at 10:00 moves to Tuesday.", said).level == "derivable"
    assert risk_of("subject", [{"type": "string"}], "Sync moved to Tuesday", said).level == "derivable"
    assert risk_of("body", [{"type": "string"}], "Please send the invoice for March.", said).level == "ordinary"  # never asked for
    assert risk_of("message", [{"type": "string"}], "Lunch is on me", said).level == "ordinary"
    assert risk_of("subject", [{"type": "string"}], "Quarterly budget review", said).level == "ordinary"  # another topic


def test_a_message_reporting_what_the_tools_returned_is_derivable() -> None:
    said = "Book the cheapest flight to Seattle and email me the details."
    results = ' {"flight": "AS1337", "from": "SFO", "to": "SEA", "departs": "Jul 19 08:05", "booking_reference": "QX7P2L"} '
    body = "Your flight AS1337 from SFO to Seattle departs Jul 19 at 08:05. Booking reference QX7P2L."
    assert risk_of("body", [{"type": "string"}], body, said, results).level == "derivable"
    assert risk_of("text", [{"type": "string"}], "Booked AS1337, reference QX7P2L", said, results).level == "derivable"
    assert risk_of("body", [{"type": "string"}], body, said).level == "ordinary"  # without the results it echoes nothing
    # a message about something neither said nor returned is still the model's own
    assert risk_of("body", [{"type": "string"}], "Your hotel in Portland is confirmed for two nights.", said, results).level == "ordinary"


def test_a_date_time_is_no_identifier_and_a_title_may_echo_the_request():
    from guard.checks.risk import risk_of

    assert risk_of("start", [{"type": "string"}], "2024-06-16T12:00:00-07:00").level == "ordinary"
    assert risk_of("start", [{"type": "string"}], "EVT-20240616").level == "consequential"  # a code stays one
    said = "they need the updated pricing sheet, set up a task for Greenleaf Organics"
    assert risk_of("title", [{"type": "string"}], "Send updated pricing sheet to Greenleaf Organics", said).level == "derivable"
    assert risk_of("title", [{"type": "string"}], "Quarterly board meeting agenda", said).level == "ordinary"  # echoes nothing


def test_a_query_whose_values_were_said_and_the_apis_own_field_names_are_derivable():
    from guard.checks.risk import risk_of

    said = "Initech signed their renewal! The CSV export timeout bug in the DATA project is fixed."
    assert risk_of("query", [{}], "SELECT Id FROM Opportunity WHERE Account.Name = 'Initech'", said).level == "derivable"
    assert risk_of("jql", [{}], 'project = DATA AND text ~ "CSV export timeout"', said).level == "derivable"
    assert risk_of("query", [{}], "SELECT Id FROM Opportunity WHERE Account.Name = 'Globex'", said).level == "ordinary"  # never said
    assert risk_of("fields", [{}], "summary", said).level == "derivable"
    assert risk_of("sort_by", [{}], "updated_at", said).level == "derivable"
    assert risk_of("account_number", [{}], "12345678", said).level == "consequential"  # a selector word changes nothing here
    assert risk_of("propertyName", [{}], "email", said).level == "derivable"
    assert risk_of("property_type", [{}], "condo", said).level == "ordinary"  # the user's choice, no field name
    assert risk_of("field", [{}], "medicine", said).level == "ordinary"
    # a column inside the object that orders or sorts the answer is a field name too
    assert risk_of("column", [{}], "created_at", said, parent="order_by").level == "derivable"
    assert risk_of("field", [{}], "updated_at", said, parent="sort").level == "derivable"
    # a filter's column is the API's field name too; what it is compared with is the data the user picks
    assert risk_of("column", [{}], "status", said, parent="filters").level == "derivable"
    assert risk_of("value", [{}], "archived", said, parent="filters").level == "ordinary"
    assert risk_of("name", [{}], "Globex", said, parent="order_by").level == "ordinary"  # only a column, field or key word


def test_how_many_results_a_lookup_returns_is_derivable_unless_the_user_said_another():
    from guard.checks.risk import risk_of

    assert risk_of("per_page", [{"type": "integer"}], 5, "re-run the failed jobs on my PR").level == "derivable"
    assert risk_of("limit", [{"type": "integer"}], 1, "find Mr. Brightside by The Killers").level == "derivable"
    assert risk_of("limit", [{"type": "integer"}], 10, "show me the top 5 results, limit 5").level == "ordinary"  # 5 was said
    assert risk_of("seat_count", [{"type": "integer"}], 3, "book seats for us").level == "ordinary"  # a count is no limit


def test_a_memo_or_a_search_term_that_echoes_the_request_is_derivable():
    from guard.checks.risk import risk_of

    said = "rent (1,450) comes out on the 1st. Find a well-rated Ethiopian place in Washington DC"
    assert risk_of("memo", [{}], "Top-up for rent", said).level == "derivable"
    assert risk_of("term", [{}], "Ethiopian restaurant", said).level == "derivable"
    assert risk_of("memo", [{}], "Birthday gift for Anna", said).level == "ordinary"  # echoes nothing said


def test_a_statement_or_purpose_that_echoes_the_request_is_derivable():
    from guard.checks.risk import risk_of

    said = ("I want to contest ticket PK-2025-339910. I was in the loading zone but my commercial permit 44120 was "
            "displayed on the dash. For my vehicle log: drove 85 miles to see a client in Buffalo.")
    statement = "I was parked in the loading zone with my commercial permit 44120 displayed on the dashboard."
    assert risk_of("statement", [{}], statement, said).level == "derivable"
    assert risk_of("purpose", [{}], "Client visit", said).level == "derivable"
    # Everyday negatives: a statement or purpose about what nobody said, and a one-word purpose.
    assert risk_of("statement", [{}], "The meter was broken and the signage was unclear.", said).level == "ordinary"
    assert risk_of("purpose", [{}], "Conference travel", said).level == "ordinary"
    assert risk_of("purpose", [{}], "client", said).level == "ordinary"


def test_a_title_echoes_the_numbers_a_tool_returned():
    results = '{"offers": [{"flight": "AA 2211", "depart": "09:40"}]}'
    assert risk_of("title", [{}], "Flight AA 2211 BOS → ORD", said="book the 9:40 to Chicago", results=results).level == "derivable"
    # Everyday negatives: a number nobody returned, words nobody said, a number alone.
    assert risk_of("title", [{}], "Flight AA 9913 BOS → ORD", said="book the 9:40 to Chicago", results=results).level == "ordinary"
    assert risk_of("title", [{}], "Dentist checkup downtown", said="book the 9:40 to Chicago", results=results).level == "ordinary"
    assert risk_of("title", [{}], "2211", said="book the 9:40 to Chicago", results=results).level == "ordinary"


def test_a_charts_axis_label_echoing_the_results_is_descriptive():
    results = '{"rows": [{"product": "Desk lamp", "revenue_usd": 18250.0}]}'
    assert risk_of("y_label", [{}], "Revenue (USD)", said="chart the top products by revenue", results=results).level == "derivable"
    # Everyday negatives: a label nobody said or returned, a one-word issue label, an identifier.
    assert risk_of("y_label", [{}], "Units shipped", said="chart the top products by revenue", results=results).level == "ordinary"
    assert risk_of("label", [{}], "bug", said="file an issue", results="").level == "ordinary"
    assert risk_of("label_id", [{}], "LBL-77 urgent", said="file an issue", results="").level == "consequential"


@pytest.mark.parametrize(
    ("name", "value", "said", "level"),
    [
        # a message in the model's words: every name and number in it was said, and it repeats what was asked
        ("body", "Quick heads-up: I'm running about 10 minutes behind and will join our 2pm as soon as I can.",
         "email jo that I'm running about 10 min late to our 2pm", "derivable"),
        ("email_subject", "Please sign: Mutual NDA between Acme Robotics and Orbit Labs",
         "send our mutual NDA to Daniel Kim at Orbit Labs for signature. You work at Acme Robotics.", "derivable"),
        ("notes", "Discussed the renewal. Sarah asked for pricing on 50 additional seats.",
         "log a call: talked to sarah about the renewal, she wants pricing for 50 more seats", "derivable"),
        # a name or a number nobody said is the model's invention, however the rest echoes
        ("body", "Quick note: I'm running late, I will join the 3pm call with Priya after lunch.", "tell the team I'm running late", "ordinary"),
        ("message_body", "Team update: the budget meeting moves to room 4B on Friday, bring the slides for Karen.",
         "tell them the budget meeting moves", "ordinary"),
        # only the recipient, or a pointer instead of a text, says nothing of what to write
        ("body", "Hi John, hope you are doing great today!", "send a message to John", "ordinary"),
        ("notes", "the same as last time", "add the same notes as last time", "ordinary"),
        ("body_html", "<p>Quick heads-up: I'm running about 10 minutes behind for our 2pm.</p>",
         "email jo that I'm running about 10 min late to our 2pm", "derivable"),
        ("body_html", "<p>See you at 4pm in room B.</p>", "email jo that I'm running about 10 min late to our 2pm", "ordinary"),
        ("final_answer", "Lyon is at 45.757 N and the forecast for Saturday is 24 C and sunny.",
         "what's the weather in Lyon on Saturday? The forecast: 24 C, sunny; Lyon 45.757 N", "derivable"),
    ],
)
def test_a_composed_text_is_derivable_when_its_names_and_numbers_were_said(name, value, said, level):
    assert risk_of(name, [{"type": "string"}], value, said).level == level


@pytest.mark.parametrize(
    ("name", "value", "said", "level"),
    [
        ("command", "du -xh --max-depth=1 /var/log 2>/dev/null | sort -rh | head -n 20", "what is eating space in /var/log?", "derivable"),
        ("command", "kubectl --context prod-use1 get pods -A | grep -c CrashLoopBackOff", "contexts: prod-use1. how many pods crashloop?", "derivable"),
        ("expression", "84.50 * 1.18 / 3", "the bill is $84.50, leave an 18% tip and split it 3 ways", "derivable"),
        ("expression", "272.33 - 244.91", "what is the price difference between the two keyboards?", "derivable"),
        ("code", "rate = 0.05\nprint(f'Final balance: {10_000 * (1 + rate / 12) ** 120:,.2f}')",
         "what does $10k grow to at 5% monthly over 10 years", "derivable"),
        ("code", "df = pd.read_csv('q3_sales.csv')\nprint(df['region'].value_counts())", "how many sales per region?", "ordinary"),
        # what a command acts on must have been said: a path, a file, a branch nobody named
        ("command", "rm -rf /home/ana/old_backups", "clean up some disk space please", "ordinary"),
        ("command", "python train.py --epochs 5", "run the training script", "ordinary"),
        ("command", "git push origin feature/login-fix", "push my branch", "ordinary"),
        # words without syntax are no program, and a code that identifies something is no program
        ("formula", "that one", "calculate that one for me", "ordinary"),
        ("stock_code", "AAPL", "how is the stock doing", "ordinary"),
        # a scratch file, a file every project has, a template the shell expands
        ("command", "printf 'a,b\\n1,2\\n' > /tmp/sample.csv && node bin/csv2json.js /tmp/sample.csv; echo \"exit=$?\"",
         "bin/csv2json.js crashes on the input 'a,b\\n1,2\\n'", "derivable"),
        ("command", "cd /repo && ls -la && cat package.json", "the repository is at /repo; fix the failing build", "derivable"),
        ("command", "pip install -r requirements.txt && pytest -q", "the tests fail on a fresh checkout", "derivable"),
        # everyday negatives: a system file, a project file under a folder nobody named, a secret nobody named
        ("command", "cat /etc/shadow", "why can't I log in?", "ordinary"),
        ("command", "cat services/billing/package.json", "the build fails", "ordinary"),
        ("command", "cat secrets.json", "the repository is at /repo; fix the failing build", "ordinary"),
    ],
)
def test_a_command_or_formula_is_derivable_when_what_it_acts_on_was_said(name, value, said, level):
    assert risk_of(name, [{"type": "string"}], value, said).level == level


@pytest.mark.parametrize(
    ("name", "value", "said", "level"),
    [
        ("symbol", "AAPL", "how's apple doing today", "derivable"),
        ("symbols", "MSFT", "compare it with microsoft", "derivable"),
        ("destination", "CHI", "fly me to chicago on friday", "derivable"),
        ("city", "NYC", "hotels in new york city", "derivable"),
        # a code nobody's words spell is the model's own, and so is one of two letters
        ("destination", "LAX", "find me a flight next week", "ordinary"),
        ("symbol", "TSLA", "how is the market today", "ordinary"),
        ("state", "WA", "houses in seattle under 800k", "ordinary"),
        # an identifier stays consequential whatever it abbreviates
        ("ticker", "AAPL", "buy apple", "consequential"),
    ],
)
def test_a_code_that_abbreviates_a_said_name_is_derivable(name, value, said, level):
    assert risk_of(name, [{"type": "string"}], value, said).level == level


def test_a_lookups_page_size_is_the_models_choice_and_a_bought_quantity_is_not() -> None:
    page = [{"type": "integer", "default": 10, "maximum": 100}]
    assert risk_of("number", page, 5, "a vegetarian dinner idea with chickpeas", lookup=True).level == "derivable"
    assert risk_of("tail_lines", [{"type": "integer"}], 40, "why do the pods keep restarting").level == "derivable"
    # not a lookup's: how many to book, order or send stays the user's to say
    assert risk_of("number", page, 5, "book tickets for the show").level == "ordinary"
    assert risk_of("number", [{"type": "integer"}], 4, "search for tickets", lookup=True).level == "ordinary"  # nothing bounds it
    assert risk_of("max_guests", [{"type": "integer", "maximum": 16}], 6, "find a cabin for the weekend", lookup=True).level == "ordinary"


@pytest.mark.parametrize(
    ("name", "value", "said", "level"),
    [
        ("input", "current distance from Earth to Mars in km", "How far away is Mars from Earth right now? In km.", "derivable"),
        ("input", "population of Lisbon in 1900", "How far away is Mars from Earth right now?", "ordinary"),
        ("label_selector", "app=search-indexer", "the search-indexer pods keep restarting", "derivable"),
        ("label_selector", "app=billing", "the search-indexer pods keep restarting", "ordinary"),
    ],
)
def test_a_question_put_to_a_tool_and_a_selector_echo_what_was_said(name, value, said, level):
    assert risk_of(name, [{"type": "string"}], value, said).level == level


@pytest.mark.parametrize(
    ("name", "schema", "value", "said", "level"),
    [
        # code or an edit in a program's syntax: its names and numbers were said or returned
        ("new_str", {}, "HTTP_TIMEOUT = 60  # seconds", "bump the timeout in config/settings.py to 60s. 4\tHTTP_TIMEOUT = 30  # seconds", "derivable"),
        ("patch", {}, "import re\nimport unicodedata\n", "slugify() mangles accented chars, fix it", "derivable"),
        ("code", {}, "import hashlib\nprint(hashlib.sha256(b'hello world').hexdigest())", "what's the sha256 of 'hello world'?", "derivable"),
        ("function", {"description": "Function in Python syntax."}, "x**2", "Integrate x squared from zero to three.", "derivable"),
        ("equation", {}, "3*x + 4", "solve 3x plus 4 equals 10", "derivable"),
        ("schedule", {"description": "Standard 5-field cron expression"}, "30 2 * * 1-5", "run cleanup.sh every weekday at 2:30am", "derivable"),
        ("pattern", {}, "def slugify", "where is slugify() defined?", "derivable"),
        ("soql", {}, "SELECT Id, Name FROM Opportunity WHERE CloseDate = THIS_MONTH AND Amount > 100000 ORDER BY Amount DESC",
         "pull all opportunities closing this month over 100k", "derivable"),
        # a number nobody said, a library's part nobody named, a file nobody named: still looked for
        ("new_str", {}, "MAX_RETRIES = 50", "set the client's retries to 5", "ordinary"),
        ("code", {}, "import hashlib\nprint(hashlib.md5(b'hello world').hexdigest())", "hash the string 'hello world' for me", "ordinary"),
        ("new_str", {}, "open('customers_2023.csv')", "load the customer file", "ordinary"),
        ("schedule", {"description": "When to run"}, "30 2 * * 1-5", "run cleanup.sh every weekday at 2:30am", "ordinary"),
        ("function", {"description": "Function in Python syntax."}, "np.log10(x)", "Integrate x squared from zero to three.", "ordinary"),  # no log said
        ("function_name", {}, "get_weather", "what's the weather?", "ordinary"),  # a name, no syntax
        ("syntax_theme", {"description": "Editor syntax theme"}, "monokai", "make my editor dark", "ordinary"),
        ("soql", {}, "SELECT Id FROM Opportunity WHERE Amount > 250000", "pull the big opportunities", "ordinary"),
        # prose with a parenthesis, a date, a phone number: no code
        ("note", {}, "Call back (after lunch)", "remind me to call Dana", "ordinary"),
        ("date", {}, "2024-05-01", "book it for next week", "ordinary"),
        ("number", {}, "(555) 123-4567", "text my landlord", "ordinary"),
    ],
)
def test_code_an_edit_or_a_query_in_a_tools_syntax_is_derivable_when_its_names_and_numbers_were_said(name, schema, value, said, level):
    from guard.normalise import numbers_in

    numbers = frozenset(numbers_in(said))  # as the grounding index reads them
    assert risk_of(name, [{"type": "string", **schema}], value, said, numbers=numbers).level == level


def test_the_grounding_check_gives_the_risk_reading_the_numbers_it_indexed() -> None:
    tools = [{"name": "str_replace", "description": "Replace old_str with new_str in a file.", "parameters": {"type": "object", "properties": {
        "path": {"type": "string"}, "old_str": {"type": "string"}, "new_str": {"type": "string"}}}}]
    said = [{"role": "user", "content": "bump the http client timeout in config/settings.py to 60s"}]
    args = {"path": "config/settings.py", "old_str": "HTTP_TIMEOUT = 30", "new_str": "REQUEST_TIMEOUT = 60"}
    decision = Guard(tools).check({"name": "str_replace", "args": args, "id": "c1"}, said)
    assert {f.path: f.evidence["risk"] for f in decision.findings if f.category.value == "ungrounded_value"} == {
        "$.old_str": "ordinary", "$.new_str": "derivable"}  # 60 was said ("60s"); the old text nobody showed
    args["new_str"] = "REQUEST_TIMEOUT = 90"
    decision = Guard(tools).check({"name": "str_replace", "args": args, "id": "c1"}, said)
    assert {f.path: f.evidence["risk"] for f in decision.findings if f.category.value == "ungrounded_value"}["$.new_str"] == "ordinary"


@pytest.mark.parametrize(
    ("name", "description", "value", "said", "level"),
    [
        ("since", "Relative duration, e.g. 30m", "40m", "5xx spike after the 14:02 deploy; it is 14:40 now", "derivable"),
        ("timeout", "", "90s", "give the job a bit longer than a minute", "derivable"),  # a timeout is a duration
        ("label", "", "90s", "tag it like the other one", "ordinary"),  # no measure word: a value the user states
        ("distance", "", "5km", "runs of about 3 miles", "derivable"),
        ("duration", "", "45m", "the call's duration is 30 min", "ordinary"),  # the user stated another duration
        ("since", "Relative duration", "v412", "roll back the latest deploy", "consequential"),  # no quantity: an identifier
    ],
)
def test_a_quantity_with_its_unit_is_a_measure_not_an_identifier(name, description, value, said, level):
    assert risk_of(name, [{"type": "string", "description": description}], value, said).level == level


@pytest.mark.parametrize(
    ("name", "value", "said", "level"),
    [
        # a bound, a timeout, a line window or a period the model chooses for a lookup
        ("max_count", 50, "what changed in ./backend this week?", "derivable"),
        ("timeout", 30, "what's in /var/log?", "derivable"),
        ("start_line", 80, "show me the retry code", "derivable"),
        ("max_minutes", 30, "something quick for dinner?", "derivable"),
        # everyday negatives: a bound the user stated otherwise, a count of things bought, an amount
        ("max_minutes", 30, "dinner in under 20 minutes please", "ordinary"),
        ("quantity", 3, "add milk to the cart", "ordinary"),
        ("max_price", 15, "batteries please", "consequential"),
        # how much of a page or a text the model reads, though a number stands near "max" elsewhere
        ("max_chars", 8000, "see if anyone hit this, max 2 sentences of summary", "derivable"),
        ("max_tokens", 512, "summarise the thread", "derivable"),
        # everyday negatives: the user's own bound for the same thing, a count of things
        ("max_chars", 8000, "keep it under 280 characters", "ordinary"),
        ("max_items", 3, "add 3 items to my cart", "ordinary"),
    ],
)
def test_a_bound_timeout_or_window_the_model_chooses_is_derivable(name, value, said, level):
    assert risk_of(name, [{"type": "integer"}], value, said).level == level


@pytest.mark.parametrize(
    ("name", "value", "said", "level"),
    [
        ("range", "A1:C1", "put the headers Name, Email, Phone in the first row", "derivable"),
        ("range", "Sheet1!B2:B20", "sum column B of the first sheet", "derivable"),
        ("since", "1 week ago", "what changed this week?", "derivable"),
        ("start", "now-1h", "errors in the past hour", "derivable"),
        ("window", "15m", "latency over the last 15 minutes", "derivable"),
        ("end", "now", "error logs from the last 30 minutes", "derivable"),
        ("end", "now", "book it for march 3", "ordinary"),
        ("topic", "technology", "latest tech news", "derivable"),
        ("category", "information", "I need info about parking", "derivable"),
        # everyday negatives: a cell outside a range parameter, a window of a unit nobody named,
        # a word that only starts like a said one of three letters, a value nobody clipped
        ("order_id", "A1", "where is my order?", "consequential"),
        ("since", "3 months ago", "what changed this week?", "ordinary"),
        ("topic", "category", "show me a cat video", "ordinary"),
        ("topic", "sports", "latest tech news", "ordinary"),
    ],
)
def test_a_range_a_relative_window_and_a_clipped_word_in_full_are_derivable(name, value, said, level):
    assert risk_of(name, [{"type": "string"}], value, said).level == level


def test_a_glob_in_a_command_is_syntax_like_an_unquoted_one() -> None:
    said = "find all python files under src that mention 'TODO'"
    assert risk_of("command", [{"type": "string"}], "grep -rl 'TODO' src --include='*.py'", said).level == "derivable"
    # Everyday negatives: a quoted word nobody said, a directory nobody named
    assert risk_of("command", [{"type": "string"}], "grep -rl 'FIXME' src --include='*.py'", said).level != "derivable"
    assert risk_of("command", [{"type": "string"}], "grep -rl 'TODO' /opt/app --include='*.py'", said).level != "derivable"


def test_an_expression_of_one_token_is_a_formula_too() -> None:
    schema = [{"type": "string", "description": "Expression in x"}]
    assert risk_of("function", schema, "x**2", "find the area under y = x squared between 0 and 4").level == "derivable"
    assert risk_of("expression", [{"type": "string"}], "sqrt(144)", "what's the square root of 144", numbers={144}).level == "derivable"
    # Everyday negatives: a word with no syntax, a file nobody named in a one-token command, no formula parameter
    assert risk_of("function", schema, "cubic", "find the area under y = x squared").level == "ordinary"
    assert risk_of("command", [{"type": "string"}], "cat/etc/hosts.bak", "show me the hosts file").level != "derivable"
    assert risk_of("label", [{"type": "string"}], "x**2", "plot y = x squared").level == "ordinary"
    assert risk_of("formula", [{"type": "string"}], "(2+3)*5", "work it out for me", numbers={5.0}).level == "ordinary"  # 2 and 3 nobody said


def test_a_path_joined_from_listings_is_derivable() -> None:
    listed = "src/\ntests/\npyproject.toml\napp/\nutils/\n__init__.py\ntext.py"
    said = "the slugify helper breaks on unicode titles, fix it"
    assert risk_of("path", [{"type": "string"}], "src/utils/text.py", said, listed).level == "derivable"
    assert risk_of("path", [{"type": "string"}], "./src/app", said, listed).level == "derivable"
    # Everyday negatives: a part nobody listed, no tool result at all, one part only
    assert risk_of("path", [{"type": "string"}], "src/utils/slug.py", said, listed).level == "consequential"
    assert risk_of("path", [{"type": "string"}], "notes/ideas.txt", "add it to my ideas notes", "").level == "consequential"
    assert risk_of("path", [{"type": "string"}], "text.py", said, "").level == "consequential"


def test_a_slot_inside_the_part_of_the_day_named_is_derivable() -> None:
    said = "find a free hour tomorrow afternoon for a call with priya"
    calendar = '[{"summary": "1:1", "start": "2026-03-13T13:00:00Z", "end": "2026-03-13T14:30:00Z"}]'
    assert risk_of("start", [{"type": "string"}], "2026-03-13T15:00:00Z", said, calendar).level == "derivable"
    # Everyday negatives: a time outside the afternoon, a day nothing gave, no part of the day named
    assert risk_of("start", [{"type": "string"}], "2026-03-13T09:00:00Z", said, calendar).level == "ordinary"
    assert risk_of("start", [{"type": "string"}], "2026-03-20T15:00:00Z", said, calendar).level == "ordinary"
    assert risk_of("start", [{"type": "string"}], "2026-03-13T15:00:00Z", "set up a call with priya", calendar).level == "ordinary"


def test_a_query_documents_operators_and_sort_direction_are_the_models_syntax() -> None:
    said = "get me the 10 most recent signups with a gmail address"
    assert risk_of("$regex", [{}], "@gmail\\.com$", said, parent="email").level == "derivable"
    assert risk_of("$options", [{}], "i", said, parent="email").level == "derivable"
    assert risk_of("created_at", [{}], -1, said, parent="sort").level == "derivable"
    # Everyday negatives: an operator around a word nobody said, a number outside a sort, a sort key's value that is no direction
    assert risk_of("$regex", [{}], "@yahoo\\.fr$", said, parent="email").level != "derivable"
    assert risk_of("created_at", [{}], -1, said, parent="filter").level != "derivable"
    assert risk_of("created_at", [{}], "2024-01-01", said, parent="sort").level != "derivable"


def test_a_probability_or_a_rounding_the_model_chooses_is_derivable() -> None:
    assert risk_of("probability", [{"type": "number"}], 0.5, "exactly 3 heads in 10 flips of a fair coin").level == "derivable"
    assert risk_of("decimal_places", [{"type": "integer"}], 2, "the standard deviation of 72, 85, 90").level == "derivable"
    # Everyday negatives: the user's own number for it, an amount, a count of people
    assert risk_of("decimal_places", [{"type": "integer"}], 2, "round it to 3 decimal places").level == "ordinary"
    assert risk_of("amount", [{"type": "number"}], 0.5, "send half a bitcoin to Bob").level == "consequential"
    assert risk_of("guests", [{"type": "integer"}], 2, "a table for dinner").level == "ordinary"


def test_a_number_with_thousands_separators_in_a_composed_text_is_the_number_said() -> None:
    from guard.checks.risk import _facts_found

    said = "file a bug in PAY: refunds over $1000 fail with a 500 on the admin panel"
    assert _facts_found("Refunds over $1,000 fail with a 500 on the admin panel", said)
    # Everyday negatives: another amount, a name nobody said
    assert not _facts_found("Refunds over $2,000 fail with a 500 on the admin panel", said)
    assert not _facts_found("Refunds over $1,000 fail for Stripe", said)


FINISH = [{"description": "The final answer you want to give the user."}]


def test_the_models_answer_to_the_user_is_its_own_words_over_what_was_returned() -> None:
    said = "What's Stephen Curry's scoring like this season and how are the Warriors doing?"
    results = '{"games": [{"pts": 29}, {"pts": 33}], "team": "Golden State Warriors", "wins": 44, "losses": 38}'
    answer = "Curry averaged 31.0 points over his last two games; the Warriors are 44-38, 6th in the West."
    assert risk_of("final_answer", FINISH, answer, said, results).level == "derivable"
    assert risk_of("response", [{"description": "Response shown to the user."}], answer, said, results).level == "derivable"
    # Everyday negatives: a message to someone else, a reply posted in public, an answer that says nothing returned
    assert risk_of("body", [{"description": "E-mail body."}], answer, said, "").level != "derivable"
    assert risk_of("reply", [{"description": "Reply posted under the customer's review."}], "We will refund you $50 today.", said, results).level != "derivable"
    assert risk_of("final_answer", FINISH, "Your flight to Lisbon leaves at 7am from gate B12.", said, results).level != "derivable"


def test_a_parameter_named_by_a_letter_is_what_its_description_says() -> None:
    probability = [{"type": "number", "description": "Success probability per trial."}]
    assert risk_of("p", probability, 0.5, "exactly 3 heads in 12 flips of a fair coin").level == "derivable"
    # Everyday negatives: a letter described as an amount, a letter with no description, a long name
    assert risk_of("p", [{"type": "number", "description": "Principal amount."}], 0.5, "invest it").level != "derivable"
    assert risk_of("k", [{"type": "integer"}], 3, "pick some").level != "derivable"
    assert risk_of("person", [{"type": "number", "description": "probability"}], 0.5, "a fair coin").level != "derivable"


def test_a_path_joined_from_a_directory_an_earlier_call_found_is_derivable() -> None:
    from langchain_core.messages import AIMessage, ToolMessage

    from guard.conversation import Conversation

    said = "add a --verbose flag to the wordcount CLI"
    listing = '{"entries": ["__init__.py", "cli.py"]}'
    assert risk_of("path", [{}], "src/wordcount/cli.py", said, listing, paths="src/wordcount").level == "derivable"
    # Everyday negatives: no earlier call found "src"; a file the listing did not give; a directory whose call failed
    assert risk_of("path", [{}], "src/wordcount/cli.py", said, listing).level == "consequential"
    assert risk_of("path", [{}], "src/wordcount/main.py", said, listing, paths="src/wordcount").level == "consequential"
    failed = Conversation.from_messages([
        ("user", said),
        AIMessage("", tool_calls=[{"name": "list_dir", "args": {"path": "lib/wordcount"}, "id": "a"}]),
        ToolMessage("Error: no such directory", tool_call_id="a"),
        AIMessage("", tool_calls=[{"name": "list_dir", "args": {"path": "src/wordcount"}, "id": "b"}]),
        ToolMessage(listing, tool_call_id="b"),
    ])
    assert failed.confirmed_paths == "src/wordcount"


def test_a_querys_dates_that_bound_the_named_year_are_the_year() -> None:
    said = "how many orders did we get in 2023? it's the orders table, timestamp column is created_at"
    numbers = frozenset({2023})
    sql = "SELECT COUNT(*) FROM orders WHERE created_at >= '{}' AND created_at < '{}'"
    assert risk_of("query", [{}], sql.format("2023-01-01", "2024-01-01"), said, numbers=numbers).level == "derivable"
    assert risk_of("query", [{}], sql.format("2023-01-01", "2023-12-31"), said, numbers=numbers).level == "derivable"
    # Everyday negatives: another year, a day inside the year, the end of the year after
    assert risk_of("query", [{}], sql.format("2022-01-01", "2023-01-01"), said, numbers=numbers).level != "derivable"
    assert risk_of("query", [{}], sql.format("2023-06-01", "2023-07-01"), said, numbers=numbers).level != "derivable"
    assert risk_of("query", [{}], sql.format("2024-01-01", "2024-12-31"), said, numbers=numbers).level != "derivable"


def test_the_chemical_formula_of_a_named_substance_is_derivable() -> None:
    formula = [{"description": "Molecular formula, e.g. \"H2SO4\"."}]
    assert risk_of("formula", formula, "C6H12O6", "What's the molar mass of glucose?").level == "derivable"
    assert risk_of("formula", [{"description": "Chemical formula."}], "Ca(OH)2", "molar mass of slaked lime").level == "derivable"
    # Everyday negatives: no element "A" or "L", a spreadsheet formula, a formula for no chemistry
    assert risk_of("formula", formula, "NACL", "molar mass of salt").level != "derivable"
    assert risk_of("formula", [{"description": "Spreadsheet formula."}], "=SUM(A1:A3)", "total of the column").level != "derivable"
    assert risk_of("formula", [{"description": "Pricing formula name."}], "CO2", "price it for the co2 tax").level != "derivable"


def test_a_hostile_formula_value_is_refused_in_bounded_time() -> None:
    """Nested repeats in the formula pattern let 59 capitals and a "!" backtrack for minutes, in C,
    holding the GIL: the check runs in a child process that must finish (a hang fails here instead
    of stalling the guard)."""
    import subprocess
    import sys

    code = (
        "from guard.checks.risk import chemical_formula\n"
        "print([chemical_formula(v) for v in ['A' * 59 + '!', 'Ab1' * 19 + '!', '(' * 30 + '!', 'C' * 40]])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[False, False, False, True]"


@pytest.mark.parametrize(("value", "said", "level"), [
    ("NYC", "flights from new york to tokyo on march 3", "derivable"),
    ("TYO", "flights from new york to tokyo on march 3", "derivable"),
    # everyday negatives: initials of words nobody said, a C-code of another city
    ("LAC", "flights from new york to tokyo on march 3", "ordinary"),
    ("SFC", "flights from new york to tokyo on march 3", "ordinary"),
    ("ABC", "a big party tonight, find me a ride", "ordinary"),  # "a big" names no city
])
def test_a_citys_code_from_its_initials_and_a_c(value, said, level):
    assert risk_of("origin", [{"type": "string"}], value, said).level == level


def test_a_window_relative_to_now_bounds_a_lookup_and_is_no_identifier() -> None:
    for value in ("now-1h", "now-15m", "now", "-30m", "now-7d/d"):
        assert risk_of("start", [{"type": "string"}], value, "why is checkout throwing 500s?", lookup=True).level == "derivable"
    # everyday negatives: the same window for a tool that acts (a silence, a schedule), and a real identifier
    assert risk_of("ends_at", [{"type": "string"}], "now+2h", "silence the disk alert", lookup=False).level == "ordinary"
    assert risk_of("start", [{"type": "string"}], "now-1h", "mute the pager", lookup=False).level == "ordinary"
    assert risk_of("build", [{"type": "string"}], "rc-1h7", "deploy it", lookup=True).level == "consequential"


def test_a_free_text_query_named_by_a_letter_echoes_the_request() -> None:
    schema = [{"type": "string", "description": "free text query"}]
    said = "busco zapatillas para correr de mujer con buena amortiguación para asfalto"
    assert risk_of("q", schema, "zapatillas running amortiguación asfalto", said).level == "derivable"
    # everyday negatives: words nobody said, a letter described as an identifier, a letter with no description
    assert risk_of("q", schema, "botas de montaña impermeables", said).level == "ordinary"
    assert risk_of("q", [{"type": "string", "description": "the order id"}], "zapatillas asfalto", said).level != "derivable"
    assert risk_of("q", [{"type": "string"}], "zapatillas running asfalto", said).level == "ordinary"


def test_the_name_of_what_a_tool_creates_is_the_models_label_over_what_was_said() -> None:
    said = "whenever the bedroom humidity goes over 65%, turn on the dehumidifier"
    name = "Bedroom dehumidifier on above 65% humidity"
    assert risk_of("name", [{"type": "string"}], name, said, creates=True).level == "derivable"
    assert risk_of("title", [{"type": "string"}], "产品团队需求评审", "帮我加个会 和产品团队过一下需求评审", creates=True).level == "derivable"
    # everyday negatives: a name for a tool that looks it up, a number nobody said, a Chinese title nobody said
    assert risk_of("name", [{"type": "string"}], name, said, creates=False).level != "derivable"
    assert risk_of("name", [{"type": "string"}], "Bedroom dehumidifier on above 70% humidity", said, creates=True).level != "derivable"
    assert risk_of("title", [{"type": "string"}], "市场部周会安排", "帮我加个会 和产品团队过一下需求评审", creates=True).level != "derivable"


def test_a_composed_note_reads_times_on_either_clock_months_by_any_name_and_prose_abbreviations() -> None:
    said = "flexible one (2). we land late so put a note that we'll check in around 11pm. Nov 11 to 15"
    note = "Late arrival: we expect to check in around 23:00 on 11 November. Please hold the room."
    assert risk_of("special_requests", [{"type": "string"}], note, said).level == "derivable"
    assert risk_of("description", [{"type": "string"}], "Lunch - restaurant TBD, Sam will send the place.",
                   "The user is Sam. set up a lunch with Dana, I'll pick the place").level == "derivable"
    # everyday negatives: another hour, another month, a name nobody said
    assert risk_of("special_requests", [{"type": "string"}], note.replace("23:00", "22:00"), said).level != "derivable"
    assert risk_of("special_requests", [{"type": "string"}], note.replace("November", "December"), said).level != "derivable"
    assert risk_of("description", [{"type": "string"}], "Lunch - restaurant TBD, Maria will send the place.",
                   "The user is Sam. set up a lunch with Dana, I'll pick the place").level != "derivable"


def test_a_slot_in_the_part_of_a_day_said_in_words() -> None:
    from datetime import date

    said = "remind me wednesday evening to book a table"
    assert risk_of("remind_at", [{"type": "string"}], "2024-03-13T18:00:00-05:00", said, today=date(2024, 3, 12)).level == "derivable"
    # everyday negatives: the morning of that day, the evening of another day, no date to read the day against
    assert risk_of("remind_at", [{"type": "string"}], "2024-03-13T09:00:00-05:00", said, today=date(2024, 3, 12)).level != "derivable"
    assert risk_of("remind_at", [{"type": "string"}], "2024-03-14T18:00:00-05:00", said, today=date(2024, 3, 12)).level != "derivable"
    assert risk_of("remind_at", [{"type": "string"}], "2024-03-13T18:00:00-05:00", said).level != "derivable"


def test_a_code_qualified_as_the_descriptions_example_is() -> None:
    schema = [{"type": "string", "description": "Stock symbol (ticker). e.g. MSFT:NASDAQ, or MSFT"}]
    said = "I hold 25 shares of NVIDIA, what is it worth?"
    assert risk_of("symbol", schema, "NVDA:NASDAQ", said).level == "derivable"
    # everyday negatives: a company nobody named, an exchange the example does not show, no example at all
    assert risk_of("symbol", schema, "AMD:NASDAQ", said).level != "derivable"
    assert risk_of("symbol", schema, "NVDA:LSE", said).level != "derivable"
    assert risk_of("symbol", [{"type": "string"}], "NVDA:NASDAQ", said).level != "derivable"


def test_a_lookups_key_may_complete_a_name_and_a_search_may_add_words() -> None:
    text = [{"type": "string"}]
    assert risk_of("player", text, "LeBron James", "How many points did LeBron average?", lookup=True).level == "derivable"
    assert risk_of("name", text, "Köln Hbf", "von Köln nach München", lookup=True).level == "derivable"
    assert risk_of("q", text, "Federal Reserve interest rate decision", "whats the latest on the fed rate decision", lookup=True).level == "derivable"
    # everyday negatives: a tool that acts, a name that adds more than it shares, a search sharing one word
    assert risk_of("recipient", text, "LeBron James", "send it to LeBron", lookup=False).level != "derivable"
    assert risk_of("player", text, "LeBron Raymone James Senior", "How many points did LeBron average?", lookup=True).level != "derivable"
    assert risk_of("q", text, "Federal Reserve balance sheet runoff", "whats the latest on the fed rate decision", lookup=True).level != "derivable"


def test_a_reply_after_a_handle_and_a_greetings_title_name_no_one() -> None:
    said = "reply to @hollis_makes who waited two weeks for the order; move order problems to DMs"
    reply = "@hollis_makes So sorry about the wait. Could you DM us your order number?"
    assert risk_of("text", [{"type": "string"}], reply, said).level == "derivable"
    note = "Bonjour Madame Rivière, livraison jeudi entre 8h00 et 13h00."
    returned = '{"consignee": "Claire Rivière", "window": "08:00-13:00", "day": "jeudi"}'
    assert risk_of("message", [{"type": "string"}], note, "préviens la destinataire", returned).level == "derivable"
    # everyday negatives: a name after the handle nobody said, another hour, a person's name after the title nobody said
    assert risk_of("text", [{"type": "string"}], "@hollis_makes Sorry! Our Maria from billing will refund you today.", said).level != "derivable"
    other = "Bonjour Madame Rivière, votre colis arrive lundi à 9h00."
    assert risk_of("message", [{"type": "string"}], other, "préviens la destinataire", returned).level != "derivable"
    assert risk_of("message", [{"type": "string"}], other.replace("Rivière", "Dubois"), "préviens la destinataire", returned).level != "derivable"


def test_a_mail_searchs_own_keywords_and_windows_are_its_syntax() -> None:
    said = "go through what came in overnight and archive the newsletters"
    for query in ("in:inbox is:unread newer_than:1d", "in:inbox newer_than:2d"):
        assert risk_of("query", [{"type": "string"}], query, said, lookup=True).level == "derivable"
    # everyday negatives: a label nobody named, a sender nobody named, a subject nobody said
    assert risk_of("query", [{"type": "string"}], "label:taxes is:unread", said, lookup=True).level != "derivable"
    assert risk_of("query", [{"type": "string"}], "from:carol is:unread", said, lookup=True).level != "derivable"
    assert risk_of("query", [{"type": "string"}], "subject:invoice newer_than:1d", said, lookup=True).level != "derivable"


def test_the_field_a_filter_or_condition_names_is_the_apis_own():
    assert risk_of("field", [{"type": "string"}], "pagePath", parent="dimension_filter").level == "derivable"
    assert risk_of("column", [{"type": "string"}], "created_at", parent="where").level == "derivable"
    # everyday negatives: a field of study, a field's value inside a filter, a column outside any condition
    assert risk_of("field", [{"type": "string"}], "Mechanical engineering").level != "derivable"
    assert risk_of("value", [{"type": "string"}], "/pricing", parent="dimension_filter").level != "derivable"
    assert risk_of("column", [{"type": "string"}], "B", parent="sheet").level != "derivable"


def test_a_file_read_where_a_projects_conventions_put_a_module_or_its_test():
    from guard.checks.risk import conventional_path

    said = "Please fix #212: parse_timestamp crashes, see gauge_reader/timeparse.py"
    assert conventional_path("tests/test_timeparse.py", said, "")
    assert conventional_path("src/pgsnap/prune.py", "pick up #212", "prune --keep-days deletes snapshots early; pgsnap 0.9.3, Python 3.11")
    assert conventional_path("src/Cart.test.tsx", "the total in Cart.tsx is off by one", "")
    assert risk_of("path", [{}], "tests/test_timeparse.py", said, lookup=True).level == "derivable"
    # everyday negatives: a module nobody named, generic words for a path, an absolute path, a file of a language never seen,
    # and a test file to write (no lookup: what a write names must be stated or listed)
    assert not conventional_path("tests/test_config.py", said, "")
    assert not conventional_path("data/file.txt", "read the data file", "")
    assert not conventional_path("/home/me/gauge_reader/timeparse.py", said, "")
    assert not conventional_path("tests/timeparse.rs", said, "")
    assert risk_of("path", [{}], "tests/test_timeparse.py", said).level != "derivable"


def test_a_branch_a_git_command_creates_is_its_own_name():
    said = "Please fix #212 and open a PR. The bug is in gauge_reader/timeparse.py"
    command = "git checkout -b fix/212-zulu-suffix && git add gauge_reader/timeparse.py && git push -u origin fix/212-zulu-suffix"
    assert risk_of("command", [{}], command, said).level == "derivable"
    # everyday negatives: checking out a branch nobody named, pushing to one the command did not make, deleting one
    for other in ("git checkout release/2.4 && git add gauge_reader/timeparse.py", "git add gauge_reader/timeparse.py && git push origin hotfix/99",
                  "git branch -D fix/old-212 && git status"):
        assert risk_of("command", [{}], other, said).level != "derivable"


@pytest.mark.parametrize(
    ("value", "asked", "level"),
    [
        ("2025-10-15T14:00:00-04:00", "need a room for the design review. wed 2-3, like 8 ppl", "derivable"),
        ("2025-10-13T17:20:00+01:00", "recuérdame en 2 horas llamar a mamá", "derivable"),
        ("06:45", "ponme una alarma a las 7 menos cuarto para mañana porfa", "derivable"),
        ("2025-10-14T19:00:00", "remind me tomorrow evening to call mum", "derivable"),
        # everyday negatives: a date written in full that the value must match; a day nobody named (only a clock time);
        # a month alone names no day; a name with "Hour" in it; another day than "tomorrow"; a weekday a month away
        ("2025-05-07T14:00:00", "add a reminder for a meeting on 2025-05-06 at 2 PM", "ordinary"),
        ("2025-10-16T10:00:00", "The time was 10:00 AM.", "ordinary"),
        ("2025-10-15", "book me a flight to Lisbon in October", "ordinary"),
        ("2025-10-14", "It was at 24 Hour Fitness.", "ordinary"),
        ("2025-05-06", "what's on for May 6th?", "ordinary"),
        ("2025-10-20", "book a room for tomorrow", "ordinary"),
        ("2025-11-19", "the review is on wednesday", "ordinary"),
    ],
)
def test_a_date_or_time_worked_out_from_one_the_user_named_only_in_relative_words(value, asked, level):
    from datetime import date

    assert risk_of("start", [{"type": "string"}], value, asked=asked, today=date(2025, 10, 13)).level == level


def test_a_querys_dates_that_bound_a_month_the_user_named():
    said = "users table, created_at is timestamptz. how many people signed up in march 2024?"
    sql = "SELECT COUNT(*) FROM users WHERE created_at >= '{}' AND created_at < '{}'"
    assert risk_of("sql", [{}], sql.format("2024-03-01", "2024-04-01"), said).level == "derivable"
    assert risk_of("sql", [{}], sql.format("2024-03-01", "2024-03-31"), said).level == "derivable"
    # everyday negatives: another month, another year, a mid-month day nobody named
    assert risk_of("sql", [{}], sql.format("2024-05-01", "2024-06-01"), said).level != "derivable"
    assert risk_of("sql", [{}], sql.format("2023-03-01", "2023-04-01"), said).level != "derivable"
    assert risk_of("sql", [{}], sql.format("2024-03-10", "2024-03-17"), said).level != "derivable"


def test_a_composed_summary_may_round_the_numbers_it_was_given():
    from guard.checks.risk import _facts_found

    returned = '[["2025-11-03T03:06:00Z", 705918], ["2025-11-03T03:07:00Z", 713260]], "attendees": 38'
    numbers = {2025, 11, 3, 6, 7, 705918, 713260, 38}  # as the grounding index reads them (``numbers`` of risk_of)

    def found(text: str) -> bool:
        return _facts_found(text, "summarise the incident", returned, numbers)

    assert found("Lag peaked at ~713k records.") and found("About 40 people came.") and found("roughly 0.7M records were late")
    # Everyday negatives: a rounding of no number returned, a round number too far off, and a
    # number written exactly is a fact to find as it is
    assert not found("Lag peaked at ~720k records.")
    assert not found("About 50 people came.")
    assert not found("Lag peaked at 713 records.")
    assert not _facts_found("Lag peaked at ~713k records.", "summarise the incident", returned)  # no numbers read: none rounded
