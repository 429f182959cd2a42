"""``SemanticGuard.rank_tools`` (the preflight's ranking) and ``selection_check``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.semantic._support import require, tool

require()

from guard.budgets import GuardState
from guard.checks import CheckContext
from guard.checks.relevance import ToolScore, rank_tools
from guard.conversation import Conversation
from guard.engine import Guard
from guard.models import ToolCall
from guard.policy import Policy
from guard.registry import ToolRegistry, ToolSpec
from guard.semantic import SemanticGuard, selection_check, split_request
from guard.taxonomy import Category

TOOLS = [
    tool("get_weather", "Current weather and forecast for a city.", city="The city to report on"),
    tool("search_flights", "Search flights between two airports on a date.", origin="Departure airport", destination="Arrival airport"),
    tool("transfer_money", "Transfer an amount of money to a bank account.", iban="The account to pay", amount="How much"),
    tool("createCalendarEvent", "Schedule a meeting in the user's calendar.", title="Meeting title", start="Start time"),
    tool("translate_text", "Translate a text into another language.", text="What to translate", target_language="Into which language"),
]
MIN_RELEVANCE = Policy().checks.preflight.min_relevance


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ("Send 50 euros to my landlord", "transfer_money"),
        ("Put a call with Anna on my agenda for Monday", "createCalendarEvent"),
        ("How do you say good morning in Japanese?", "translate_text"),
        ("Find me a plane ticket to Rome", "search_flights"),
    ],
)
def test_paraphrased_requests_rank_the_right_tool_first(semantic: Any, request_text: str, expected: str) -> None:
    registry = ToolRegistry(TOOLS)
    lexical = rank_tools(request_text, registry)
    assert lexical[0].name != expected or lexical[0].score < MIN_RELEVANCE  # the words alone fail
    ranked = semantic.rank_tools(request_text, registry)
    assert all(isinstance(s, ToolScore) for s in ranked)
    assert ranked[0].name == expected and ranked[0].score >= MIN_RELEVANCE
    assert ranked[0].score > ranked[1].score


def test_the_registry_is_embedded_once(semantic: Any) -> None:
    registry = ToolRegistry(TOOLS)
    for text in ("Send 50 euros to my landlord", "Find me a plane ticket to Rome", "weather in Oslo"):
        semantic.rank_tools(text, registry)
    assert semantic.registry_encodes == 1
    semantic.rank_tools("weather in Oslo", ToolRegistry(TOOLS))  # same content, new object: same key
    assert semantic.registry_encodes == 1
    grown = ToolRegistry([*TOOLS, tool("get_news", "Latest news headlines.")])
    semantic.rank_tools("weather in Oslo", grown)
    assert semantic.registry_encodes == 2


def test_requests_split_into_parts() -> None:
    assert split_request("Find flights to Rome and then book a hotel there; also what's the weather in Rome?") == [
        "Find flights to Rome", "book a hotel there", "also what's the weather in Rome"]
    assert split_request("Carbon intensity in the U.S. House of Representatives") == [
        "Carbon intensity in the U.S. House of Representatives"]
    assert split_request("List the breeds. Sort them by name.") == ["List the breeds, Sort them by name"]
    assert split_request("Find a flight to Rome, book the cheapest, and email me the confirmation") == [
        "Find a flight to Rome", "book the cheapest", "email me the confirmation"]


def test_a_part_no_tool_serves_makes_the_request_unserved(semantic: Any) -> None:
    guard = Guard(TOOLS, semantic=semantic)
    served = guard.preflight([("user", "What's the weather in Oslo, and also translate 'hello' into German?")])
    assert Category.NO_SUITABLE_TOOL not in served.categories
    unserved = guard.preflight([("user", "What's the weather in Oslo? Also, order me a large pepperoni pizza for dinner.")])
    assert Category.NO_SUITABLE_TOOL in unserved.categories


def _ctx(semantic: Any, tools: list[dict[str, Any]], call: dict[str, Any], *users: str) -> CheckContext:
    registry = ToolRegistry(tools)
    parsed = ToolCall.from_any(call)
    return CheckContext(
        call=parsed, args=parsed.args, spec=registry.get(parsed.name), registry=registry,
        conversation=Conversation.from_messages([("user", u) for u in users]), state=GuardState(),
        policy=Policy(), semantic=semantic,
    )


def test_selection_check_flags_a_clearly_worse_tool(semantic: Any) -> None:
    wrong = _ctx(semantic, TOOLS, {"name": "translate_text", "args": {"text": "Oslo"}, "id": "1"}, "What's the weather like in Oslo today?")
    [finding] = selection_check(wrong)
    assert finding.category is Category.SUSPICIOUS_TOOL_SELECTION and finding.evidence["better"] == "get_weather"
    right = _ctx(semantic, TOOLS, {"name": "get_weather", "args": {"city": "Oslo"}, "id": "2"}, "What's the weather like in Oslo today?")
    assert selection_check(right) == []
    assert selection_check(_ctx(None, TOOLS, {"name": "translate_text", "args": {}, "id": "3"}, "weather in Oslo")) == []


def test_a_step_towards_the_better_tool_is_not_a_wrong_choice(semantic: Any) -> None:
    tools = [
        tool("GetUserToken", "Get the user token by username and password.", ("username", "password"), username="", password=""),
        tool("DeleteAccount", "Delete an account.", ("token",), token="The user's token"),
    ]
    step = _ctx(semantic, tools, {"name": "GetUserToken", "args": {}, "id": "1"}, "Please delete my account.")
    assert selection_check(step) == []


def test_a_lookup_with_no_arguments_reads_context_and_is_no_wrong_choice(semantic: Any) -> None:
    """Looking up the user's profile before e-mailing them: the lookup takes nothing and does
    nothing, so no tool fits "better". An action with no arguments is still judged."""
    tools = [tool("get_user_profile", "Get the current user's profile (name, email).", ()),
             tool("clear_cart", "Empty the shopping cart.", ()),
             tool("send_email", "Send an email.", ("to", "subject", "body"), to="", subject="", body="")]
    asked = "Find a flight from Boston to Chicago, book it, and email me the confirmation."
    lookup = _ctx(semantic, tools, {"name": "get_user_profile", "args": {}, "id": "1"}, asked)
    assert selection_check(lookup) == []
    action = _ctx(semantic, tools, {"name": "clear_cart", "args": {}, "id": "2"}, asked)
    assert [f.evidence["better"] for f in selection_check(action)] == ["send_email"]
    # a tool that makes something is no lookup, with or without arguments
    making = [*tools, tool("generate_password", "Generate a random password.", ())]
    create = _ctx(semantic, making, {"name": "generate_password", "args": {}, "id": "3"}, asked)
    assert [f.evidence["better"] for f in selection_check(create)] == ["send_email"]


def test_a_search_for_what_a_better_fitting_tool_needs_is_a_step_of_the_plan(semantic: Any) -> None:
    """Finding the tracks before they are added to the playlist: the search is judged a step
    towards any tool that fits the request better and needs what it finds (``track_ids``,
    ``restaurant_id``: plural names, key words), not only towards the best one. An action is no
    such step."""
    tools = [tool("search_tracks", "Search the music catalogue for tracks.", ("query",), query=""),
             tool("create_playlist", "Create a new playlist with a title.", ("title",), title=""),
             tool("add_tracks_to_playlist", "Add tracks to a playlist.", ("playlist_id", "track_ids"), playlist_id="", track_ids=""),
             tool("delete_tracks", "Delete tracks from the library.", ("track_ids",), track_ids="")]
    asked = "Make me a playlist called 'Sunday Morning' with Harvest Moon by Neil Young and Pink Moon by Nick Drake"
    search = _ctx(semantic, tools, {"name": "search_tracks", "args": {"query": "Harvest Moon Neil Young"}, "id": "1"}, asked)
    assert selection_check(search) == []
    delete = _ctx(semantic, tools, {"name": "delete_tracks", "args": {"track_ids": ["t1"]}, "id": "2"}, asked)
    assert [f.category for f in selection_check(delete)] == [Category.SUSPICIOUS_TOOL_SELECTION]


def test_reading_something_else_before_acting_is_no_wrong_choice(semantic: Any) -> None:
    """Looking up the customer's account before drafting the e-mail to them: a lookup of another
    thing than the action's is a step of the plan. A read of the very thing the user asked to act
    on (listing reminders when asked to add one) is still judged."""
    tools = [tool("search_accounts", "Search CRM accounts by name.", ("query",), query=""),
             tool("create_email_draft", "Create an e-mail draft to a contact.", ("to", "subject", "body"), to="", subject="", body=""),
             tool("list_reminders", "List the user's reminders.", ("query",), query=""),
             tool("add_reminder", "Add a reminder at a time.", ("text", "time"), text="", time="")]
    asked = "Draft a renewal e-mail to our contact at Globex about next steps."
    lookup = _ctx(semantic, tools, {"name": "search_accounts", "args": {"query": "Globex"}, "id": "1"}, asked)
    assert selection_check(lookup) == []
    twin = _ctx(semantic, tools, {"name": "list_reminders", "args": {"query": "dentist"}, "id": "2"},
                "Add a reminder for my dentist appointment tomorrow at 9.")
    assert [f.evidence["better"] for f in selection_check(twin)] == ["add_reminder"]


def test_a_services_prefix_is_no_verb_of_the_plan(semantic: Any) -> None:
    """Tools named after their service ("stripe_search_customers", "stripe_create_refund"): the
    verb comes after the prefix, so the customer looked up before the refund is still a lookup
    before acting; a read of the very thing to act on is still judged."""
    tools = [tool("stripe_search_customers", "Search customers by email.", ("query",), query=""),
             tool("stripe_create_refund", "Refund a charge.", ("charge",), charge=""),
             tool("stripe_list_refunds", "List the refunds of an account.", ("limit",), limit=""),
             tool("stripe_update_customer", "Update a customer's details.", ("customer", "note"), customer="", note="")]
    asked = "Please refund the most recent charge for jane.doe@example.com, she cancelled within the trial."
    lookup = _ctx(semantic, tools, {"name": "stripe_search_customers", "args": {"query": "email:'jane.doe@example.com'"}, "id": "1"}, asked)
    assert selection_check(lookup) == []
    twin = _ctx(semantic, tools, {"name": "stripe_list_refunds", "args": {"limit": 3}, "id": "2"}, asked)
    assert [f.evidence["better"] for f in selection_check(twin)] == ["stripe_create_refund"]


def test_a_vendor_word_before_the_verb_and_everyday_action_verbs(semantic: Any) -> None:
    """"yelp_search_businesses" searches and "bookTable" books, though no prefix is shared by every
    tool; "pharmacy_refill_prescription" acts ("refill"), so checking the stock before it is a
    lookup before acting. Listing the very refills asked for is still judged."""
    tools = [tool("yelp_search_businesses", "Search businesses by term and location.", ("term",), term=""),
             tool("bookTable", "Book a table at a restaurant.", ("business_id", "time"), business_id="", time=""),
             tool("pharmacy_check_stock", "Check whether a store has a medicine in stock.", ("drug",), drug=""),
             tool("pharmacy_refill_prescription", "Refill a prescription for pickup at a store.", ("rx_number",), rx_number=""),
             tool("pharmacy_list_refills", "List past prescription refills.", ("limit",), limit="")]
    dinner = "Find a well-rated Ethiopian place in Washington DC and book it for 6 this Saturday at 8pm."
    search = _ctx(semantic, tools, {"name": "yelp_search_businesses", "args": {"term": "Ethiopian"}, "id": "1"}, dinner)
    assert selection_check(search) == []
    refill = "Refill my blood pressure medicine for pickup tomorrow at the store on 5th Ave."
    stock = _ctx(semantic, tools, {"name": "pharmacy_check_stock", "args": {"drug": "lisinopril"}, "id": "2"}, refill)
    assert selection_check(stock) == []
    listed = _ctx(semantic, tools, {"name": "pharmacy_list_refills", "args": {"limit": 3}, "id": "3"}, refill)
    assert [f.evidence["better"] for f in selection_check(listed)] == ["pharmacy_refill_prescription"]


def test_a_later_step_after_the_better_tool_ran_this_turn_is_not_a_wrong_choice(semantic: Any) -> None:
    """Multi-step: the request is best served by the translation as a whole; once the translation
    ran in this turn, sending its text is the next step of the plan, not a wrong tool. Before it
    ran, and in a later turn, the same call is judged against the whole request again."""
    tools = [tool("translate_text", "Translate text into another language.", ("text", "target_language")),
             tool("send_email", "Send an email.", ("to", "body"))]
    send = {"name": "send_email", "args": {"to": "hans@example.de", "body": "Das Meeting ist abgesagt"}, "id": "2"}
    asked = ("user", "Translate 'the meeting is cancelled' into German for Hans at hans@example.de.")
    ran = [asked, {"role": "assistant", "content": "", "tool_calls": [{"name": "translate_text", "args": {"text": "the meeting is cancelled", "target_language": "de"}, "id": "1"}]},
           {"role": "tool", "content": "Das Meeting ist abgesagt", "tool_call_id": "1"}]
    registry = ToolRegistry(tools)

    def flagged(messages: list[Any]) -> bool:
        parsed = ToolCall.from_any(send)
        ctx = CheckContext(call=parsed, args=parsed.args, spec=registry.get("send_email"), registry=registry,
                           conversation=Conversation.from_messages(messages), state=GuardState(), policy=Policy(), semantic=semantic)
        return any(f.category is Category.SUSPICIOUS_TOOL_SELECTION for f in selection_check(ctx))

    assert flagged([asked])
    assert not flagged(ran)
    assert flagged([*ran, ("user", "Translate 'see you soon' into French too.")])  # a new turn: the translation is not done
    # a request that names the sending as a step of its own ("... and send it to ...") is served by
    # the send in that step, before or after the translation ran
    assert not flagged([("user", "Translate 'the meeting is cancelled' into German and send it to hans@example.de.")])


def test_the_latest_message_may_only_answer_a_question(semantic: Any) -> None:
    tools = [
        tool("GetUserToken", "Get the user token by username and password.", ("username", "password"), username="", password=""),
        tool("DeleteAccount", "Delete an account.", ("token",), token="The user's token"),
    ]
    ctx = _ctx(semantic, tools, {"name": "DeleteAccount", "args": {}, "id": "1"}, "Please delete my account.",
               "My username is foo and my password is bar.")
    assert selection_check(ctx) == []


def test_the_selection_check_is_offered_to_the_engine(semantic: Any, embedder: Any) -> None:
    from guard.semantic import SemanticGuard

    assert semantic.call_checks == (selection_check,)
    assert SemanticGuard(embedder, selection=False).call_checks == ()


def test_a_search_for_things_of_a_kind_feeds_the_read_of_one_by_its_key() -> None:
    from guard.semantic import _feeds

    registry = ToolRegistry([
        tool("search_papers", "Search arXiv.", ("query",), query=""),
        tool("get_paper", "Get a paper's abstract.", ("arxiv_id",), arxiv_id=""),
        tool("list_orders", "List the user's orders.", ()),
        tool("get_order", "Get an order.", ("order_id",), order_id=""),
        tool("get_weather", "Current weather.", ("city",), city=""),
        tool("get_paper_citations", "Citations of a paper by title.", ("title",), title=""),
    ])
    assert _feeds(registry.get("search_papers"), registry.get("get_paper"))
    assert _feeds(registry.get("list_orders"), registry.get("get_order"))
    # Everyday negatives: a search of another kind of thing, a read of one (no search), a goal read by no key
    assert not _feeds(registry.get("search_papers"), registry.get("get_order"))
    assert not _feeds(registry.get("get_weather"), registry.get("get_order"))
    assert not _feeds(registry.get("search_papers"), registry.get("get_paper_citations"))


def test_a_get_of_many_things_finds_the_key_a_goal_that_requires_nothing_reads_by() -> None:
    from guard.semantic import _feeds

    registry = ToolRegistry([
        tool("get_players", "Get data about players; search by name.", (), search="", id=""),
        tool("get_players_statistics", "Statistics of players, by player id and season.", (), id="", season=""),
        tool("get_details", "Details of one player.", ("player_id",), player_id=""),
        tool("get_player", "One player by id.", ("id",), id=""),
        tool("get_teams", "Teams.", (), search=""),
    ])
    assert _feeds(registry.get("get_players"), registry.get("get_players_statistics"))
    # Everyday negatives: one thing's details, a read of one thing, a plural of another kind
    assert not _feeds(registry.get("get_details"), registry.get("get_players_statistics"))
    assert not _feeds(registry.get("get_player"), registry.get("get_players_statistics"))
    assert not _feeds(registry.get("get_teams"), registry.get("get_players_statistics"))


def test_a_step_feeds_a_tool_that_starts_from_what_its_description_says_it_gives() -> None:
    from guard.semantic import _feeds

    registry = ToolRegistry([
        tool("maps_geocode", "Convert an address into coordinates.", ("address",)),
        tool("places_search_nearby", "Find places near a coordinate.", ("lat", "lng")),
        tool("get_weather", "Returns the current weather for a city.", ("city",)),
        tool("send_email", "Send an email to a user.", ("to", "body")),
    ])
    assert _feeds(registry.get("maps_geocode"), registry.get("places_search_nearby"))
    # Everyday negatives: a step whose description gives something the other tool does not start from.
    assert not _feeds(registry.get("get_weather"), registry.get("places_search_nearby"))
    assert not _feeds(registry.get("get_weather"), registry.get("send_email"))
    assert not _feeds(registry.get("send_email"), registry.get("places_search_nearby"))


def test_an_answer_to_the_assistants_question_goes_on_with_the_request_before_it() -> None:
    from guard.semantic import _done_this_turn

    asked = [("user", "Biscuit is limping, can he be seen today? My phone is (503) 555-0148."),
             {"role": "assistant", "content": "", "tool_calls": [{"name": "find_client", "args": {"phone": "5035550148"}, "id": "1"}]},
             {"role": "tool", "content": "{\"client_id\": \"CL-1\"}", "tool_call_id": "1"},
             ("assistant", "We can see Biscuit at 3:20 PM or 4:40 PM. Which works?"),
             ("user", "3:20 please")]
    assert _done_this_turn(Conversation.from_messages(asked)) == {"find_client"}
    # Everyday negatives: a new request after a report, or after a question the user did not answer.
    reported = [*asked[:3], ("assistant", "Booked for 3:20 PM."), ("user", "Now send me an SMS reminder.")]
    assert _done_this_turn(Conversation.from_messages(reported)) == set()
    assert _done_this_turn(Conversation.from_messages(asked[:3] + [("user", "3:20 please")])) == set()


def test_an_upload_feeds_a_tool_that_takes_what_it_made_even_when_optional() -> None:
    from guard.semantic import _feeds

    registry = ToolRegistry([
        tool("smm_upload_media", "Upload an image from a URL.", ("url",)),
        tool("smm_create_post", "Create a scheduled post.", ("account_id", "caption"), media_ids="The uploaded media."),
        tool("smm_get_post_analytics", "Analytics for a post.", ("post_id",)),
        tool("smm_get_media", "Get a media item.", ("media_id",)),
    ])
    assert _feeds(registry.get("smm_upload_media"), registry.get("smm_create_post"), "smm")
    # Everyday negatives: what the upload made is not what the other tool takes; a lookup feeds only what is required.
    assert not _feeds(registry.get("smm_upload_media"), registry.get("smm_get_post_analytics"), "smm")
    assert not _feeds(registry.get("smm_get_media"), registry.get("smm_create_post"), "smm")


def test_no_flag_where_the_better_tool_itself_fits_the_part_weakly(embedder: Any) -> None:
    """A lead over a tool that fits nothing well says little (an answer, a step no tool names):
    the better tool must itself score ``selection_floor`` on the part."""
    from guard.semantic import SemanticGuard

    tools = [tool("directory_lookup", "Look up an employee in the company directory.", ("query",)),
             tool("calendar_find_free_slots", "Find common free time for attendees.", ("attendees", "window_start")),
             tool("calendar_create_event", "Create a calendar event.", ("title", "start")),
             tool("slack_post_message", "Post a message to a Slack channel.", ("channel", "text"))]
    # (a query the user wrote word for word, "Alex Kim", is a lookup of what they named: no flag
    # with or without the floor; this one is the model's own wording)
    call = {"name": "directory_lookup", "args": {"query": "Kim, Alex"}, "id": "1"}
    asked = "Find 30 minutes tomorrow afternoon with Alex Kim and Priya Shah for a roadmap review, book it, and post the time in #product-team."
    weak = selection_check(_ctx(SemanticGuard(embedder), tools, call, asked))
    assert weak == []
    assert selection_check(_ctx(SemanticGuard(embedder, selection_floor=0.0), tools, call, asked))  # without the floor it flags
    # a clearly better tool still flags a wrong one
    wrong = _ctx(SemanticGuard(embedder), TOOLS, {"name": "translate_text", "args": {"text": "Oslo"}, "id": "1"}, "What's the weather like in Oslo today?")
    assert selection_check(wrong)


def test_a_new_request_in_a_later_turn_is_judged_on_its_own() -> None:
    from guard.semantic import _open_requests

    served = [("user", "Which of my open issues in project PAY are blocked?"),
              {"role": "assistant", "content": "", "tool_calls": [{"name": "jira_search", "args": {"jql": "status = Blocked"}, "id": "1"}]},
              {"role": "tool", "content": "[\"PAY-311\"]", "tool_call_id": "1"},
              ("assistant", "PAY-311 is blocked."),
              ("user", "It is unblocked now. Move it back to In Progress and leave a comment saying so.")]
    assert _open_requests(Conversation.from_messages(served)) == ["It is unblocked now. Move it back to In Progress and leave a comment saying so."]
    # Everyday negatives: a request no tool has served yet stays open, and an answer to the assistant's question goes with its request.
    unserved = [("user", "Please delete my account."), ("user", "My username is foo and my password is bar.")]
    assert _open_requests(Conversation.from_messages(unserved)) == ["Please delete my account.", "My username is foo and my password is bar."]
    answered = [*served[:3], ("assistant", "PAY-311 is blocked. Shall I move it?"), ("user", "yes please")]
    assert _open_requests(Conversation.from_messages(answered)) == ["Which of my open issues in project PAY are blocked?", "yes please"]


def test_steps_on_the_way_serve_every_request(semantic: Any) -> None:
    """Signing in to the app, working out a sum or handing in the final answer is a step of any
    plan: never the wrong tool for the request. A read of the order before returning items is a
    lookup before acting ("return" acts); another act is still judged."""
    tools = [tool("venmo__login", "Log in to Venmo with the user's credentials.", ("username", "password"), username="", password=""),
             tool("venmo__create_payment_request", "Request money from a contact on Venmo.", ("user", "amount"), user="", amount=""),
             tool("calculate", "Evaluate an arithmetic expression.", ("expression",), expression=""),
             tool("get_order_details", "Get an order's status and items.", ("order_id",), order_id=""),
             tool("return_delivered_order_items", "Return items of a delivered order for a refund.", ("order_id", "item_ids"), order_id="", item_ids=""),
             tool("venmo__send_payment", "Send money to a contact on Venmo.", ("user", "amount"), user="", amount="")]
    split = "Request $32.20 from each of my roommates on Venmo for the internet bill."
    login = _ctx(semantic, tools, {"name": "venmo__login", "args": {"username": "a", "password": "b"}, "id": "1"}, split)
    assert selection_check(login) == []
    total = _ctx(semantic, tools, {"name": "calculate", "args": {"expression": "64.40 / 2"}, "id": "2"}, split)
    assert selection_check(total) == []
    giveback = "I want to return the headphones from order #W123, they arrived broken."
    read = _ctx(semantic, tools, {"name": "get_order_details", "args": {"order_id": "#W123"}, "id": "3"}, giveback)
    assert selection_check(read) == []
    # another act than the one asked for is still judged: paying someone when asked to return an item
    pay = _ctx(semantic, tools, {"name": "venmo__send_payment", "args": {"user": "sam", "amount": 32.2}, "id": "4"}, giveback)
    assert [f.evidence["better"] for f in selection_check(pay)] == ["return_delivered_order_items"]


def test_a_doubtful_step_of_a_plan_is_a_warning_a_confusion_or_a_delete_is_retried(semantic: Any) -> None:
    """A call after other calls of the same request, or one serving a request of several parts,
    may be a step the request does not describe (the doors locked before the engine starts): with
    nothing that says two tools were confused, the doubt is a warning and the call runs. A first
    call for a one-part request, a tool that deals in the better tool's thing, and a delete stay
    certain, and are retried."""
    tools = [tool("get_car_status", "Show the car's fuel, doors and tyre status.", ("part",), part=""),
             tool("lock_doors", "Lock or unlock the car's doors.", ("doors",), doors=""),
             tool("start_engine", "Start the car's engine.", ("mode",), mode=""),
             tool("get_weather_forecast", "The weather forecast for the coming days in a city.", ("city",), city=""),
             tool("get_weather_history", "The weather recorded in a city on past days.", ("city",), city=""),
             tool("delete_contact", "Delete a contact from the address book.", ("contact",), contact=""),
             tool("send_text", "Send a text message to a contact.", ("to", "text"), to="", text="")]
    guard = Guard(tools, semantic=semantic)

    def decide(call: dict[str, Any], messages: list[Any]) -> tuple[str, list[tuple[float, Any]]]:
        decision = guard.check(call, messages)
        picks = [f for f in decision.findings if f.category is Category.SUSPICIOUS_TOOL_SELECTION]
        return decision.action.value, [(f.confidence, f.evidence.get("reading")) for f in picks]

    start = ("user", "Start the car, I'm driving over to Anna's.")
    status = [start, {"role": "assistant", "content": "", "tool_calls": [{"name": "get_car_status", "args": {"part": "doors"}, "id": "1"}]},
              {"role": "tool", "content": '{"driver_door": "unlocked"}', "tool_call_id": "1"}]
    lock = {"name": "lock_doors", "args": {"doors": "driver"}, "id": "2"}
    assert decide(lock, status) == ("warn", [(0.6, "plan_step")])
    assert decide(lock, [start])[1] == [(1.0, "single_step")]  # the first call of a one-part request
    wipe = {"name": "delete_contact", "args": {"contact": "Anna"}, "id": "3"}
    assert decide(wipe, status) == ("retry", [(1.0, "deletes")])
    two_parts = ("user", "What will the weather be like in Oslo tomorrow? Then text Anna the forecast.")
    past = {"name": "get_weather_history", "args": {"city": "Oslo"}, "id": "4"}
    assert decide(past, [two_parts]) == ("retry", [(1.0, "confusable")])


def test_a_doubt_where_the_better_tool_fits_weakly_too_is_a_warning(embedder: Any) -> None:
    """When the tool preferred over the call's fits the request weakly itself (below
    ``selection_floor``), neither is clearly what was asked: the doubt is a warning. With the floor
    at 0 the same doubt is certain."""
    tools = [tool("get_car_status", "Show the car's fuel, doors and tyre status.", ("part",), part=""),
             tool("lock_doors", "Lock or unlock the car's doors.", ("doors",), doors=""),
             tool("start_engine", "Start the car's engine.", ("mode",), mode="")]
    call = {"name": "lock_doors", "args": {}, "id": "1"}
    asked = "Start the car, I'm driving over to Anna's."
    [weak] = selection_check(_ctx(SemanticGuard(embedder, selection_floor=0.9), tools, call, asked))
    assert (weak.confidence, weak.evidence["reading"]) == (0.6, "weak_lead")
    [certain] = selection_check(_ctx(SemanticGuard(embedder, selection_floor=0.0), tools, call, asked))
    assert (certain.confidence, certain.evidence["reading"]) == (1.0, "single_step")


def test_a_user_who_asks_for_the_act_is_not_told_to_find_the_thing_first(semantic: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the workshop was found and the assistant asked "shall I book it?", the user says
    "Yes, please book it": the tool that books is what was asked, even where the one that finds
    workshops fits the earlier request better. The scores are fixed here (the search fits the
    request by 0.2 more): what is tested is the reading of the user's words. Everyday negatives:
    a user who says not to book, a user who asks for something else, and an act on another thing
    than the better tool's ("add Hello to Spanish" is no agenda item) are still flagged."""
    import numpy as np

    from guard import semantic as sem

    tools = [tool("find_workshops", "Find craft workshops in a town.", ("town",), town=""),
             tool("book_workshop", "Book a place in a workshop.", ("workshop",), workshop=""),
             tool("translate_text", "Translate a text into another language.", ("text",), text=""),
             tool("add_agenda_item", "Add an item to the user's agenda.", ("item",), item="")]

    def rows(_: Any, plan: Any, registry: Any, vectors: Any) -> Any:  # the better tool leads by 0.2 everywhere
        lead = {"find_workshops": 0.7, "book_workshop": 0.5, "translate_text": 0.7, "add_agenda_item": 0.5}
        return np.array([[lead[n] for n in vectors.names] for _ in plan])

    monkeypatch.setattr(sem, "_blended_rows", rows)
    book = {"name": "book_workshop", "args": {"workshop": "Clay Studio"}, "id": "1"}
    first = "I'd like to join a pottery workshop in Bath this weekend."
    assert selection_check(_ctx(semantic, tools, book, first, "Yes, please book it for me.")) == []
    assert selection_check(_ctx(semantic, tools, book, first, "Booking that one is fine, go ahead.")) == []
    for later in ("Don't book it yet, are there others on Sunday?", "Which other workshops are there?"):
        assert [f.evidence["better"] for f in selection_check(_ctx(semantic, tools, book, first, later))] == ["find_workshops"]
    add = {"name": "add_agenda_item", "args": {"item": "Hello"}, "id": "2"}
    assert [f.evidence["better"] for f in selection_check(_ctx(semantic, tools[2:], add, 'Can you add "Hello" to Spanish?'))] == ["translate_text"]


