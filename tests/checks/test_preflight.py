"""Preflight: before any call is proposed, can a tool serve the request with the values given?"""

from __future__ import annotations

from typing import Any

import pytest

from guard import Guard
from guard.checks.preflight import Preflight, assess
from guard.checks.relevance import ToolScore
from guard.conversation import Conversation
from guard.policy import Policy
from guard.registry import ToolRegistry
from guard.taxonomy import Action, Category


def tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required},
    }


TOOLS = [
    tool(
        "book_flight",
        "Book a flight from one city to another on a date.",
        {
            "from_city": {"type": "string", "description": "Departure city"},
            "to_city": {"type": "string", "description": "Arrival city"},
            "date": {"type": "string", "format": "date", "description": "Travel date"},
            "passengers": {"type": "integer", "minimum": 1, "maximum": 9, "description": "Number of passengers"},
        },
        ["from_city", "to_city", "date"],
    ),
    tool(
        "send_invoice",
        "Send an invoice for an amount to a customer by email.",
        {
            "email": {"type": "string", "format": "email", "description": "The customer's email address"},
            "amount": {"type": "number", "minimum": 0, "description": "Invoice amount in euros"},
            "invoice_id": {"type": "string", "pattern": "^INV-\\d{4}$", "description": "Invoice number"},
        },
        ["email", "amount"],
    ),
    tool(
        "get_album_ratings",
        "Fetch the ratings of a music album from a streaming platform.",
        {
            "album": {"type": "string", "description": "The album's title"},
            "platform": {"type": "string", "enum": ["Spotify", "Apple Music", "Deezer"]},
        },
        ["album", "platform"],
    ),
]


def run(*turns: str | tuple[str, str], policy: Policy | None = None, tools: list[dict[str, Any]] = TOOLS) -> Preflight:
    messages = [t if isinstance(t, tuple) else ("user", t) for t in turns]
    return assess(Conversation.from_messages(messages), ToolRegistry(tools), policy or Policy())


def only(result: Preflight) -> Any:
    assert len(result.findings) == 1, result.findings
    return result.findings[0]


# --- complete requests -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "request_text",
    [
        "Book a flight from Berlin to Rome on 2024-05-03",
        "Book me a flight from Berlin to Rome next Friday for 2 passengers",
        "Please book a flight from Berlin to Rome on May 3rd",  # a date in words is not a format error
        "Send an invoice for 120 euros to anna@example.com",
        "Send anna@example.com the invoice INV-0042 for two hundred euros",
        "What ratings does the album 'Blue Train' have on Spotify?",
    ],
)
def test_a_complete_valid_request_raises_nothing(request_text):
    assert run(request_text).findings == []


def test_the_values_found_are_kept_with_the_words_they_came_from():
    result = run("Book a flight from Berlin to Rome on 2024-05-03 for 2 passengers")
    assert result.tool == "book_flight"
    assert {k: (f.value, f.span) for k, f in result.args.items()} == {
        "passengers": (2, "2"),
        "from_city": ("Berlin", "Berlin"),
        "to_city": ("Rome", "Rome"),
        "date": ("2024-05-03", "2024-05-03"),
    }
    assert result.call_args() == {"passengers": 2, "from_city": "Berlin", "to_city": "Rome", "date": "2024-05-03"}


# --- missing values ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_text", "tool_name", "path", "kind"),
    [
        ("Book a flight from Berlin to Rome", "book_flight", "$.date", "date"),
        ("Send an invoice to anna@example.com", "send_invoice", "$.amount", "number"),
        ("Send an invoice for 120 euros to Anna", "send_invoice", "$.email", "email"),
        ("Get me the ratings of the album 'Blue Train'", "get_album_ratings", "$.platform", "enum"),
    ],
)
def test_a_required_value_the_conversation_never_gives_is_missing(request_text, tool_name, path, kind):
    finding = only(run(request_text))
    assert finding.category is Category.MISSING_ARGUMENT and finding.check == "preflight"
    assert finding.tool == tool_name and finding.path == path and finding.evidence["kind"] == kind
    assert tool_name in finding.message and path[2:] in finding.message


