"""Action mismatch: a tool that changes data in another way than the user asked, with a sibling that does."""

from __future__ import annotations

from typing import Any

from guard import Guard
from guard.taxonomy import Category


def tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": "Manage the restaurant menu.",
        "parameters": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]},
    }


MENU = [tool("addMenuItem"), tool("updateMenuItem"), tool("deleteMenuItem"), tool("getMenuItem")]


def categories(call: str, request: str, tools: list[dict[str, Any]] = MENU) -> list[Any]:
    decision = Guard(tools).check({"name": call, "args": {"item": "Pad Thai"}}, [("user", request)])
    return [f for f in decision.findings if f.category is Category.SUSPICIOUS_TOOL_SELECTION]


def test_updating_when_asked_to_add_is_flagged_with_the_sibling_that_adds():
    (finding,) = categories("updateMenuItem", "Please add Pad Thai to the menu")
    assert finding.rule == "action_mismatch"
    assert finding.evidence == {"better": "addMenuItem", "asked": "create", "tool_does": "update"}


def test_deleting_when_asked_what_is_on_the_menu_is_flagged():
    (finding,) = categories("deleteMenuItem", "What is Pad Thai made of on the menu?")
    assert finding.evidence["better"] == "getMenuItem"


def test_the_asked_action_a_mixed_request_or_a_read_raises_nothing():
    assert categories("addMenuItem", "Please add Pad Thai to the menu") == []
    assert categories("updateMenuItem", "Add Pad Thai, or update it if it is there") == []
    assert categories("getMenuItem", "Delete Pad Thai from the menu") == []  # a read before the delete


def test_no_sibling_for_the_asked_action_no_finding():
    assert categories("updateMenuItem", "Please add Pad Thai to the menu", [tool("updateMenuItem"), tool("getMenuItem")]) == []
    unrelated = [tool("updateMenuItem"), tool("addCustomerReview")]  # another object
    assert categories("updateMenuItem", "Please add Pad Thai to the menu", unrelated) == []


STRIPE = [tool("stripe_create_refund"), tool("stripe_update_refund"), tool("stripe_update_customer"), tool("stripe_list_charges")]


def test_a_services_prefix_names_no_object():
    # "stripe" is every tool's prefix: updating a customer is no wrong way to refund
    assert categories("stripe_update_customer", "Please refund the latest charge", STRIPE) == []
    (finding,) = categories("stripe_update_refund", "Please create a refund for the latest charge", STRIPE)
    assert finding.evidence["better"] == "stripe_create_refund"


def test_a_confirmation_approves_the_proposed_step():
    for reply in ["yes go ahead", "Ok, do it.", "sure, thanks!", "yep"]:
        assert categories("updateMenuItem", reply) == [], reply
    assert categories("updateMenuItem", "yes, add Pad Thai to the menu")  # a confirmation that asks for another action


def test_verb_like_nouns_and_make_it_do_not_ask_for_an_action():
    # "her customer record" is a record, not "record this"; "make it spicy" changes the item
    assert categories("updateMenuItem", "put a note on her customer record that Pad Thai is spicy") == []
    assert categories("updateMenuItem", "actually make the Pad Thai extra spicy") == []
    assert categories("updateMenuItem", "make a new Pad Thai item")  # "make a new ..." still creates
    assert categories("updateMenuItem", "please record a new Pad Thai dish")  # "record" as a verb still creates


def test_everyday_update_verbs_and_participles():
    # "push it to monday" and "escalate it" change the item; "showing" describes, it asks nothing
    assert categories("updateMenuItem", "push the Pad Thai special to next monday") == []
    assert categories("updateMenuItem", "the menu showing Pad Thai is wrong, escalate it") == []
    (finding,) = categories("addMenuItem", "push the Pad Thai special to next monday")  # adding is no way to move it
    assert finding.evidence["better"] == "updateMenuItem"


def test_acknowledging_or_resolving_is_an_update():
    assert categories("updateMenuItem", "if the Pad Thai alert fired, ack it") == []
    assert categories("updateMenuItem", "resolve the Pad Thai item issue") == []


EC2 = [tool("aws_ec2_describe_instances"), tool("aws_ec2_create_snapshot"), tool("aws_ec2_stop_instances")]


def test_a_request_that_also_stops_sends_or_snapshots_asks_for_more_than_a_read():
    # the verbs come from guard.lexicon.TOOL_VERBS, the one table the selection check reads too
    assert categories("aws_ec2_create_snapshot", "find the instance tagged legacy, snapshot its root volume, then stop it", EC2) == []
    assert categories("stripe_create_refund", "look up the charge and send the customer a note", STRIPE) == []
    # a request that only reads still flags the tool that creates, beside the sibling that reads
    (finding,) = categories("aws_ec2_create_snapshot", "describe the instances tagged legacy", EC2)
    assert finding.evidence["better"] == "aws_ec2_describe_instances"