def test_a_part_that_asks_for_an_act_of_the_calls_kind_is_served_by_it(semantic: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """"rename getUserData to fetchUserProfile everywhere": renaming is an edit, so edit_file serves
    the request even where read_file, which deals in files too, scores higher (fixed here: by 0.2).
    Everyday negatives: a request that only asks to see the code, one that says not to change it,
    and an act of another kind (a delete) are still flagged."""
    import numpy as np

    from guard import semantic as sem

    tools = [tool("read_file", "Reads a file.", ("path",), path=""),
             tool("edit_file", "Replaces old_string with new_string in a file.", ("path", "old_string", "new_string"), path="", old_string="", new_string=""),
             tool("delete_file", "Deletes a file.", ("path",), path="")]

    def rows(_: Any, plan: Any, registry: Any, vectors: Any) -> Any:
        lead = {"read_file": 0.7, "edit_file": 0.5, "delete_file": 0.5}
        return np.array([[lead[n] for n in vectors.names] for _ in plan])

    monkeypatch.setattr(sem, "_blended_rows", rows)
    edit = {"name": "edit_file", "args": {"path": "src/api/user.js", "old_string": "getUserData", "new_string": "fetchUserProfile"}, "id": "1"}
    assert selection_check(_ctx(semantic, tools, edit, "rename getUserData to fetchUserProfile everywhere")) == []
    assert selection_check(_ctx(semantic, tools, edit, "please replace the old endpoint URL in config.js")) == []
    for asked in ("show me what getUserData does in src/api/user.js", "don't rename anything, just tell me where getUserData is used"):
        assert [f.evidence["better"] for f in selection_check(_ctx(semantic, tools, edit, asked))] == ["read_file"]
    delete = {"name": "delete_file", "args": {"path": "src/api/user.js"}, "id": "2"}
    assert [f.evidence["better"] for f in selection_check(_ctx(semantic, tools, delete, "rename getUserData to fetchUserProfile everywhere"))] == ["read_file"]


def test_a_lookup_of_what_the_user_identified_starts_serving_them(semantic: Any) -> None:
    from guard.semantic import _keyed_by_what_was_named

    tools = [tool("get_user_details", "Get a user's profile: membership, payment methods, reservation ids.", ("user_id",), user_id=""),
             tool("get_reservation_details", "Get a reservation's details.", ("reservation_id",), reservation_id=""),
             tool("update_reservation_flights", "Replace the flights of a reservation.", ("reservation_id",), reservation_id=""),
             tool("get_flight_status", "Status of a flight on a date.", ("flight_number",), flight_number="")]
    asked = "Hello, I'm Omar, user id omar_haddad_88. I need to push my Chicago to Boston flight, reservation R7HD2L, from the 10th to the 12th."
    me = _ctx(semantic, tools, {"name": "get_user_details", "args": {"user_id": "omar_haddad_88"}, "id": "1"}, asked)
    assert selection_check(me) == []
    # Everyday negatives: a lookup of the thing the better tool acts on stays judged; an id
    # nobody wrote, a plain word, are no identified record
    flight = _ctx(semantic, tools, {"name": "get_flight_status", "args": {"flight_number": "R7HD2L"}, "id": "2"}, asked)
    assert [f.evidence["better"] for f in selection_check(flight)] == ["update_reservation_flights"]
    assert not _keyed_by_what_was_named(_ctx(semantic, tools, {"name": "get_user_details", "args": {"user_id": "omar_88"}, "id": "3"}, asked))
    assert not _keyed_by_what_was_named(_ctx(semantic, tools, {"name": "get_user_details", "args": {"user_id": "flight"}, "id": "4"}, asked))
    # a place or a date is no record the user identified; a name is, for a tool that looks up people
    travel = [tool("get_attraction_recommendations", "Attractions at a destination.", ("destination",), destination=""),
              tool("query_history", "History of a date.", ("date",), date=""),
              tool("search_contacts", "Search contacts by name.", ("query",), query="")]
    said = "Plan 14 days in Tokyo with Maya, starting 2023-11-15."
    assert not _keyed_by_what_was_named(_ctx(semantic, travel, {"name": "get_attraction_recommendations", "args": {"destination": "Tokyo"}, "id": "5"}, said))
    assert not _keyed_by_what_was_named(_ctx(semantic, travel, {"name": "query_history", "args": {"date": "2023-11-15"}, "id": "6"}, said))
    assert _keyed_by_what_was_named(_ctx(semantic, travel, {"name": "search_contacts", "args": {"query": "Maya"}, "id": "7"}, said))


def test_siblings_told_apart_only_by_words_nobody_said_are_no_wrong_choice(semantic: Any) -> None:
    from guard.semantic import _unnamed_sibling

    registry = ToolRegistry([
        tool("cylinder_volume", "Volume of a cylinder.", ("radius", "height"), radius="", height=""),
        tool("cone_volume", "Volume of a cone.", ("radius", "height"), radius="", height=""),
        tool("create_event", "Create an event.", ("title",), title=""),
        tool("update_event", "Update an event.", ("title",), title=""),
        tool("sphere_volume", "Volume of a sphere.", ("radius",), radius=""),
    ])
    cylinder, cone = registry.get("cylinder_volume"), registry.get("cone_volume")
    assert _unnamed_sibling(cylinder, cone, None, "A soda can is 12 cm tall and 6.6 cm across. What's its volume?")
    # Everyday negatives: the request names the shape, the tools differ by their verb, or by their parameters
    assert not _unnamed_sibling(cylinder, cone, None, "Volume of an ice-cream cone 12 cm tall, 3 cm radius?")
    assert not _unnamed_sibling(registry.get("create_event"), registry.get("update_event"), None, "lunch with Maya on Friday")
    assert not _unnamed_sibling(registry.get("sphere_volume"), cone, None, "a ball 12 cm across")
    # what tells them apart may be in their descriptions, or said as the start of a longer word
    guides = ToolRegistry([
        tool("clarity_guide_a", "Steps to clarify a problem.", ("problem",), problem=""),
        tool("clarity_guide_b", "Gather diverse perspectives on a problem.", ("problem",), problem=""),
        tool("Wiki", "Search a keyword on Wikipedia.", ("keyword",), keyword=""),
        tool("Dictionary", "Look a keyword up in the dictionary.", ("keyword",), keyword=""),
    ])
    assert not _unnamed_sibling(guides.get("clarity_guide_a"), guides.get("clarity_guide_b"), None, "can you gather some perspectives on it?")
    assert not _unnamed_sibling(guides.get("Dictionary"), guides.get("Wiki"), None, "search artificial intelligence on wikipedia")


def test_any_read_is_a_fair_first_step_of_looking_into_a_problem(semantic: Any) -> None:
    from guard.semantic import _INVESTIGATES

    tools = [tool("kubectl_get", "List Kubernetes resources (read-only).", ("resource",), resource=""),
             tool("kubectl_logs", "Read a pod's logs.", ("pod",), pod=""),
             tool("kubectl_delete", "Delete a resource.", ("resource",), resource="")]
    asked = "payment-worker pods keep restarting in the payments namespace, can you take a look?"
    assert selection_check(_ctx(semantic, tools, {"name": "kubectl_get", "args": {"resource": "pods"}, "id": "1"}, asked)) == []
    for text in ["Getting DiskPressure alerts on some nodes, can you check?", "checkout latency is up, what's going on?"]:
        assert _INVESTIGATES.search(text), text
    # Everyday negatives: a check of one named thing, a plain request, a look at something to buy
    for text in ["can you check my balance for me", "show me the logs of payment-worker", "check the weather in Oslo and book a table"]:
        assert not _INVESTIGATES.search(text), text
    for text in ["CI is failing in tests/test_discount.py. Can you find the cause and fix it?", "the export crashes, please debug it"]:
        assert _INVESTIGATES.search(text), text
    for text in ["find the cheapest flight to Oslo", "find the causeway toll for tomorrow", "what caused the fire of 1666?"]:
        assert not _INVESTIGATES.search(text), text


def test_a_lookup_by_the_identifier_the_step_before_returned_is_the_next_step(semantic: Any) -> None:
    from guard.semantic import _keyed_by_a_result

    tools = [tool("find_user_id_by_email", "Find a user id by their email.", ("email",), email=""),
             tool("find_user_id_by_name_zip", "Find a user id by first name, last name and zip code.", ("zip",), zip=""),
             tool("get_user_details", "Get the details of a user, including their orders.", ("user_id",), user_id="")]
    registry = ToolRegistry(tools)

    def ctx(call: dict[str, Any], messages: list[Any]) -> CheckContext:
        parsed = ToolCall.from_any(call)
        return CheckContext(call=parsed, args=parsed.args, spec=registry.get(parsed.name), registry=registry,
                            conversation=Conversation.from_messages(messages), state=GuardState(), policy=Policy(), semantic=semantic)

    found = [{"role": "user", "content": "Sure, Yusuf Rossi, zip code 19122. I don't remember which email I used."},
             {"role": "assistant", "content": "", "tool_calls": [{"name": "find_user_id_by_name_zip", "args": {"zip": "19122"}, "id": "c1"}]},
             {"role": "tool", "tool_call_id": "c1", "name": "find_user_id_by_name_zip", "content": "yusuf_rossi_9620"}]
    me = ctx({"name": "get_user_details", "args": {"user_id": "yusuf_rossi_9620"}, "id": "c2"}, found)
    assert _keyed_by_a_result(me) and selection_check(me) == []
    # Everyday negatives: an id no tool returned this turn, one the user typed (the other rule's), a word
    assert not _keyed_by_a_result(ctx({"name": "get_user_details", "args": {"user_id": "yusuf_rossi_9621"}, "id": "c2"}, found))
    assert not _keyed_by_a_result(ctx({"name": "get_user_details", "args": {"user_id": "yusuf_rossi_9620"}, "id": "c2"},
                                      [{"role": "user", "content": "my id is yusuf_rossi_9620"}]))
    assert not _keyed_by_a_result(ctx({"name": "get_user_details", "args": {"user_id": "Yusuf"}, "id": "c2"}, found))


def test_a_request_in_a_language_the_model_does_not_read_is_not_ranked(semantic: Any) -> None:
    call = {"name": "translate_text", "args": {"text": "Oslo"}, "id": "1"}
    assert selection_check(_ctx(semantic, TOOLS, call, "Hur blir vädret i Oslo i dag, tror du att det regnar?")) == []
    # everyday negatives: the same request in English, English with a foreign place name, English after a greeting in Spanish
    assert selection_check(_ctx(semantic, TOOLS, call, "What's the weather like in Oslo today?")) != []
    assert selection_check(_ctx(semantic, TOOLS, call, "What's the weather like in Säo Paulo today?")) != []
    assert selection_check(_ctx(semantic, TOOLS, call, "hola! What's the weather like in Oslo today, will it rain?")) != []


def test_a_question_is_served_by_a_read_however_well_an_act_matches_its_words(semantic: Any) -> None:
    tools = [
        {"name": "list_events", "description": "List events in a time window", "parameters": {"type": "object", "properties": {"time_min": {"type": "string"}}}},
        {"name": "create_event", "description": "Create a calendar event for the afternoon or any time", "parameters": {"type": "object", "properties": {"title": {"type": "string"}}}},
    ]
    call = {"name": "list_events", "args": {"time_min": "2025-06-11T12:00:00"}, "id": "1"}
    assert selection_check(_ctx(semantic, tools, call, "what's on my calendar tomorrow afternoon?")) == []
    # everyday negatives: the same read when the user asks to add, to book, to put it on the calendar
    wrong = _ctx(semantic, tools, call, "create a calendar event for tomorrow afternoon: dentist")
    assert selection_check(wrong) != []


def test_a_tool_named_noun_first_reads_by_its_plain_verb() -> None:
    from guard.semantic import _acts, _lookup

    for name in ("gh_issue_view", "file_read", "order_status_get"):
        assert _lookup(ToolSpec(name=name)) and not _acts(ToolSpec(name=name))
    # everyday negatives: a noun-like verb with no plain verb after it, a plain verb first, a send of a file
    assert _acts(ToolSpec(name="post_comment")) and not _lookup(ToolSpec(name="post_comment"))
    assert _acts(ToolSpec(name="update_order_status"))
    assert _acts(ToolSpec(name="send_file"))


def test_the_requests_own_verb_settles_a_choice_between_two_acts_on_one_thing(semantic: Any) -> None:
    """Embeddings tell verbs apart poorly: where the latest request's verb asks for what the
    called tool does and not what the better-ranked one does, the words decide."""
    tools = [
        tool("create_budget", "Create a budget for a spending category.", ("category", "limit_amount"), category="", limit_amount=""),
        tool("list_budgets", "List the user's budgets and how much of each is left.", ()),
        tool("create_reminder", "Create a reminder.", ("text",), text="What to remind"),
        tool("list_reminders", "List the user's reminders.", ()),
    ]
    for name, asked in (("create_budget", "set me up a grocery budget, four hundred a month"),
                        ("create_reminder", "cool thanks. oh btw remind me to call mum at 7 tonight")):
        assert selection_check(_ctx(semantic, tools, {"name": name, "args": {}, "id": "1"}, asked)) == []
    # everyday negatives: a request that asks to read, judged as before (the better tool reads); the
    # verb asks for neither tool's act; a question about the reminders
    flagged = selection_check(_ctx(semantic, tools, {"name": "create_budget", "args": {}, "id": "2"}, "show me my budgets and what's left in each"))
    assert [f.evidence["better"] for f in flagged] == ["list_budgets"]
    for asked in ("how much is left in my budgets this month?", "which reminders do I still have open today?"):
        called = "create_budget" if "budget" in asked else "create_reminder"
        assert selection_check(_ctx(semantic, tools, {"name": called, "args": {}, "id": "3"}, asked)) != []