def test_a_missing_choice_lists_the_allowed_members():
    finding = only(run("Get me the ratings of the album 'Blue Train'"))
    assert finding.evidence["allowed"] == ["Spotify", "Apple Music", "Deezer"]


def test_values_said_in_earlier_turns_count():
    result = run("Book a flight from Berlin to Rome", ("assistant", "On which date?"), "On the 3rd of May")
    assert result.tool == "book_flight" and result.findings == []


def test_the_clock_a_system_message_states_is_no_date_the_user_chose():
    clock = ("system", "The current time is October 21, 2023, Saturday.")
    assert only(run(clock, "Book a flight from Berlin to Rome")).path == "$.date"
    assert run(clock, "Book a flight from Berlin to Rome next Saturday").findings == []


def test_a_month_on_its_own_is_no_date():
    assert only(run("Book a flight from Berlin to Rome in July")).path == "$.date"
    assert run("Book a flight from Berlin to Rome on July 3").findings == []


def test_values_in_a_system_message_count():
    profile = ("system", "User profile: {'email': 'anna@example.com'}")
    assert run(profile, "Send me an invoice for 120 euros").findings == []


def test_an_identifier_is_no_quantity():
    goals = tool(
        "set_goals",
        "Set performance goals for an employee.",
        {
            "employee_id": {"type": "string", "description": "Unique identifier for the employee"},
            "target": {"type": "number", "description": "Target value to reach"},
        },
        ["employee_id", "target"],
    )
    finding = only(run("Set performance goals for employee ID 12345", tools=[goals]))
    assert finding.path == "$.target"
    assert run("Set performance goals for employee ID 12345 with a target of 40", tools=[goals]).findings == []


NOTE = tool(
    "post_note",
    "Post a note to the team board.",
    {"text": {"type": "string", "description": "What the note says"}, "pinned": {"type": "boolean"}},
    ["text", "pinned"],
)


def test_booleans_are_assumed_given_and_free_text_needs_words_of_its_own():
    assert run("Post a note to the team board saying 'stand-up moves to 10'", tools=[NOTE]).findings == []
    assert run("Post a note to the team board about Friday's Kubernetes upgrade", tools=[NOTE]).findings == []
    (missing,) = run("Post a note to the team board", tools=[NOTE]).findings  # what should it say?
    assert missing.category is Category.MISSING_ARGUMENT and missing.path == "$.text"


def test_a_name_that_only_names_the_service_is_no_value():
    search = tool(
        "search_board_games",
        "Search BoardGameGeek for board games.",
        {"query": {"type": "string", "description": "Search terms"}},
        ["query"],
    )
    assert run("Search BoardGameGeek for games related to dragons", tools=[search]).findings == []
    (missing,) = run("Search BoardGameGeek for me", tools=[search]).findings
    assert missing.path == "$.query"


def test_each_part_of_a_request_is_judged_with_the_tool_that_serves_it():
    departments = tool("list_departments", "List all departments of the museum collection.", {}, [])
    compress = tool(
        "compress_image",
        "Compress an image given by its URL.",
        {"img_url": {"type": "string", "description": "URL of the image"}},
        ["img_url"],
    )
    tools = [departments, compress]
    given = "List all departments of the museum. Also compress the image at https://example.com/a.jpg"
    assert run(given, tools=tools).findings == []
    (missing,) = run("List all departments of the museum. Also compress the image I have", tools=tools).findings
    assert (missing.tool, missing.path) == ("compress_image", "$.img_url")


def test_a_reference_to_something_never_said_is_asked_about():
    fact = tool(
        "number_fact",
        "A trivia fact about a number.",
        {"number": {"type": "integer", "description": "The number"}},
        [],
    )
    (finding,) = run("Tell me a trivia fact about my favorite number", tools=[fact]).findings
    assert finding.category is Category.MISSING_ARGUMENT and finding.rule == "unresolved_reference"
    assert finding.path == "$.number" and finding.value == "my favorite number"
    assert run("Tell me a trivia fact about my favorite number, 42", tools=[fact]).findings == []


