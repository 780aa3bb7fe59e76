"""The model factory and Caller: specs, keys, the real ChatOpenAI client against a local
OpenAI-compatible stub (tool calls; 429 with Retry-After, 500, 503, timeouts and dropped
connections retried by the OpenAI client and counted), and usage accounting."""

from __future__ import annotations

import asyncio
import time

import pytest
from langchain_core.messages import HumanMessage

from nodes.runtime import llm
from nodes.runtime.scripted import ScriptError
from nodes.runtime.usage import add_usage, cost, dollars, usage_of_call
from tests.support.openai_stub import OpenAIStub, Reply

TOOL = {
    "type": "function",
    "function": {
        "name": "Search",
        "description": "search",
        "parameters": {"type": "object", "properties": {"keywords": {"type": "string"}}, "required": ["keywords"]},
    },
}


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:", ":gpt", ""])
def test_malformed_specs_are_refused(spec):
    with pytest.raises(llm.ModelConfigError, match="malformed model spec"):
        llm.build_model(spec, None, 64)


def test_missing_key_is_one_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(llm.ModelConfigError, match="OPENAI_API_KEY.*introspect demo"):
        llm.build_model("openai:gpt-4o-mini", None, 64)


def test_unknown_provider_is_a_config_error():
    with pytest.raises(llm.ModelConfigError, match="unknown model provider 'nosuchprovider'") as info:
        llm.build_model("nosuchprovider:model-x", None, 64)
    assert "\n" not in str(info.value)


def test_missing_script_file_is_reported(tmp_path):
    with pytest.raises(ScriptError, match="not found"):
        llm.build_model(f"scripted:{tmp_path / 'nope.jsonl'}", None, 64)


@pytest.fixture
def stub(monkeypatch):
    with OpenAIStub() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-123")
        yield server


def make_caller(spec="openai:gpt-4o-mini", calls_before=0, retries=4):
    return llm.Caller(spec, temperature=0.0, max_tokens=64, calls_before=calls_before, timeout=1.0, retries=retries)


async def test_the_model_is_built_off_the_event_loop(monkeypatch, write_script):
    """A first build imports the client library (10 s was seen on a loaded machine): built on the
    loop, it stopped every other run there, and a server's heartbeats, which let another worker
    take the runs up while they still ran. Here a build that takes a second lets the loop go on."""
    build = llm.build_model

    def slow_build(*args, **kwargs):
        time.sleep(1.0)  # as a heavy import would
        return build(*args, **kwargs)

    monkeypatch.setattr(llm, "build_model", slow_build)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    caller = make_caller(write_script([{"content": "done"}]))
    assert (await caller([HumanMessage("go")])).content == "done"
    ticker.cancel()
    assert ticks >= 5, ticks  # none while the build held the loop; about 100 when it does not


@pytest.fixture
def notices():
    """The live retry notices of the calls in a test."""
    heard: list[str] = []
    token = llm.RETRY_NOTICE.set(heard.append)
    yield heard
    llm.RETRY_NOTICE.reset(token)


FAST = {"retry-after-ms": "10"}  # the server asks for a 10 ms pause: the client honours it


async def test_chatopenai_tool_call_through_the_stub(stub):
    stub.replies.append(Reply(content="", tool_calls=[{"name": "Search", "args": {"keywords": "red shoes"}}]))
    caller = make_caller()
    message = await caller([HumanMessage("find red shoes")], tools=[TOOL], tool_choice="any")
    assert message.tool_calls[0]["name"] == "Search"
    assert message.tool_calls[0]["args"] == {"keywords": "red shoes"}
    sent = stub.requests[0]
    assert sent["model"] == "gpt-4o-mini"
    assert [t["function"]["name"] for t in sent["tools"]] == ["Search"]
    assert sent["tool_choice"] == "required"
    assert stub.headers[0]["authorization"] == "Bearer sk-test-secret-123"


@pytest.mark.parametrize(
    "failure,reason",
    [
        (Reply(status=429, headers=FAST), "429"),
        (Reply(status=500, headers=FAST), "500"),
        (Reply(status=503, headers=FAST), "503"),
        (Reply(delay=1.5), "a timeout or dropped connection"),
        (Reply(drop=True), "a timeout or dropped connection"),
    ],
)
async def test_transient_failures_are_retried_by_the_client_and_counted(stub, notices, failure, reason):
    stub.replies.extend([failure, Reply(content="ok after retry")])
    caller = make_caller()
    message = await caller([HumanMessage("hi")])
    assert message.content == "ok after retry"
    assert len(stub.requests) == 2
    assert [h["x-stainless-retry-count"] for h in stub.headers] == ["0", "1"]  # the client's own retry
    assert caller.usage["model_calls"] == 1  # the failed attempt is not a model call
    assert caller.usage["retries"] == 1
    assert notices == [f"retrying after {reason}, attempt 2/5"]


async def test_retry_after_is_honoured(stub, notices):
    stub.replies.extend([Reply(status=429, headers={"retry-after": "1"}), Reply(content="ok")])
    started = time.monotonic()
    await make_caller()([HumanMessage("hi")])
    assert time.monotonic() - started >= 1.0
    assert notices == ["retrying after 429, attempt 2/5"]


async def test_non_transient_error_is_not_retried(stub, notices):
    stub.replies.extend([Reply(status=400), Reply(content="never reached")])
    with pytest.raises(llm.ModelCallError, match="400") as info:
        await make_caller()([HumanMessage("hi")])
    assert len(stub.requests) == 1 and info.value.usage["retries"] == 0 and notices == []