COURTS = [tool("book_court"), tool("check_court_availability"), tool("cancel_court")]


def test_can_i_get_asks_to_have_it_as_often_as_to_see_it():
    assert categories("book_court", "can i get court 2 tomorrow 9am for an hour? tennis", COURTS) == []
    assert categories("addMenuItem", "could we get Pad Thai on the menu?") == []
    # Everyday negatives: a plain read, "get me" a list, a question still ask to read.
    assert categories("book_court", "show me which courts are free tomorrow", COURTS)
    assert categories("book_court", "get the free courts for tomorrow", COURTS)
    assert categories("deleteMenuItem", "what is Pad Thai made of? can i get the recipe")


STRINGS = [tool("keys_list"), tool("translations_bulk_update"), tool("translations_delete")]


def test_a_verb_as_often_a_noun_asks_for_an_action_where_a_clause_starts():
    asked = "what strings in the web project are missing french? machine translate them and upload as unreviewed"
    assert categories("translations_bulk_update", asked, STRINGS) == []
    assert categories("addMenuItem", "Pad Thai is sold out, please order more and add it back") == []
    # Everyday negatives: the same words as nouns still leave a question that reads.
    assert categories("deleteMenuItem", "what is in the order for Pad Thai?")
    assert categories("deleteMenuItem", "what did the upload of the Pad Thai photo show?")
    assert categories("updateMenuItem", "which dishes are on the menu? show the upload log")


CALENDAR = [tool("listEvents"), tool("createEvent"), tool("deleteEvent")]


def test_put_it_on_the_calendar_and_block_time_ask_to_add():
    assert categories("createEvent", "sunday. put it on the calendar too", CALENDAR) == []
    assert categories("createEvent", "whats due this week? and block 2 hrs of study time for each one, 7 to 9", CALENDAR) == []
    # Everyday negatives: "a block" and "the put option" are nouns; a plain question still reads.
    assert categories("createEvent", "what is in the block of time on friday?", CALENDAR)
    assert categories("createEvent", "what's the put option price on my calendar?", CALENDAR)
    assert categories("createEvent", "what do I have on sunday?", CALENDAR)


PAYMENTS = [tool("stripe_list_charges"), tool("stripe_create_refund"), tool("stripe_retrieve_customer"), tool("send_customer_email")]
TRACKER = [tool("jira_create_issue"), tool("jira_search_issues"), tool("jira_transition_issue")]


def test_an_answer_that_names_the_act_after_yes_asks_for_it():
    """"yep refund the second one" answers "Want me to refund it?": the refund is asked for, not
    the read the first message asked ("charged twice, can you check?")."""
    checked = [("user", "She got charged twice for April. Can you check?"), ("assistant", "Two charges; refund the second?")]

    def picked(call: str, reply: str) -> list[Any]:
        decision = Guard(PAYMENTS).check({"name": call, "args": {"item": "ch_2"}}, [*checked, ("user", reply)])
        return [f for f in decision.findings if f.category is Category.SUSPICIOUS_TOOL_SELECTION]

    assert picked("stripe_create_refund", "yep refund the second one") == []
    assert picked("stripe_create_refund", "ok, refund it please") == []
    # Everyday negatives: after "yes", the same words as nouns still leave a question that reads.
    assert categories("deleteMenuItem", "yes the order came, what is in it?")
    assert categories("updateMenuItem", "yeah the upload worked, which dishes are on the menu?")
    assert categories("deleteMenuItem", "ok so the return window, how long is it for Pad Thai?")


def test_filing_a_new_one_creates_it():
    assert categories("jira_create_issue", "file a bug: checkout does nothing on safari, high priority", TRACKER) == []
    assert categories("jira_create_issue", "please file a new ticket for the broken login page", TRACKER) == []
    # Everyday negatives: filing what exists acts on it, and a question still reads.
    assert categories("jira_create_issue", "file the login ticket under done", TRACKER)
    assert categories("jira_create_issue", "what is the status of the login ticket?", TRACKER)