NESTED = tool(
    "order_suit",
    "Order a tailored suit with the customer's measurements and delivery details.",
    {
        "measurements": {
            "type": "object",
            "description": "Body measurements",
            "properties": {"chest": {"type": "integer"}, "waist": {"type": "integer"}},
        },
        "delivery": {
            "type": "object",
            "properties": {
                "date": {"type": "string", "format": "date"},
                "address": {"type": "string"},
            },
            "required": ["date"],
        },
        "style": {"type": "object", "properties": {"colour": {"type": "string"}}},
    },
    ["measurements", "delivery", "style"],
)


def test_nested_required_values_are_reported_at_their_path():
    result = run("Order a tailored suit in navy, chest 40 and waist 34", tools=[NESTED])
    finding = only(result)
    assert finding.category is Category.MISSING_ARGUMENT and finding.path == "$.delivery.date"


def test_a_required_object_that_requires_nothing_needs_one_of_its_values():
    result = run("Order a tailored suit in navy, delivered tomorrow", tools=[NESTED])
    finding = only(result)  # "style" holds only free text: it is assumed given
    assert finding.path == "$.measurements" and finding.evidence["kind"] == "group"


# --- wrong values ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_text", "category", "path", "value", "rule"),
    [
        ("Send an invoice for 120 euros, my email is anna#example.com", Category.FORMAT_VIOLATION, "$.email", "anna#example.com", "format"),
        ("Send anna@example.com an invoice of -50 euros", Category.RANGE_VIOLATION, "$.amount", "-50", "minimum"),
        ("Send anna@example.com the invoice INV-12 for 80 euros", Category.PATTERN_VIOLATION, "$.invoice_id", "INV-12", "pattern"),
        ("Book a flight from Berlin to Rome on 2024-05-03 for 12 passengers", Category.RANGE_VIOLATION, "$.passengers", "12", "maximum"),
        ("Book a flight from Berlin to Rome on 2024-02-30", Category.FORMAT_VIOLATION, "$.date", "2024-02-30", "format"),
        ("What ratings does the album 'Blue Train' have on SoundCloud?", Category.ENUM_VIOLATION, "$.platform", "SoundCloud", "enum"),
    ],
)
def test_a_value_that_breaks_the_schema_is_reported_verbatim(request_text, category, path, value, rule):
    finding = only(run(request_text))
    assert finding.category is category and finding.path == path
    assert finding.value == value and finding.rule == rule and finding.evidence["written"] == value


def test_an_email_that_breaks_the_pattern_is_reported_verbatim():
    audit = tool(
        "audit_mailbox",
        "Run a security audit on an email mailbox.",
        {"email": {"type": "string", "pattern": "^[\\w.-]+@[\\w.-]+\\.\\w{2,4}$", "description": "The address to audit"}},
        ["email"],
    )
    finding = only(run("Please audit the security of my mailbox, my email: me@mailhost", tools=[audit]))
    assert finding.category is Category.PATTERN_VIOLATION and finding.value == "me@mailhost"
    assert run("Please audit the security of my mailbox me@mailhost.org", tools=[audit]).findings == []


def test_a_wrong_value_is_not_also_reported_missing():
    finding = only(run("Send an invoice for 120 euros, my email is anna#example.com"))
    assert finding.category is Category.FORMAT_VIOLATION


def test_a_value_is_tied_to_the_parameter_named_nearest_before_it():
    result = run("Send an invoice for 120 euros to billing@example.com, the invoice number is INV-9")
    finding = only(result)
    assert finding.path == "$.invoice_id" and finding.value == "INV-9"
    assert result.args["email"].value == "billing@example.com" and result.args["amount"].value == 120


# --- no suitable tool --------------------------------------------------------------------------