async def test_a_judge_that_cannot_answer_fails_naming_itself(stub, notices, monkeypatch):
    """An env's judge (WebArena's gpt-4-1106-preview) that fails says it was the judge, and gives
    no verdict: the run's own model is never asked instead."""
    stub.replies.extend([Reply(status=429, headers=FAST)] * 3)
    judge = make_caller(retries=2).judge("openai:gpt-4-1106-preview")
    with pytest.raises(llm.ModelCallError, match=r"^the judge openai:gpt-4-1106-preview .*after 3 attempts") as info:
        await judge("Is it correct?", system="You are a helpful assistant")
    assert {r["model"] for r in stub.requests} == {"gpt-4-1106-preview"} and info.value.usage["retries"] == 2
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    llm.clear_models()
    with pytest.raises(llm.ModelConfigError, match=r"^the judge openai:gpt-4-1106-preview .*no OpenAI key"):
        await judge("Is it correct?")
    assert judge.calls == 0 and len(stub.requests) == 3


async def test_retries_give_up_after_the_configured_number(stub, notices):
    stub.replies.extend([Reply(status=429, headers=FAST)] * 4)
    with pytest.raises(llm.ModelCallError, match="after 3 attempts: .*RateLimit") as info:
        await make_caller(retries=2)([HumanMessage("hi")])
    assert len(stub.requests) == 3 and info.value.usage["retries"] == 2
    assert notices == ["retrying after 429, attempt 2/3", "retrying after 429, attempt 3/3"]


async def test_usage_and_cost_are_accounted(stub):
    stub.replies.extend(
        [
            Reply(content="a", prompt_tokens=1000, completion_tokens=500),
            Reply(content="b", prompt_tokens=2000, completion_tokens=100),
        ]
    )
    caller = make_caller(calls_before=5)
    await caller([HumanMessage("one")])
    await caller([HumanMessage("two")])
    expected = (3000 * 0.15 + 600 * 0.60) / 1_000_000  # gpt-4o-mini's list price per million tokens
    assert caller.usage["model_calls"] == 2
    assert caller.usage["input_tokens"] == 3000 and caller.usage["output_tokens"] == 600
    assert caller.usage["cost_usd"] == pytest.approx(expected)
    assert caller.position == 7


async def test_scripted_position_comes_from_state(write_script):
    spec = write_script([{"content": "first"}, {"content": "second"}, {"content": "third"}])
    caller = make_caller(spec, calls_before=1)
    assert (await caller([HumanMessage("x")])).content == "second"
    assert (await caller([HumanMessage("y")])).content == "third"
    with pytest.raises(llm.ModelCallError, match="3 replies"):
        await caller([HumanMessage("z")])


async def test_scripted_model_records_offered_tools(write_script):
    spec = write_script([{"content": "", "tool_calls": [{"name": "Search", "args": {"keywords": "k"}}]}])
    caller = make_caller(spec)
    message = await caller([HumanMessage("go")], tools=[TOOL])
    assert message.tool_calls[0]["args"] == {"keywords": "k"}
    assert (await caller.model()).calls[0]["tools"] == ["Search"]


async def test_a_call_stops_and_is_limited_on_its_own(stub, write_script):
    # the stub, like some servers, ignores stop sequences: the Caller cuts the reply itself
    stub.replies.extend([Reply(content="go to desk 1\nthen open it"), Reply(content="whole\nreply")])
    caller = make_caller()
    assert (await caller([HumanMessage("act")], stop=["\n"], max_tokens=20)).content == "go to desk 1"
    assert (await caller([HumanMessage("reflect")])).content == "whole\nreply"
    assert [(r.get("stop"), r["max_completion_tokens"]) for r in stub.requests] == [(["\n"], 20), (None, 64)]
    # a compatible server (OPENAI_BASE_URL) also gets max_tokens, which llama-cpp-python's reads instead
    assert [r["max_tokens"] for r in stub.requests] == [20, 64]
    spec = write_script([{"content": "take mug 1\nand more"}])
    scripted = make_caller(spec)
    assert (await scripted([HumanMessage("act")], stop=["\n"], max_tokens=20)).content == "take mug 1"
    call = (await scripted.model()).calls[0]  # one scripted model records every limit
    assert (call["stop"], call["max_tokens"]) == (["\n"], 20)


def test_a_model_without_a_known_price_is_unpriced_never_free():
    assert cost("openai:gpt-4o", 1_000_000, 0) == 2.5  # genai-prices' list price
    assert cost("anthropic:claude-3-5-haiku-latest", 1_000_000, 0) > 0
    for spec in ("openai:Qwen2.5-7B-Instruct", "ollama:llama3", "scripted:replies.jsonl", "nonsense:x"):
        assert cost(spec, 1000, 100) is None, spec
    priced = usage_of_call("openai:gpt-4o-mini", {"input_tokens": 1000, "output_tokens": 10})
    unpriced = usage_of_call("openai:my-local-model", {"input_tokens": 1000, "output_tokens": 10})
    assert priced["cost_usd"] > 0 and unpriced["cost_usd"] is None
    total = add_usage(priced, unpriced)
    assert total["cost_usd"] is None and total["model_calls"] == 2  # one unknown price: the total is unknown
    assert add_usage(priced, None)["cost_usd"] == priced["cost_usd"] and add_usage(None, None)["cost_usd"] == 0.0
    assert dollars(None) == "unpriced" and dollars(0.0) == "$0.0000"
