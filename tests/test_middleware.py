"""GuardMiddleware inside LangChain's create_agent."""

from __future__ import annotations

from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from guard.middleware import GuardMiddleware
from tests.support import FAST, ai_call, record, scripted, tool_messages


class BindableScript:
    """create_agent binds tools to the model; the scripted model ignores them."""

    def __new__(cls, script):
        model = scripted(script)
        object.__setattr__(model, "bind_tools", lambda tools, **kw: model)
        return model


def agent(tools, script, policy=None):
    return create_agent(
        BindableScript(script), tools, middleware=[GuardMiddleware({**FAST, **(policy or {})})], checkpointer=InMemorySaver()
    )


def test_middleware_repairs_and_runs(travel_tools, calls):
    a = agent(travel_tools, [ai_call("search_flights", {"from_city": "Berlin", "to_city": "Paris", "passengers": "2"})])
    result = a.invoke({"messages": [("user", "Berlin to Paris for 2")]}, {"configurable": {"thread_id": "m1"}})
    assert calls.log == [("search_flights", {"from_city": "Berlin", "to_city": "Paris", "passengers": 2})]
    assert record(tool_messages(result)[0])["action"] == "repair"


def test_middleware_sends_unknown_tools_back_with_the_tool_list(travel_tools, calls):
    a = agent(travel_tools, [ai_call("weather", {"city": "Paris"}, "c1"), ai_call("get_weather", {"city": "Paris"}, "c2")])
    result = a.invoke({"messages": [("user", "Weather in Paris")]}, {"configurable": {"thread_id": "m2"}})
    first, second = tool_messages(result)
    assert first.status == "error" and "get_weather" in first.content
    assert calls.names() == ["get_weather"] and "guard" not in second.response_metadata  # a clean allow: no record


def test_middleware_asks_the_human_and_resumes(travel_tools, calls):
    a = agent(travel_tools, [ai_call("get_weather", {"city": "Oslo"})])
    config = {"configurable": {"thread_id": "m3"}}
    result = a.invoke({"messages": [("user", "What's the weather where I'm going?")]}, config)
    assert result["__interrupt__"][0].value["requests"][0]["missing"] == ["city"]
    a.invoke(Command(resume={"c1": {"action": "answer", "values": {"city": "Bergen"}}}), config)
    assert calls.log == [("get_weather", {"city": "Bergen"})]


def test_the_middleware_warms_its_guard_before_each_model_turn_and_passes_the_turn_on(travel_tools, calls):
    """``wrap_model_call``: once the guard is built (at the first tool call) and has embedding
    checks, each model turn starts its warm-up (``Guard.warm``); the model's answer goes on as it came."""
    from guard import Guard

    seen: list[int] = []

    class Watching(Guard):
        def warm(self, messages):
            seen.append(len(messages))
            return None

    guard = Watching(travel_tools, FAST)
    guard.semantic = object()  # stands for the embedding checks: only whether there are any is read
    a = create_agent(BindableScript([ai_call("get_weather", {"city": "Paris"}), ai_call("get_weather", {"city": "Rome"}, "c2")]),
                     travel_tools, middleware=[GuardMiddleware(guard=guard)], checkpointer=InMemorySaver())
    result = a.invoke({"messages": [("user", "Weather in Paris, then in Rome")]}, {"configurable": {"thread_id": "w1"}})
    assert calls.log == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]
    assert seen == [1, 3, 5]  # every model turn, with the messages so far
    assert result["messages"][-1].content == "done"