def test_an_unrelated_request_has_no_suitable_tool():
    result = run("Write me a poem about autumn leaves")
    finding = only(result)
    assert result.tool is None and finding.category is Category.NO_SUITABLE_TOOL
    assert finding.value == "Write me a poem about autumn leaves" and finding.rule == "min_relevance"
    assert [r["tool"] for r in finding.evidence["ranking"]] == [s.name for s in result.ranking[:3]]


def test_the_relevance_threshold_lives_in_the_policy():
    request = "Find a hotel in Berlin near the flight's arrival"
    strict = Policy.model_validate({"checks": {"preflight": {"min_relevance": 0.9}}})
    lenient = Policy.model_validate({"checks": {"preflight": {"min_relevance": 0.0}}})
    assert only(run(request, policy=strict)).category is Category.NO_SUITABLE_TOOL
    assert run(request, policy=lenient).tool == "book_flight"


def test_an_empty_tool_list_suits_nothing():
    finding = only(run("Book a flight from Berlin to Rome", tools=[]))
    assert finding.category is Category.NO_SUITABLE_TOOL and "no tool is available" in finding.message


def test_a_conversation_with_no_request_is_not_judged():
    assert run(("system", "You are a travel agent.")).findings == []


def test_a_semantic_ranker_replaces_the_lexical_ranking():
    class Ranker:
        def rank_tools(self, request: str, registry: ToolRegistry) -> list[ToolScore]:
            return [ToolScore("get_album_ratings", 0.9), ToolScore("book_flight", 0.1)]

    conversation = Conversation.from_messages([("user", "How do critics like 'Blue Train' on Deezer?")])
    result = assess(conversation, ToolRegistry(TOOLS), Policy(), semantic=Ranker())
    assert result.tool == "get_album_ratings" and result.score == 0.9 and result.findings == []


# --- Guard.preflight: the same decisions as Guard.check ---------------------------------------------


def test_a_missing_value_asks_the_human_naming_tool_and_value():
    decision = Guard(TOOLS).preflight([("user", "Book a flight from Berlin to Rome")])
    assert decision.action is Action.ASK_HUMAN and decision.escalation_kind == "missing_information"
    assert decision.call.id == "preflight" and decision.call.name == "book_flight"
    assert decision.call.args == {"from_city": "Berlin", "to_city": "Rome"} and decision.missing == ["date"]
    assert decision.question == "To run `book_flight` I need a value for 'date' (Travel date). 'date' was not given."
    assert len(decision.policy_hash) == 64 and decision.latency_ms > 0


def test_no_suitable_tool_asks_what_to_do_instead():
    decision = Guard(TOOLS).preflight([("user", "Write me a poem about autumn leaves")])
    assert decision.action is Action.ASK_HUMAN and decision.escalation_kind == "tool_unavailable"
    assert decision.call.name is None and decision.missing == []
    assert decision.question.startswith("No available tool can do this: \u201cWrite me a poem about autumn leaves\u201d")
    assert "Which tool should I use, or what should I do instead?" in decision.question
    assert "`book_flight`" in decision.question


def test_a_wrong_value_asks_the_human_quoting_it():
    decision = Guard(TOOLS).preflight([("user", "Send an invoice for 120 euros, my email is anna#example.com")])
    assert decision.action is Action.ASK_HUMAN and decision.categories == [Category.FORMAT_VIOLATION]
    assert "'email' must be a valid email, but the user gave 'anna#example.com'" in decision.question


def test_a_complete_request_is_allowed():
    decision = Guard(TOOLS).preflight([("user", "Send an invoice for 120 euros to anna@example.com")])
    assert decision.action is Action.ALLOW and decision.findings == [] and decision.question is None
    assert decision.call.args == {"email": "anna@example.com", "amount": 120}


def test_preflight_actions_come_from_the_policy():
    policy = {"checks": {"preflight": {"actions": {"no_suitable_tool": "block"}}}}
    decision = Guard(TOOLS, policy).preflight([("user", "Write me a poem about autumn leaves")])
    assert decision.action is Action.BLOCK
    assert decision.feedback.startswith("The request cannot go ahead as it stands.\n- ")
    assert "Available tools: `book_flight`" in decision.feedback