def test_opening_a_new_one_creates_it_and_a_bug_report_is_no_question():
    assert categories("jira_create_issue", "can you open a ticket for the broken login page", TRACKER) == []
    history = [("user", "open an issue on octo-org/widgets"), ("assistant", "Sure, what should the title be?"),
               ("user", "title 'Crash on export', body: the app crashes when exporting an empty table. label it bug")]
    decision = Guard(TRACKER).check({"name": "jira_create_issue", "args": {"item": "Crash on export"}}, history)
    assert [f for f in decision.findings if f.category is Category.SUSPICIOUS_TOOL_SELECTION] == []
    # Everyday negatives: opening what exists reads it; questions still read
    assert categories("jira_create_issue", "open the login ticket and tell me who owns it", TRACKER)
    assert categories("jira_create_issue", "when was the login ticket closed?", TRACKER)
    assert categories("jira_create_issue", "and how many tickets are open", TRACKER)


def test_set_up_arranges_a_new_one_and_yes_with_a_detail_approves():
    assert categories("updateMenuItem", "set up Pad Thai as a new dish on the menu")  # "set up": create, not update
    assert categories("addMenuItem", "set up Pad Thai as a new dish on the menu") == []
    def asked(call: str, proposal: str, reply: str) -> list[Any]:
        history = [("user", "Please add Pad Thai to the menu"), ("assistant", proposal), ("user", reply)]
        decision = Guard(MENU).check({"name": call, "args": {"item": "Pad Thai"}}, history)
        return [f for f in decision.findings if f.category is Category.SUSPICIOUS_TOOL_SELECTION]

    proposal = "Pad Thai is already there at $12; I'd change it to $14. Do you confirm (yes/no)?"
    for reply in ["Yes, charge it to the gift card.", "ok - the spicy one", "Sure, at $14."]:
        assert asked("updateMenuItem", proposal, reply) == [], reply
    # Everyday negatives: "set" alone changes; a yes that asks for another act, or that answers a
    # question for details rather than a proposal, is no approval
    assert categories("addMenuItem", "set Pad Thai to spicy")
    assert asked("updateMenuItem", proposal, "yes, and delete the old curry from the menu")
    assert asked("updateMenuItem", "What price should it have?", "Sure, make it $14 as a new item")
    assert asked("updateMenuItem", "Which section of the menu?", "Sure, the noodles section.")


def test_fixing_asks_for_a_change():
    assert categories("updateMenuItem", "the Pad Thai price is wrong, can you find the cause and fix it?") == []
    (finding,) = categories("addMenuItem", "the Pad Thai price is wrong, can you fix it?")  # adding is no fix
    assert finding.evidence["better"] == "updateMenuItem"
    # Everyday negatives: a fixed price, a fixture, a question about a fix still read
    assert categories("updateMenuItem", "which dishes have a fixed price?")
    assert categories("deleteMenuItem", "what is in the fixture list for the menu?")


def test_the_sibling_that_already_ran_since_the_user_asked_has_done_its_part():
    lost = [tool("block_card"), tool("order_replacement_card"), tool("get_card")]
    messages = [("user", "Yes, both were me. Please block it and send the new card with standard shipping."),
                {"role": "assistant", "content": "", "tool_calls": [{"name": "block_card", "args": {"item": "x"}, "id": "c4"}]},
                {"role": "tool", "tool_call_id": "c4", "name": "block_card", "content": '{"status": "blocked"}'}]
    decision = Guard(lost).check({"name": "order_replacement_card", "args": {"item": "x"}, "id": "c5"}, messages)
    assert [f for f in decision.findings if f.category is Category.SUSPICIOUS_TOOL_SELECTION] == []
    # Everyday negative: before the block ran, replacing instead of blocking is still flagged
    (finding,) = [f for f in Guard(lost).check({"name": "order_replacement_card", "args": {"item": "x"}}, messages[:1]).findings
                  if f.category is Category.SUSPICIOUS_TOOL_SELECTION]
    assert finding.evidence["better"] == "block_card"
    # nor when the sibling ran before the user spoke again, or another tool ran since
    earlier = [*messages[1:], ("user", "Please block it and send the new card with standard shipping.")]
    assert [f for f in Guard(lost).check({"name": "order_replacement_card", "args": {"item": "x"}}, earlier).findings
            if f.category is Category.SUSPICIOUS_TOOL_SELECTION]
    other = [messages[0], {"role": "assistant", "content": "", "tool_calls": [{"name": "get_card", "args": {"item": "x"}, "id": "c4"}]},
             {"role": "tool", "tool_call_id": "c4", "name": "get_card", "content": '{"status": "active"}'}]
    assert [f for f in Guard(lost).check({"name": "order_replacement_card", "args": {"item": "x"}, "id": "c5"}, other).findings
            if f.category is Category.SUSPICIOUS_TOOL_SELECTION]