def test_categories_the_preflight_does_not_map_take_the_policy_actions():
    policy = {"checks": {"preflight": {"actions": {}}}, "actions": {"missing_argument": "allow"}}
    decision = Guard(TOOLS, policy).preflight([("user", "Book a flight from Berlin to Rome")])
    assert decision.action is Action.ALLOW and decision.categories == [Category.MISSING_ARGUMENT]


def test_a_disabled_preflight_allows_everything():
    policy = {"checks": {"preflight": {"enabled": False}}}
    decision = Guard(TOOLS, policy).preflight([("user", "Write me a poem about autumn leaves")])
    assert decision.action is Action.ALLOW and decision.findings == []


def test_a_tool_that_needs_approval_is_not_approved_before_any_call():
    policy = {"tools": {"send_invoice": {"requires_approval": True}}}
    decision = Guard(TOOLS, policy).preflight([("user", "Send an invoice for 120 euros to anna@example.com")])
    assert decision.action is Action.ALLOW and decision.escalation_kind is None


async def test_apreflight_is_the_async_twin():
    decision = await Guard(TOOLS).apreflight([("user", "Book a flight from Berlin to Rome")])
    assert decision.action is Action.ASK_HUMAN and decision.missing == ["date"]


EXCHANGE = tool(
    "get_buy_price",
    "Current buy price of a currency pair on Coinbase.",
    {"pair": {"type": "string", "description": "Currency pair, e.g. 'BTC-USD'"}},
    ["pair"],
)


def test_a_service_no_tool_mentions_is_no_suitable_tool():
    (finding,) = run("What is the best ask price for 'BTC-USDT' on Kucoin?", tools=[EXCHANGE]).findings
    assert finding.category is Category.NO_SUITABLE_TOOL and finding.rule == "unmentioned_provider"
    assert finding.value == "Kucoin"
    assert run("What is the buy price for 'BTC-USD' on Coinbase?", tools=[EXCHANGE]).findings == []


def test_a_service_named_by_the_tool_it_belongs_to_is_mentioned():
    listed = {**EXCHANGE, "name": "get_ticker", "description": "Ticker of a trading pair.", "tool_name": "kucoin"}
    assert run("Get the ticker for 'BTC-USDT' on KuCoin", tools=[listed]).findings == []


def test_a_name_a_parameter_names_is_a_value_not_a_service():
    elevation = tool(
        "get_elevation",
        "Elevation of a location.",
        {"dataset_name": {"type": "string"}, "locations": {"type": "string"}},
        ["dataset_name", "locations"],
    )
    assert run("Get the elevation of '48.8,2.3' using the SRTM dataset", tools=[elevation]).findings == []


def test_a_parameter_named_only_by_its_kind_is_asked_about():
    amiibos = tool(
        "get_amiibos",
        "Find amiibo figures.",
        {"character": {"type": "string", "description": "Character name"}, "deck_count": {"type": "integer"}},
        [],
    )
    (finding,) = run("Find amiibos related to a character", tools=[amiibos]).findings
    assert (finding.path, finding.rule, finding.value) == ("$.character", "unresolved_reference", "a character")
    assert run("Find amiibos related to a character called 'Mario'", tools=[amiibos]).findings == []
    assert run("Find amiibos from a deck of cards", tools=[amiibos]).findings == []  # a deck_count is a count


def test_databases_the_user_names_that_no_tool_uses_are_no_suitable_tool():
    drugs = tool(
        "drug_sensitivity",
        "Analyse a patient's drug sensitivity from genetic data.",
        {"genetic_markers": {"type": "array", "items": {"type": "string"}}},
        [],
    )
    findings = run('Check interactions between Metformin and Insulin; use the databases "DrugBank" and "PubChem"', tools=[drugs]).findings
    assert [(f.category, f.value) for f in findings if f.rule == "unmentioned_provider"] == [(Category.NO_SUITABLE_TOOL, "DrugBank")]


# --- several steps: where a part's values are said -----------------------------------------------

STEP_TOOLS = [
    tool(
        "reverse_geocode",
        "Find the nearest street address of a point given by latitude and longitude.",
        {
            "lat": {"type": "number", "minimum": -90, "maximum": 90, "description": "Latitude"},
            "lon": {"type": "number", "minimum": -180, "maximum": 180, "description": "Longitude"},
        },
        ["lat", "lon"],
    ),
    tool(
        "ip_country",
        "Identify the country an IP address belongs to.",
        {"ip": {"type": "string", "description": "The IP address"}},
        ["ip"],
    ),
    tool(
        "station_position",
        "Get the current position of the space station.",
        {},
        [],
    ),
    tool(
        "sunrise_sunset",
        "Get the sunrise and sunset times at a latitude and longitude.",
        {
            "lat": {"type": "number", "minimum": -90, "maximum": 90, "description": "Latitude"},
            "lng": {"type": "number", "minimum": -180, "maximum": 180, "description": "Longitude"},
        },
        ["lat", "lng"],
    ),
    tool(
        "map_area",
        "Show the vehicles moving inside a bounding box.",
        {side: {"type": "number", "description": f"The {side} edge of the box"} for side in ("north", "south", "east", "west")},
        ["north", "south", "east", "west"],
    ),
]


@pytest.mark.parametrize(
    "request_text",
    [
        # a part that no tool serves sets the scene for the parts that ask
        "I am standing at lat=48.357, lon=2.37; can you tell me the nearest address? Also, which country is the IP address '9.9.9.9' in?",
        "I am at latitude 52.52 and longitude 13.40. What is the nearest street address? And which country is IP 8.8.8.8 in?",
        # values written as key=value are values of those keys
        "Show the vehicles moving inside north=52.52411, west=13.41002, south=52.51942, east=13.41709",
        "List the vehicles in the box north:52.5 south:52.4 east:13.5 west:13.3",
        # a later step that refers back takes its values from the step before, whichever ranks first
        "Where is the space station right now, and what are the sunrise and sunset times for this location?",
    ],
)
def test_values_of_a_multi_step_request_are_found_where_they_are_said(request_text):
    # (the sunrise tool left out where it would compete for the part that sets the scene)
    tools = STEP_TOOLS if "sunrise" in request_text else [t for t in STEP_TOOLS if t["name"] != "sunrise_sunset"]
    assert [f for f in run(request_text, tools=tools).findings if f.category is Category.MISSING_ARGUMENT] == []


@pytest.mark.parametrize(
    ("request_text", "missing"),
    [
        # still missing: no part says them
        ("Can you tell me the nearest address? Also, which country is the IP address '9.9.9.9' in?", {"$.lat", "$.lon"}),
        ("What are the sunrise and sunset times? Also, which country is IP 8.8.8.8 in?", {"$.lat", "$.lng"}),
        ("Show the vehicles moving inside the box around the old town", {"$.north", "$.south", "$.east", "$.west"}),
    ],
)
def test_a_multi_step_request_still_misses_what_no_part_says(request_text, missing):
    found = {f.path for f in run(request_text, tools=STEP_TOOLS).findings if f.category is Category.MISSING_ARGUMENT}
    assert missing <= found


def test_a_url_a_clock_or_a_ratio_is_no_key_value():
    from guard.checks.preflight.reading import _KEY_VALUE

    assert _KEY_VALUE.fullmatch("lat=48.357").group(1) == "48.357"
    for text in ("https://example.com/a", "10:30", "a:b:c", "x=1=2"):
        assert _KEY_VALUE.fullmatch(text) is None


QUOTE_TOOLS = [
    tool("search_quotes", "Search famous quotes.", {"term": {"type": "string", "description": "The search term"}}, ["term"]),
    tool("user_tracks", "Fetch the tracks of a user's playlist.", {"handle": {"type": "string", "description": "The user's handle"}}, ["handle"]),
]