def test_make_it_changes_what_is_there():
    history = [("user", "book Pad Thai for the lunch menu"), ("assistant", "Added Pad Thai."), ("user", "Oh wait, can you make it 5 portions?")]
    decision = Guard(MENU).check({"name": "updateMenuItem", "args": {"item": "Pad Thai"}}, history)
    assert [f for f in decision.findings if f.category is Category.SUSPICIOUS_TOOL_SELECTION] == []
    (finding,) = categories("addMenuItem", "make it spicy please")  # adding is no change to it
    assert finding.evidence["better"] == "updateMenuItem"
    # Everyday negatives: making a new one creates; making it to a place asks for no change
    assert categories("addMenuItem", "make a new dish called Pad Thai") == []
    assert categories("updateMenuItem", "can you make it to the menu tasting at 5?") == []


def test_something_put_into_a_new_one_creates_and_checking_in_reads_nothing():
    assert categories("addMenuItem", "pull the specials from the sheet into a new menu item and tell the chef") == []
    assert categories("addMenuItem", "we arrive late, we'll check in around 11pm, put Pad Thai on it") == []
    # everyday negatives: a new thing only talked about, checking something, checking out an order
    assert categories("deleteMenuItem", "what is on the new menu?") != []
    assert categories("addMenuItem", "check the Pad Thai on the menu") != []
    assert categories("deleteMenuItem", "check what Pad Thai costs on the menu") != []


def test_a_verb_as_often_a_noun_before_a_plain_verb_is_the_object():
    from guard.checks.action import kind_of_tool
    from guard.registry import ToolSpec

    for name, kind in [("post_search", "read"), ("order_status_get", "read"), ("gh_issue_view", "read")]:
        assert kind_of_tool(ToolSpec(name=name)) == kind
    # everyday negatives: the noun-like verb is the verb when no plain verb follows, or comes after one
    assert kind_of_tool(ToolSpec(name="post_comment")) == "create"
    assert kind_of_tool(ToolSpec(name="book_flight")) == "create"
    assert kind_of_tool(ToolSpec(name="get_order")) == "read"
    assert kind_of_tool(ToolSpec(name="book_reservation")) == "create"  # a noun made from a verb is no verb


REMINDERS = [tool("create_reminder"), tool("list_reminders")]


def test_an_earlier_topics_question_asks_no_read_of_a_later_request():
    def asked(*said: str, call: str = "create_reminder") -> list[Any]:
        messages = [("user", text) for text in said]
        decision = Guard(REMINDERS).check({"name": call, "args": {"item": "call mum"}}, messages)
        return [f for f in decision.findings if f.category is Category.SUSPICIOUS_TOOL_SELECTION]

    # "remind me" is no verb the check reads: it looks back, where only a question asked anything
    assert asked("how long should I rest a steak?", "cool thanks. oh btw remind me to call mum at 7") == []
    # everyday negatives, each asked in the latest request: a question, still a read of the reminders
    assert asked("thanks!", "what reminders do I have tonight?")
    assert asked("hi", "which reminders are still open?")
    assert asked("how do I set one?", "show my reminders")


def test_an_answer_to_the_assistants_question_goes_on_with_the_question_before_it():
    messages = [("user", "Can you tell me what Pad Thai is made of?"), ("assistant", "Sure, which menu is it on?"), ("user", "the lunch menu")]
    decision = Guard(MENU).check({"name": "deleteMenuItem", "args": {"item": "Pad Thai"}}, messages)
    assert [f.evidence["better"] for f in decision.findings if f.category is Category.SUSPICIOUS_TOOL_SELECTION] == ["getMenuItem"]


def test_invoicing_someone_is_an_act_where_a_clause_starts():
    from guard.checks.action import asked_kinds

    assert asked_kinds("process the receipts, and invoice Brightwater for march. also curious where receivables are at") == {"act"}
    # everyday negatives: the invoice as a thing, read or made
    assert asked_kinds("where is the invoice from march?") == {"read"}
    assert asked_kinds("create an invoice for Brightwater") == {"create"}
    assert asked_kinds("the invoice is wrong, can you delete it") == {"delete"}


def test_remind_me_to_and_set_me_up_make_something_new():
    from guard.checks.action import asked_kinds

    assert asked_kinds("cool thanks. oh btw remind me to call mum at 7 tonight") == {"create"}
    assert asked_kinds("set me up a grocery budget, four hundred a month") == {"create"}
    # everyday negatives: a reminder of a fact asks to read nothing made; setting a value changes it; "remind" alone
    assert asked_kinds("remind me what my wifi password is") != {"create"}
    assert asked_kinds("set the thermostat to 21") == {"update"}
    assert asked_kinds("remind me") == set()