@pytest.mark.parametrize(
    "request_text",
    [
        "Find me some quotes about leadership",
        "Share a few quotes about courage, please",
        "Fetch the tracks of the user 'john_doe's playlist",
        "Fetch the tracks from the user 'mia.k's playlist",
    ],
)
def test_a_topic_after_about_and_a_quoted_name_before_a_possessive_are_values(request_text):
    assert run(request_text, tools=QUOTE_TOOLS).findings == []


@pytest.mark.parametrize("request_text", ["Find me some quotes", "Tell me about the quotes you have", "Fetch the tracks of my friend's playlist"])
def test_without_a_topic_or_a_name_the_value_is_still_missing(request_text):
    assert [f.category for f in run(request_text, tools=QUOTE_TOOLS).findings] == [Category.MISSING_ARGUMENT]


PAPERS = tool("search_papers", "Search research papers and news articles.", {"query": {"type": "string", "description": "Search words"}}, ["query"])


@pytest.mark.parametrize(
    "request_text",
    ["Find recent articles on AI safety", "Any news on Tesla earnings this week?", "Show me papers on COVID vaccines, please"],
)
def test_a_name_that_begins_a_topic_after_on_is_no_service(request_text):
    assert [f for f in run(request_text, tools=[PAPERS]).findings if f.rule == "unmentioned_provider"] == []


@pytest.mark.parametrize(
    ("request_text", "service"),
    [
        ("Find articles about 'remote work' on Medium", "Medium"),
        ("Find papers about 'AI safety' on Scopus", "Scopus"),
        ("Search for news about 'the election' on Reddit today", "Reddit"),
    ],
)
def test_a_service_after_on_is_still_a_service(request_text, service):
    assert [f.value for f in run(request_text, tools=[PAPERS]).findings if f.rule == "unmentioned_provider"] == [service]


_STYLED = [
    {
        "name": "generate_avatar",
        "description": "Generate an avatar picture.",
        "parameters": {"type": "object", "properties": {"style_name": {"type": "string", "description": "The style of the avatar"}}, "required": ["style_name"]},
    },
    {
        "name": "paint_fence",
        "description": "Order a fence painting job.",
        "parameters": {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
    },
]


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("Make me an avatar in pixel-art style.", []),  # the word before the parameter's own noun is its value
        ("Make me an avatar in lorelei style, please.", []),
        ("Paint the fence a navy color.", []),
        ("Make me an avatar in some style.", ["$.style_name"]),
        ("Make me an avatar in my favorite style.", ["$.style_name"]),
        ("Make me an avatar in a specific style.", ["$.style_name"]),
        ("Paint the fence in the main color of the house.", ["$.color"]),
    ],
)
def test_a_word_before_the_parameters_own_noun_is_its_value(text: str, missing: list[str]) -> None:
    decision = Guard(_STYLED).preflight([{"role": "user", "content": text}])
    assert sorted(f.path for f in decision.findings if f.category is Category.MISSING_ARGUMENT and f.rule == "required") == missing


# --- places: a country, a state, a city ---------------------------------------------------------

PLACES = [
    tool(
        "zip_codes",
        "List the postal codes of a city.",
        {
            "country": {"type": "string", "description": "Country code such as 'US'."},
            "state": {"type": "string", "description": "State code such as 'CA' for California."},
            "city": {"type": "string", "description": "The name of the city."},
        },
        ["country", "state", "city"],
    ),
    tool(
        "city_weather",
        "Current weather of a city.",
        {"city": {"type": "string", "description": "City name"}, "country": {"type": "string", "description": "Country name"}},
        ["city", "country"],
    ),
]


@pytest.mark.parametrize(
    "request_text",
    [
        "List the postal codes of the city of Los Angeles, California",  # the state after the city, the country implied
        "List the postal codes of Austin in Texas, USA",
        "What is the current weather in Paris?",  # a city implies its country
        "What is the current weather in Paris, France?",  # Paris is also a French region: still the city
    ],
)
def test_a_city_gives_its_place_and_implies_its_country_and_state(request_text):
    assert run(request_text, tools=PLACES).findings == []


@pytest.mark.parametrize(
    ("request_text", "missing"),
    [
        ("List the postal codes of the state of Texas", {"$.city"}),  # a state is no city
        ("What is the current weather in France?", {"$.city"}),  # nor is a country
        ("List the postal codes of France", {"$.city", "$.state"}),  # a country implies no state
        ("What is the current weather like today?", {"$.city", "$.country"}),
    ],
)
def test_a_country_or_a_state_alone_leaves_the_city_missing(request_text, missing):
    findings = run(request_text, tools=PLACES).findings
    assert {f.path for f in findings} == missing and {f.category for f in findings} == {Category.MISSING_ARGUMENT}


KINDS = [
    tool(
        "games_by_category",
        "List free-to-play games in a category.",
        {"category": {"type": "string", "description": "Game category"}},
        ["category"],
    ),
]


@pytest.mark.parametrize(
    ("request_text", "given"),
    [
        ("Can you list some free-to-play shooter games?", True),  # the kind, right before the tool's noun
        ("Find me pixel-art games", True),
        ("Can you list some games?", False),  # no kind said
        ("List popular games please", False),  # ranks them, says no kind
        ("List two games", False),  # counts them
        ("Can you list some free-to-play games?", False),  # the tool's own words: every game it lists is one
    ],
)
def test_a_kind_of_the_tools_things_said_before_their_noun(request_text, given):
    findings = run(request_text, tools=KINDS).findings
    assert (findings == []) is given, findings


BREEDS = [
    tool(
        "random_image_by_breed",
        "Show a random picture for a breed.",
        {"breed": {"type": "string", "description": "The breed of dog to show."}},
        ["breed"],
    ),
]


@pytest.mark.parametrize(
    ("request_text", "given"),
    [
        ("Show me a random picture of a husky dog", True),  # the kind before what the description says it is a kind of
        ("Could you show me a picture of a beagle dog, please?", True),
        ("Show me a random picture of a dog", False),  # no breed said
        ("Show me a random picture of my dog", False),  # points at one, says no breed
        ("Show me pictures of two dogs", False),  # counts them
    ],
)
def test_a_kind_named_by_the_parameters_description(request_text, given):
    findings = run(request_text, tools=BREEDS).findings
    assert (findings == []) is given, findings


LISTENERS = [
    tool(
        "get_user_tracks",
        "Fetch the list of tracks posted by a user.",
        {
            "uHandle": {"type": "string", "description": "The handle of the user."},
            "playlistId": {"type": "integer", "description": "The ID of the playlist."},
            "format": {"type": "string", "description": "Response format."},
        },
        ["uHandle"],
    ),
]


@pytest.mark.parametrize(
    ("request_text", "given"),
    [
        ("Fetch the tracks from the user 'john_doe's playlist", True),  # the owner of the playlist, not its id
        ("Fetch the tracks from marta_k's playlist", True),
        ("Fetch the tracks from my playlist", False),
        ("Fetch the tracks from the playlist", False),
    ],
)
def test_a_possessive_value_owns_the_noun_after_it(request_text, given):
    findings = run(request_text, tools=LISTENERS).findings
    assert (findings == []) is given, findings


def test_a_site_named_by_its_homepage_gives_its_web_address() -> None:
    screenshot = {"name": "take_screenshot", "description": "Take a screenshot of a web page",
                  "parameters": {"type": "object", "properties": {"url": {"type": "string", "description": "URL"}}, "required": ["url"]}}
    guard = Guard([screenshot])
    for said in ("could you provide a screenshot of GitHub's homepage?", "take a screenshot of the homepage of The Guardian"):
        assert Category.MISSING_ARGUMENT not in guard.preflight([("user", said)]).categories, said
    # Everyday negatives: a page nobody named, the user's own site, a homepage in general
    for said in ("take a screenshot of a page I like", "take a screenshot of my website", "take a screenshot of the homepage"):
        assert Category.MISSING_ARGUMENT in guard.preflight([("user", said)]).categories, said
